#!/usr/bin/env bash
# libpulse-musl.sh WORK_DIR: PulseAudio's client library as static musl libraries, for the static
# micoff-host (scripts/host-package/static.mjs). Writes WORK_DIR/prefix/lib/{libpulse.a,
# libpulsecommon-<v>.a,libsndfile.a}, lib/pkgconfig/libpulse.pc and prefix/SOURCES, from Debian's
# sources fetched through apt with private lists; nothing else of the machine changes; idempotent.
# Tools: musl-gcc (musl-tools), meson, ninja, cmake, m4, pkg-config, dpkg-source (dpkg-dev), apt.
# How it is configured and why: docs/design/packaging.md#libpulse-musl-recipe.
set -euo pipefail

WORK=${1:?usage: libpulse-musl.sh WORK_DIR}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
PREFIX="$WORK/prefix"
SUITE=${MICOFF_LIBPULSE_SUITE:-bookworm}
say() { printf 'libpulse-musl: %s\n' "$*" >&2; }
# logged NAME CMD...: CMD's output into WORK/NAME.log, its tail shown when it fails.
logged() {
  local log="$WORK/$1.log"
  shift
  "$@" >"$log" 2>&1 || {
    tail -n 30 "$log" >&2
    say "failed: $* (log: $log)"
    exit 1
  }
}

recipe=$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)
if [ -f "$PREFIX/.recipe" ] && [ "$(cat "$PREFIX/.recipe")" = "$recipe $SUITE" ] &&
  [ -f "$PREFIX/lib/libpulse.a" ]; then
  say "up to date ($PREFIX)"
  exit 0
fi
for tool in musl-gcc meson ninja cmake m4 pkg-config dpkg-source apt-get; do
  command -v "$tool" >/dev/null || {
    say "missing $tool: run bash scripts/ensure-deps.sh --package"
    exit 1
  }
done

# --- sources: Debian's source packages, through apt with private lists ------------------------------
APT_DIR="$WORK/apt"
rm -rf "$APT_DIR" "$WORK/src"
mkdir -p "$APT_DIR/parts" "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial" "$WORK/src"
cat >"$APT_DIR/parts/debian-src.sources" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $SUITE
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
apt_private=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$APT_DIR/parts"
  -o "Dir::State::Lists=$APT_DIR/lists" -o "Dir::Cache=$APT_DIR/cache" -o "APT::Sandbox::User=root")
say "fetching the source packages pulseaudio and libsndfile ($SUITE) through apt"
apt-get "${apt_private[@]}" -qq update >&2
(cd "$WORK/src" && apt-get "${apt_private[@]}" -qq source pulseaudio libsndfile >&2)
pa_src=$(find "$WORK/src" -maxdepth 1 -type d -name 'pulseaudio-*' | head -1)
sf_src=$(find "$WORK/src" -maxdepth 1 -type d -name 'libsndfile-*' | head -1)
[ -n "$pa_src" ] && [ -n "$sf_src" ] || {
  say "apt-get source did not unpack pulseaudio and libsndfile"
  exit 1
}

# musl-gcc sees only musl's headers; PulseAudio also needs the kernel's (linux/, asm/).
KINC="$WORK/kernel-include"
rm -rf "$KINC" && mkdir -p "$KINC"
for d in linux asm-generic; do ln -s "/usr/include/$d" "$KINC/$d"; done
ln -s "/usr/include/$(gcc -dumpmachine)/asm" "$KINC/asm"

rm -rf "$PREFIX"
mkdir -p "$PREFIX/lib/pkgconfig"

# --- libsndfile ---------------------------------------------------------------------------------------
say "building $(basename "$sf_src") (static, musl)"
CC=musl-gcc CFLAGS="-O2 -fPIC" logged sndfile-configure cmake -S "$sf_src" -B "$WORK/build-sndfile" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_INSTALL_LIBDIR=lib \
  -DBUILD_SHARED_LIBS=OFF -DENABLE_EXTERNAL_LIBS=OFF -DENABLE_MPEG=OFF -DBUILD_PROGRAMS=OFF \
  -DBUILD_EXAMPLES=OFF -DBUILD_TESTING=OFF -DBUILD_REGTEST=OFF -DENABLE_CPACK=OFF \
  -DINSTALL_MANPAGES=OFF
logged sndfile-build ninja -C "$WORK/build-sndfile" install

# --- libpulse -----------------------------------------------------------------------------------------
say "building $(basename "$pa_src") client library (static, musl)"
# The client libraries are shared_library() in PulseAudio's meson files; library() lets
# default_library=static make them archives.
sed -i 's/= shared_library(/= library(/' "$pa_src/src/meson.build" "$pa_src/src/pulse/meson.build"
cat >"$WORK/musl-cross.ini" <<'EOF'
[binaries]
c = 'musl-gcc'
cpp = 'g++'
ar = 'ar'
strip = 'strip'
pkgconfig = 'pkg-config'
[host_machine]
system = 'linux'
cpu_family = 'x86_64'
cpu = 'x86_64'
endian = 'little'
EOF
off=()
for f in alsa asyncns avahi bluez5 bluez5-gstreamer dbus elogind fftw glib gsettings gstreamer gtk \
  jack lirc openssl orc oss-output samplerate soxr speex systemd tcpwrap udev valgrind x11 webrtc-aec; do
  off+=("-D$f=disabled")
done
PKG_CONFIG_LIBDIR="$PREFIX/lib/pkgconfig" logged pulse-configure meson setup "$WORK/build-pulse" "$pa_src" \
  --cross-file "$WORK/musl-cross.ini" -Ddefault_library=static -Dbuildtype=release \
  --prefix=/usr --sysconfdir=/etc --localstatedir=/var --libdir=lib \
  -Dc_args="-I$KINC -fPIC" -Ddaemon=false -Dclient=true -Ddoxygen=false -Dgcov=false -Dman=false \
  -Dtests=false -Ddatabase=simple "${off[@]}"
pa_version=$(meson introspect --projectinfo "$WORK/build-pulse" |
  sed -n 's/.*"version": *"\([0-9]*\.[0-9]*\)[".].*/\1/p')
common="libpulsecommon-$pa_version.a"
logged pulse-build ninja -C "$WORK/build-pulse" src/pulse/libpulse.a "src/$common"
cp "$WORK/build-pulse/src/pulse/libpulse.a" "$WORK/build-pulse/src/$common" "$PREFIX/lib/"

# What libpulse-sys probes (`libpulse`, version >= its feature's). Libs.private lists the archives
# the static link needs; musl's libc.a holds libm, libpthread, librt and libdl, so none is named.
cat >"$PREFIX/lib/pkgconfig/libpulse.pc" <<EOF
libdir=$PREFIX/lib
Name: libpulse
Description: PulseAudio client library, static for musl (scripts/host-package/libpulse-musl.sh)
Version: $pa_version
Libs: -L\${libdir} -lpulse
Libs.private: -lpulsecommon-$pa_version -lsndfile
EOF

{
  for dsc in "$WORK"/src/*.dsc; do
    sed -n 's/^Source: //p; s/^Version: //p' "$dsc" | paste -sd' '
  done
} >"$PREFIX/SOURCES"
for lic in LICENSE LGPL; do cp "$pa_src/$lic" "$PREFIX/pulseaudio-$lic"; done
cp "$sf_src/COPYING" "$PREFIX/libsndfile-COPYING"
echo "$recipe $SUITE" >"$PREFIX/.recipe"
say "done: $(paste -sd, "$PREFIX/SOURCES") in $PREFIX"
