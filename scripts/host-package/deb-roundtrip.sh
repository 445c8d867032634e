#!/usr/bin/env bash
# deb-roundtrip.sh DEB: installs the micoff-host .deb for real, upgrades it to a newer build, removes
# and purges it, inside a private mount namespace whose /usr, /etc and /var are overlays with a tmpfs
# upper layer: dpkg, its database and every file it writes live only in the namespace, the machine is
# untouched. Root only (unshare, mount). Prints each step; exits 1 on the first failed check.
#
# Checks (docs/design/packaging.md "The Debian package"):
#   - a foreign manifest (another host's, as another package or a person would have it) sits in
#     /etc/chromium/native-messaging-hosts/ before, and is the same bytes at every step;
#   - after `dpkg -i`: the three system manifests resolve to JSON naming /usr/bin/micoff-host, which
#     runs and says the package's version;
#   - after `dpkg -i` of a newer build (the same package, version +1, one man page dropped): dpkg
#     says the new version and the dropped file is gone;
#   - after `dpkg -r`, and again after `dpkg -P`: the watched folders are byte for byte as before
#     (every entry's path, type, mode, owner, link target, and each file's sha256);
#   - with /etc/opt removed first: dpkg -i works (the preinst makes /etc/opt as base-files does),
#     and after purge /etc/opt is the only difference.
# The newer build is made here from DEB's own members (control Version raised, a file dropped).
set -euo pipefail

DEB=$(readlink -f "${1:?usage: deb-roundtrip.sh micoff-host_<version>_amd64.deb}")
[ "$(id -u)" = 0 ] || {
  echo "deb-roundtrip: needs root (a private mount namespace)" >&2
  exit 2
}

# Outside: a mount point for the namespace's tmpfs, removed (empty: the tmpfs was never seen here)
# after the run inside.
if [ -z "${MICOFF_ROUNDTRIP_WORK:-}" ]; then
  work=$(mktemp -d /tmp/micoff-deb-roundtrip.XXXXXX)
  rc=0
  unshare --mount --propagation private env MICOFF_ROUNDTRIP_WORK="$work" bash "$0" "$DEB" || rc=$?
  rmdir "$work"
  exit "$rc"
fi

WORK=$MICOFF_ROUNDTRIP_WORK
mount -t tmpfs tmpfs "$WORK"
for top in usr etc var; do
  mkdir -p "$WORK/$top/upper" "$WORK/$top/work"
  mount -t overlay overlay -o "lowerdir=/$top,upperdir=$WORK/$top/upper,workdir=$WORK/$top/work" "/$top"
done

WATCH=(/usr/bin /etc/chromium /etc/opt /usr/lib/mozilla /usr/share/micoff-host /usr/share/doc
  /usr/share/man/man1 /usr/share/bash-completion/completions /usr/share/zsh/vendor-completions
  /usr/share/fish/vendor_completions.d /usr/share/lintian/overrides)
# The watched folders as they are: one line per entry (at most two levels deep: path, type, mode,
# owner, link target) and per file's sha256. A folder's size is left out: it is the file system's
# bookkeeping (the overlay reports its own), not content.
snapshot() {
  for d in "${WATCH[@]}"; do
    if [ -e "$d" ]; then
      find "$d" -maxdepth 2 -printf '%p %y %m %u:%g %l\n' | LC_ALL=C sort
      find "$d" -maxdepth 2 -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
    else
      echo "absent $d"
    fi
  done
}
fail() {
  echo "deb-roundtrip: FAIL: $*" >&2
  exit 1
}
step() { printf 'deb-roundtrip: %s\n' "$*"; }
same_as_before() {
  snapshot >"$WORK/now"
  diff -u "$WORK/before" "$WORK/now" >&2 || fail "$1: the watched folders differ from before (diff above)"
  step "$1: the watched folders are byte for byte as before"
}

# Another host's manifest, already there: must never be touched.
FOREIGN=/etc/chromium/native-messaging-hosts/org.example.other.json
mkdir -p "$(dirname "$FOREIGN")"
printf '{"name":"org.example.other","path":"/opt/other/host","type":"stdio","allowed_origins":[]}\n' >"$FOREIGN"
foreign_sum=$(sha256sum "$FOREIGN")
foreign_same() { [ "$(sha256sum "$FOREIGN" 2>/dev/null)" = "$foreign_sum" ] || fail "$1: $FOREIGN changed"; }

