#!/usr/bin/env bash
# `npm test`: every check micoff has, in one run (deps, types and lints, unit tests, the bounded fuzz
# run, the host's Debian package, the Playwright e2e suite), each counted by scripts/test-tally.sh; the
# last line is `N passed (K on retry), N failed, N skipped` and the exit status is non-zero on any
# failure. Under CI what a test needs from the machine must be there (missing = failure).
# Options (environment):
#   MICOFF_TEST_ONLY=static,rust,ts,fuzz,package,e2e   run only these groups (default: all)
#   MICOFF_E2E_GREP=regex                              pass --grep to Playwright
# More: docs/test-rig.md#npm-test-script.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ART="$ROOT/e2e/artifacts"
mkdir -p "$ART"
LOG_DIR="$ART/test-logs"
rm -rf "$LOG_DIR"
mkdir -p "$LOG_DIR"

# shellcheck source=scripts/test-tally.sh
source scripts/test-tally.sh
only=",${MICOFF_TEST_ONLY:-static,rust,ts,fuzz,package,e2e},"
want() { [[ $only == *",$1,"* ]]; }

say() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }

# check NAME CMD...: one pass/fail for a whole command (lints, builds).
check() {
  local name=$1
  shift
  say "$name"
  local log="$LOG_DIR/${name//[^A-Za-z0-9_.-]/_}.log"
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1))
    printf 'ok   %s\n' "$name" >&2
  else
    failed=$((failed + 1))
    failures+=("$name")
    tail -n 60 "$log" >&2
    printf 'FAIL %s (log: %s)\n' "$name" "$log" >&2
  fi
}

say "dependencies"
deps_rc=0
bash scripts/ensure-deps.sh --with-firefox --package || deps_rc=$?
if ((deps_rc == 3)); then
  # Under CI, something the tests need could not be installed (its block is above): a failure; the
  # tests that need it fail in turn.
  fail_one "dependencies: not everything the tests need is installed (CI; see ensure-deps above)"
elif ((deps_rc != 0)); then
  echo "scripts/ensure-deps.sh failed: cannot run the tests without their dependencies" >&2
  summary_line 0 1
  exit 1
fi
# cargo installed by rustup lives here when the shell did not source its env.
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
export PATH

if want static; then
  check "tsc --noEmit" npx tsc --noEmit
  check "biome check" npx biome check .
  check "cargo fmt --check" cargo fmt --all --check
  check "cargo clippy -D warnings" cargo clippy --workspace --all-targets --locked -- -D warnings
  check "npm run build" npm run build --silent
  check "npm run package + web-ext lint (packaged xpi)" bash -c 'set -e; npm run package --silent -- --no-build; v=$(node -p "require(\"./package.json\").version"); d=$(mktemp -d); trap "rm -rf $d" EXIT; unzip -q "dist/micoff-$v.xpi" -d "$d"; test -s "dist/micoff-$v-chrome.zip"; out=$(npx web-ext lint --source-dir "$d" --output json --boring 2>/dev/null); echo "$out"; node -e "const r=JSON.parse(process.argv[1]); if (r.summary.errors>0) process.exit(1)" "$out"'
  check "web-ext lint (firefox)" bash -c 'out=$(npx web-ext lint --source-dir dist/firefox --output json --boring 2>/dev/null); echo "$out"; node -e "const r=JSON.parse(process.argv[1]); if (r.summary.errors>0) process.exit(1)" "$out"'
fi

if want rust; then
  say "cargo test (Rust unit and integration tests)"
  log="$LOG_DIR/cargo-test.log"
  # The ignored tests are those that need root: as root they run.
  as_root=()
  [ "$(id -u)" = 0 ] && as_root=(--include-ignored)
  cargo test --workspace --locked --no-fail-fast -- "${as_root[@]}" 2>&1 | tee "$log" >&2
  rc=${PIPESTATUS[0]}
  count_cargo_log "$log" "$rc"
fi

if want ts; then
  say "TypeScript unit tests (node --test)"
  mapfile -t ts_tests < <(find extension scripts e2e/rig -name '*.test.ts' -not -path '*/node_modules/*' 2>/dev/null | sort)
  log="$LOG_DIR/ts-unit.log"
  if ((${#ts_tests[@]} == 0)); then
    count_from "ts unit tests" 0 0 0
  else
    node --import tsx --test --test-reporter=tap "${ts_tests[@]}" >"$log" 2>&1
    rc=$?
    grep -E '^(not ok|# (pass|fail|skip))' "$log" >&2
    count_tap_log "ts unit tests" "$log" "$rc"
  fi
fi

if want fuzz; then
  if [ -x native-host/fuzz/run-bounded.sh ]; then
    check "fuzz (bounded)" native-host/fuzz/run-bounded.sh
    # Which runner ran and how many inputs each target got.
    grep -E '^(fuzz:|[a-z_]+: [0-9?]+ executions)' "$LOG_DIR/fuzz__bounded_.log" >&2 || true
  fi
fi

if want package; then
  # The .deb as `npm run package` builds it (the static tarball is left out: its first build takes
  # minutes, docs/design/packaging.md), then what a user's dpkg would see (check-deb.mjs) and lintian
  # (the package step fails on a lintian error; here lintian must be there).
  check "cargo build --release (micoff-host, micoff-dist)" cargo build --release --locked -p micoff-host -p micoff-dist
  check "npm run package --deb + check-deb + lintian" bash -c 'set -e; command -v lintian >/dev/null || { echo "lintian is not installed"; exit 1; }; npm run package --silent -- --no-build --no-xpi --deb; v=$(node -p "require(\"./package.json\").version"); node scripts/host-package/check-deb.mjs dist/micoff-host_"$v"-*_amd64.deb'
fi

if want e2e; then
  # micoff-dist too: deb-package.spec.ts packs the .deb (man pages and completions come from it).
  check "cargo build --release" cargo build --release --locked -p micoff-host -p micoff-dist
  say "Playwright e2e on the real-audio rig"
  json="$ART/results.json"
  rm -f "$json"
  grep_args=()
  [ -n "${MICOFF_E2E_GREP:-}" ] && grep_args=(--grep "$MICOFF_E2E_GREP")
  PLAYWRIGHT_JSON_OUTPUT_NAME="$json" npx playwright test -c e2e --reporter=list,json "${grep_args[@]}" >&2
  rc=$?
  count_playwright_json "$json" "$rc"
fi

print_summary
