#!/usr/bin/env bash
# Installs what micoff's build, tests and demo need (apt, npm, cargo), and nothing when it is all
# there. Used by `npm test` (scripts/test.sh), `npm run demo` and `npm run package`. Options:
# --with-firefox, --firefox, --package, --package-only (what `npm run package` needs and nothing for
# the tests: the build's and the package tools), --fuzz-tools (nightly + cargo-fuzz for npm run
# bench:fuzz). As root or through `sudo -n`,
# else prints the command and exits 1; what it could not install is named at the end, and under CI a
# missing one a test needs exits 3.
# Environment: MICOFF_SKIP_APT=1; MICOFF_FIREFOX / MICOFF_XVFB (e2e/rig/paths.ts, xvfb.ts).
# The packages per option: docs/test-rig.md#ensure-deps-script.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'ensure-deps: %s\n' "$*" >&2; }

# --- apt ---------------------------------------------------------------------------------------------
APT_PACKAGES=(pulseaudio pulseaudio-utils libpulse-dev pkg-config chromium sysstat
  pipewire pipewire-pulse wireplumber pipewire-bin dbus)
# Installed when the archive has them; what is not is said at the end (and fails CI). `--with-firefox`
# (npm test): the Firefox e2e tests' browser, Xvfb for the spec that needs a headful Chromium (a
# headless page is always visible, so a background tab needs a real window), and Janus with its demos
# (janus.js) for the far end that watches the packets. `--firefox`: the browser alone, for
# `npm run demo -- --browser firefox|both`.
OPTIONAL_APT_PACKAGES=()
PACKAGE_TOOLS=0
FUZZ_TOOLS=0
for a in "$@"; do
  case $a in
    --with-firefox) OPTIONAL_APT_PACKAGES+=(firefox-esr xvfb janus janus-demos) ;;
    --firefox) OPTIONAL_APT_PACKAGES+=(firefox-esr) ;;
    --package)
      PACKAGE_TOOLS=1
      APT_PACKAGES+=(dpkg-dev lintian man-db musl-tools meson ninja-build cmake m4 zsh fish)
      ;;
    --package-only)
      PACKAGE_TOOLS=1
      APT_PACKAGES=(libpulse-dev pkg-config dpkg-dev lintian man-db musl-tools meson ninja-build cmake m4)
      ;;
    --fuzz-tools) FUZZ_TOOLS=1 ;;
    *)
      say "unknown option: $a (--with-firefox, --firefox, --package, --package-only, --fuzz-tools)"
      exit 2
      ;;
  esac
done
missing=()
optional=()
# Why an optional package is not being installed (said in the closing block when it is missing).
declare -A not_installed_why=()
# The archive has a candidate for $1 (from the package lists as they are now).
available() {
  local policy
  policy=$(apt-cache policy "$1" 2>/dev/null) || return 1
  [[ $policy == *"Candidate: "[0-9]* ]]
}
if [ "${MICOFF_SKIP_APT:-0}" = 1 ]; then
  for p in "${OPTIONAL_APT_PACKAGES[@]}"; do not_installed_why[$p]="MICOFF_SKIP_APT=1: apt was not asked"; done
else
  if ! command -v dpkg-query >/dev/null 2>&1; then
    say "not a Debian/Ubuntu system (no dpkg): install the equivalents of: ${APT_PACKAGES[*]}"
    for p in "${OPTIONAL_APT_PACKAGES[@]}"; do not_installed_why[$p]="not a Debian/Ubuntu system (no dpkg)"; done
  else
    installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'; }
    for p in "${APT_PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
    for p in "${OPTIONAL_APT_PACKAGES[@]}"; do installed "$p" || optional+=("$p"); done
    command -v cc >/dev/null 2>&1 || installed build-essential || missing+=(build-essential)
    command -v curl >/dev/null 2>&1 || missing+=(curl)
  fi
fi