snapshot >"$WORK/before"
version=$(dpkg-deb -f "$DEB" Version)
upstream=${version%-*}

# The newer build: the same members, Version's Debian revision +1, one man page fewer. Made by
# editing DEB's members (not by dpkg-deb -R/-b, which would list folders the package leaves out).
newer="$WORK/newer"
mkdir -p "$newer/control"
(cd "$newer" && ar x "$DEB" && xz -d control.tar.xz data.tar.xz)
dropped=usr/share/man/man1/micoff-host-top.1.gz
tar -tf "$newer/data.tar" | grep -x "./$dropped" >/dev/null || fail "the package has no /$dropped to drop"
tar --delete -f "$newer/data.tar" "./$dropped"
tar -xf "$newer/control.tar" -C "$newer/control"
sed -i "\| $dropped\$|d" "$newer/control/md5sums"
newer_version="$upstream-$((${version##*-} + 1))"
sed -i "s/^Version: .*/Version: $newer_version/" "$newer/control/control"
tar --owner=root:0 --group=root:0 -C "$newer/control" -cf "$newer/control.tar" ./
(cd "$newer" && xz control.tar data.tar && ar rc "$WORK/newer.deb" debian-binary control.tar.xz data.tar.xz)
[ "$(dpkg-deb -f "$WORK/newer.deb" Version)" = "$newer_version" ] || fail "the newer build says no $newer_version"

step "dpkg -i $(basename "$DEB")"
dpkg -i "$DEB" >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "dpkg -i"; }
for m in /etc/chromium/native-messaging-hosts/org.micoff.host.json \
  /etc/opt/chrome/native-messaging-hosts/org.micoff.host.json \
  /usr/lib/mozilla/native-messaging-hosts/org.micoff.host.json; do
  [ -f "$m" ] || fail "dpkg -i: $m missing or dangling"
  grep -q '"path": "/usr/bin/micoff-host"' "$m" || fail "dpkg -i: $m does not name /usr/bin/micoff-host"
done
[ "$(/usr/bin/micoff-host --version)" = "micoff-host $upstream" ] || fail "dpkg -i: micoff-host --version"
foreign_same "dpkg -i"
step "dpkg -i: manifests in place, micoff-host $upstream runs, the foreign manifest untouched"

step "dpkg -i newer build ($newer_version)"
dpkg -i "$WORK/newer.deb" >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "upgrade"; }
[ "$(dpkg-query -W -f='${Version}' micoff-host)" = "$newer_version" ] || fail "upgrade: dpkg does not say $newer_version"
[ ! -e "/$dropped" ] || fail "upgrade: /$dropped, gone from the newer build, is still there"
foreign_same "upgrade"
step "upgrade: $newer_version installed, the file it dropped is gone"

step "dpkg -r micoff-host"
dpkg -r micoff-host >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "dpkg -r"; }
foreign_same "dpkg -r"
same_as_before "dpkg -r"

step "dpkg -P micoff-host"
dpkg -P micoff-host >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "dpkg -P"; }
dpkg-query -W micoff-host >/dev/null 2>&1 && fail "dpkg -P: dpkg still knows micoff-host"
foreign_same "dpkg -P"
same_as_before "dpkg -P"

# Where someone removed /etc/opt (base-files makes it; the package does not list it), the preinst
# makes it again so that dpkg can unpack /etc/opt/chrome/; it stays after purge, as base-files wants.
rmdir /etc/opt
snapshot >"$WORK/before"
step "without /etc/opt: dpkg -i, dpkg -P"
dpkg -i "$DEB" >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "dpkg -i without /etc/opt"; }
[ -f /etc/opt/chrome/native-messaging-hosts/org.micoff.host.json ] || fail "without /etc/opt: no Chrome manifest"
dpkg -P micoff-host >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "dpkg -P"; }
snapshot >"$WORK/now"
[ "$(diff "$WORK/before" "$WORK/now" | grep '^[<>]')" = "$(printf '< absent /etc/opt\n> /etc/opt d 755 root:root ')" ] ||
  fail "without /etc/opt: after purge more differs than /etc/opt (made as base-files makes it)"
step "without /etc/opt: installed, and after purge only /etc/opt is new (755 root:root, empty)"
step "ok"
