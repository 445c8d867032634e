#!/usr/bin/env bash
# `npm run test:fresh`: CI's run (`CI=true bash .ci/run`) on a fresh clone of HEAD, as a machine that
# never ran it: in a private mount namespace where /tmp, /var/tmp, the machine's caches and HOME start
# empty, HOME holding only the Rust toolchains (rustup's, under a throwaway overlay). Packages stay the
# machine's (the suite's own scripts install what it needs). Needs root. What it keeps out and why:
# docs/test-rig.md#a-fresh-machine. Usage: scripts/fresh-run.sh [DIR] (default: a new folder beside
# the checkout); the run's log is DIR/run.log, its last line and time are printed at the end.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "fresh-run: needs root (mount namespaces)" >&2; exit 2; }
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
dir=${1:-$(dirname "$repo")/micoff-fresh-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$dir"
dir=$(realpath "$dir")
git clone -q "$repo" "$dir/clone"
git -C "$dir/clone" checkout -q "$(git -C "$repo" rev-parse HEAD)"
mkdir -p "$dir/home" "$dir/rustup-upper" "$dir/rustup-work"
# The Rust toolchain as rustup installs it on a new machine: its proxies in ~/.cargo/bin (not what
# `cargo install` added there), its toolchains in ~/.rustup (read through an overlay: a target or
# toolchain the run adds lands in DIR, not on the machine).
mkdir -p "$dir/home/.cargo/bin" "$dir/home/.rustup"
for f in "$HOME"/.cargo/bin/*; do
  if [ -L "$f" ] && [ "$(readlink "$f")" = rustup ] || [ "$(basename "$f")" = rustup ]; then
    cp -a "$f" "$dir/home/.cargo/bin/"
  fi
done
[ -f "$HOME/.cargo/env" ] && cp "$HOME/.cargo/env" "$dir/home/.cargo/"
echo "fresh-run: $(git -C "$dir/clone" log --oneline -1) in $dir" >&2
start=$SECONDS
rc=0
env -i PATH="$dir/home/.cargo/bin:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin" \
  HOME=/root LANG=C.UTF-8 CI=true FRESH_DIR="$dir" USER_RUSTUP="$HOME/.rustup" \
  unshare --mount --propagation private bash -euc '
    for d in /tmp /var/tmp /var/cache/fontconfig; do mount -t tmpfs -o mode=1777 tmpfs "$d"; done
    mount -t overlay overlay -o "lowerdir=$USER_RUSTUP,upperdir=$FRESH_DIR/rustup-upper,workdir=$FRESH_DIR/rustup-work" "$FRESH_DIR/home/.rustup"
    mount --rbind "$FRESH_DIR/home" /root
    cd "$FRESH_DIR/clone"
    exec bash .ci/run
  ' >"$dir/run.log" 2>&1 || rc=$?
took=$((SECONDS - start))
echo "fresh-run: $(tail -n 1 "$dir/run.log") (exit $rc) in $((took / 60)) min $((took % 60)) s; log: $dir/run.log" >&2
exit "$rc"