# An optional package the current lists do not offer is left out, unless the lists get refreshed
# for a required one anyway (a fresh machine has no lists at all).
if ((${#missing[@]} == 0)) && ((${#optional[@]} > 0)); then
  offered=()
  for p in "${optional[@]}"; do
    if available "$p"; then offered+=("$p"); else not_installed_why[$p]="this system's package archive does not offer it (apt-cache policy: no candidate; Ubuntu's Firefox is a snap)"; fi
  done
  optional=("${offered[@]}")
fi

if ((${#missing[@]} + ${#optional[@]} > 0)); then
  # Ubuntu ships Chromium as a snap behind its deb; Debian's `chromium` is a real package.
  if [ "$(id -u)" = 0 ]; then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  elif ((${#missing[@]} == 0)); then
    for p in "${optional[@]}"; do
      not_installed_why[$p]="needs root (or password-less sudo): sudo apt-get install -y --no-install-recommends $p"
    done
    SUDO=(skip)
  else
    say "missing packages: ${missing[*]}"
    say "run this, then try again:"
    printf '  sudo apt-get update && sudo apt-get install -y --no-install-recommends %s\n' "${missing[*]} ${optional[*]}" >&2
    exit 1
  fi
  if [ "${SUDO[*]}" != skip ]; then
    export DEBIAN_FRONTEND=noninteractive
    "${SUDO[@]}" apt-get update -qq >&2
    for p in "${optional[@]}"; do
      if available "$p"; then missing+=("$p"); else not_installed_why[$p]="this system's package archive does not offer it (apt-cache policy: no candidate; Ubuntu's Firefox is a snap)"; fi
    done
    say "installing: ${missing[*]}"
    "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
    # Debian's janus starts a gateway on every interface: the tests start their own in a private
    # network namespace (e2e/rig/janus.ts), so the one the package just started is stopped, for good.
    if [[ " ${missing[*]} " == *" janus "* ]] && [ -d /run/systemd/system ]; then
      "${SUDO[@]}" systemctl disable --now janus.service >&2 &&
        say "janus: the package's system service is stopped and disabled (the tests start their own)"
    fi
  fi
fi

# --- npm ---------------------------------------------------------------------------------------------
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  say "node and npm are missing: install Node.js 20+ (e.g. https://nodejs.org or your distribution's nodejs)"
  exit 1
fi
if [ ! -d node_modules ] || [ ! -f node_modules/.package-lock.json ] ||
  [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # `npm install`, not `npm ci`: the npm 11 here writes lock files without the other platforms'
  # optional packages (e.g. @biomejs/cli-darwin-*), which `npm ci` then rejects as out of sync.
  # The versions still come from package-lock.json.
  say "npm install"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --loglevel=error >&2
fi

# --- cargo -------------------------------------------------------------------------------------------
if ! command -v cargo >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
  say "cargo is missing. Install Rust with rustup, then open a new shell (or source ~/.cargo/env):"
  printf "  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c clippy,rustfmt\n" >&2
  exit 1
fi

# --- the static build's Rust target (--package) -------------------------------------------------------
if [ "$PACKAGE_TOOLS" = 1 ] && command -v rustup >/dev/null 2>&1 &&
  ! rustup target list --installed 2>/dev/null | grep -qx x86_64-unknown-linux-musl; then
  say "adding the Rust target x86_64-unknown-linux-musl (the static micoff-host of npm run package)"
  if ! timeout --kill-after=30 600 rustup target add x86_64-unknown-linux-musl >&2; then
    say "COULD NOT add the Rust target x86_64-unknown-linux-musl: npm run package cannot build the static tarball (npm run package -- --no-static builds the rest)"
  fi
fi

# --- nightly + cargo-fuzz (--fuzz-tools: `npm run bench:fuzz`'s libFuzzer exploration) ------------
# npm test's fuzz run is the stable runner (native-host/fuzz/run-bounded.sh) and needs none of this.
# Bounded by MICOFF_NIGHTLY_INSTALL_TIMEOUT seconds (default 900) per step; a failure is said, not fatal.
fuzz_tools_why=""
if [ "$FUZZ_TOOLS" = 0 ]; then
  :
elif [ "${MICOFF_SKIP_NIGHTLY:-0}" = 1 ]; then
  fuzz_tools_why="MICOFF_SKIP_NIGHTLY=1"
elif ! command -v rustup >/dev/null 2>&1; then
  fuzz_tools_why="no rustup to install a nightly toolchain with"
else
  marker="${XDG_CACHE_HOME:-$HOME/.cache}/micoff/nightly-unavailable"
  limit=${MICOFF_NIGHTLY_INSTALL_TIMEOUT:-900}
  # bounded CMD...: CMD, ended with everything it started after $limit seconds (exit 124).
  bounded() { timeout --kill-after=30 "$limit" "$@"; }
  # A toolchain that does not answer --version within a minute counts as missing.
  probe() { timeout --kill-after=10 60 "$@" >/dev/null 2>&1; }
  if ! probe cargo +nightly --version && [ ! -e "$marker" ]; then
    say "installing the nightly toolchain for cargo-fuzz (rustup toolchain install nightly --profile minimal, at most $limit s)"
    if ! bounded rustup toolchain install nightly --profile minimal >&2; then
      mkdir -p "$(dirname "$marker")" && date >"$marker"
      say "the nightly toolchain could not be installed (failed or took over $limit s): the fuzz run uses the stable runner (remove $marker to retry)"
    fi
  fi
  nightly=no
  probe cargo +nightly --version && nightly=yes
  if [ $nightly = yes ] && ! probe cargo +nightly fuzz --version && [ ! -e "$marker.cargo-fuzz" ]; then
    say "installing cargo-fuzz (cargo install cargo-fuzz --locked; a few minutes, once; at most $limit s)"
    if ! bounded cargo install cargo-fuzz --locked >&2; then
      mkdir -p "$(dirname "$marker")" && date >"$marker.cargo-fuzz"
      say "cargo-fuzz could not be installed (failed or took over $limit s): the fuzz run uses the stable runner (remove $marker.cargo-fuzz to retry)"
    fi
  fi
  if [ $nightly = no ]; then
    fuzz_tools_why="the nightly toolchain could not be installed$([ -e "$marker" ] && echo " (an earlier attempt failed: remove $marker to retry)")"
  elif ! probe cargo +nightly fuzz --version; then
    fuzz_tools_why="cargo-fuzz could not be installed$([ -e "$marker.cargo-fuzz" ] && echo " (an earlier attempt failed: remove $marker.cargo-fuzz to retry)")"
  fi
fi

# --- what could not be installed ---------------------------------------------------------------------
# One block, last, where it is seen. What the e2e tests use is checked, not the package: the binaries
# at the paths the rig takes (MICOFF_FIREFOX and MICOFF_XVFB override them there and here).
unmet=()
for p in "${OPTIONAL_APT_PACKAGES[@]}"; do
  case $p in
    firefox-esr)
      bin=${MICOFF_FIREFOX:-/usr/bin/firefox-esr} override=${MICOFF_FIREFOX:+MICOFF_FIREFOX}
      for_what="the Firefox e2e tests, the demo's Firefox"
      ;;
    xvfb)
      bin=${MICOFF_XVFB:-$(command -v Xvfb || true)} override=${MICOFF_XVFB:+MICOFF_XVFB}
      for_what="the e2e test of a background tab (headful Chromium)"
      ;;
    janus)
      bin=/usr/bin/janus override=""
      for_what="the e2e test of a far end that watches the packets"
      ;;
    janus-demos)
      bin=/usr/share/javascript/janus-gateway/janus.js override=""
      for_what="the e2e test of a far end that watches the packets (janus.js)"
      ;;
  esac
  [ -n "$bin" ] && [ -r "$bin" ] && { [ "$p" = janus-demos ] || [ -x "$bin" ]; } && continue
  why=${not_installed_why[$p]:-}
  [ -z "$why" ] && [ -n "$override" ] && why="$override=$bin is not an executable"
  unmet+=("$p (${bin:-Xvfb}; for $for_what): ${why:-not installed}")
done
if ((${#unmet[@]} > 0)) || [ -n "$fuzz_tools_why" ]; then
  rule='------------------------------------------------------------------------------------'
  say "$rule"
  if ((${#unmet[@]} > 0)); then
    say "NOT INSTALLED (the tests that need it skip here, and FAIL under CI):"
    for u in "${unmet[@]}"; do say "  - $u"; done
  fi
  if [ -n "$fuzz_tools_why" ]; then
    say "NOT INSTALLED (the exploration uses the stable runner instead of libFuzzer):"
    say "  - nightly toolchain + cargo-fuzz: $fuzz_tools_why"
  fi
  say "$rule"
fi
if ((${#unmet[@]} > 0)) && [ -n "${CI:-}" ]; then
  say "CI is set: the tests above must run here, so this is a failure (exit 3)"
  exit 3
fi
exit 0
