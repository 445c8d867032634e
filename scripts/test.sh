#!/usr/bin/env bash
# `npm test`: every check micoff has, in one run (deps, types and lints, unit tests, the bounded fuzz
# run, the host's Debian package, the Playwright e2e suite), each counted by scripts/test-tally.sh; the
# last line is `N passed (K on retry), N failed, N skipped` and the exit status is non-zero on any
# failure. The functional e2e lane runs beside the builds and unit tests, then the CPU lane beside the
# timing lane (e2e/lanes.ts); the time per group and the slowest specs end the run (e2e/artifacts/).
# Options: MICOFF_TEST_ONLY=static,rust,ts,fuzz,package,e2e; MICOFF_E2E_GREP=regex.
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

# group NAME: start timing a group; the next `group` (or `group_done`) ends it.
group_name=""
group_t0=0
group() {
  group_done
  group_name=$1
  group_t0=$SECONDS
}
group_done() {
  [ -n "$group_name" ] && time_group "$group_name" $((SECONDS - group_t0))
  group_name=""
}

run_t0=$SECONDS
group "dependencies"
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

# e2e_lane LANE: one lane of the Playwright suite (e2e/lanes.ts), its JSON report counted.
e2e_lane() {
  local lane=$1 json="$ART/results-$1.json" rc grep_args=()
  rm -f "$json"
  [ -n "${MICOFF_E2E_GREP:-}" ] && grep_args=(--grep "$MICOFF_E2E_GREP" --pass-with-no-tests)
  MICOFF_E2E_LANE=$lane PLAYWRIGHT_JSON_OUTPUT_NAME="$json" \
    npx playwright test -c e2e --reporter=list,json "${grep_args[@]}" >&2
  rc=$?
  # A grep that picks no spec of this lane: nothing to count (without a grep, no test is a failure).
  if ((${#grep_args[@]} > 0)) && [ -f "$json" ] &&
    node -e 'const s=JSON.parse(require("fs").readFileSync(process.argv[1])).stats; process.exit(s.expected+s.unexpected+s.flaky+s.skipped>0?1:0)' "$json"; then
    return
  fi
  count_playwright_json "$json" "$rc"
}

if want static; then
  group "types, lints, build"
  check "tsc --noEmit" npx tsc --noEmit
  check "biome check" npx biome check .
  check "cargo fmt --check" cargo fmt --all --check
  check "npm run build" npm run build --silent
fi

# The host the e2e suite and the package use (micoff-dist: the man pages and completions).
host_built=0
if want e2e || want package; then
  group "cargo build --release"
  failed_before=$failed
  check "cargo build --release (micoff-host, micoff-dist)" cargo build --release --locked -p micoff-host -p micoff-dist
  ((failed == failed_before)) && host_built=1
fi

# e2e_lane_bg LANE: e2e_lane in the background, its counts kept for e2e_lane_join.
e2e_lane_bg() {
  local lane=$1
  (
    local t0=$SECONDS
    passed=0 failed=0 skipped=0 on_retry=0 failures=() retried=() skips=() spec_times=()
    e2e_lane "$lane"
    printf '%s %s %s %s %s\n' "$passed" "$failed" "$skipped" "$on_retry" $((SECONDS - t0)) >"$LOG_DIR/e2e-$lane.counts"
    printf '%s\n' "${failures[@]}" >"$LOG_DIR/e2e-$lane.failures"
    printf '%s\n' "${retried[@]}" >"$LOG_DIR/e2e-$lane.retried"
    printf '%s\n' "${skips[@]}" >"$LOG_DIR/e2e-$lane.skips"
    printf '%s\n' "${spec_times[@]}" >"$LOG_DIR/e2e-$lane.times"
  ) &
  e2e_pids[$lane]=$!
}

# e2e_lane_join LANE WHAT: waits for a background lane and adds its counts (WHAT names its time).
e2e_lane_join() {
  local lane=$1 what=$2 p f s r took
  wait "${e2e_pids[$lane]}"
  if read -r p f s r took <"$LOG_DIR/e2e-$lane.counts" 2>/dev/null; then
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s)) on_retry=$((on_retry + r))
    mapfile -t -O "${#failures[@]}" failures < <(grep -v '^$' "$LOG_DIR/e2e-$lane.failures")
    mapfile -t -O "${#retried[@]}" retried < <(grep -v '^$' "$LOG_DIR/e2e-$lane.retried")
    mapfile -t -O "${#skips[@]}" skips < <(grep -v '^$' "$LOG_DIR/e2e-$lane.skips")
    mapfile -t -O "${#spec_times[@]}" spec_times < <(grep -v '^$' "$LOG_DIR/e2e-$lane.times")
    time_group "$what" "$took"
  else
    fail_one "e2e $lane lane: it ended without its counts"
  fi
}

# The functional e2e lane in the background: its specs mostly wait on browsers and audio servers, so
# the builds and unit tests below share the machine with it, at a lower priority.
declare -A e2e_pids=()
run_e2e=0
if want e2e && ((host_built == 0)); then
  fail_one "e2e: not run, the host did not build (above)"
elif want e2e; then
  run_e2e=1
  say "Playwright e2e, functional lane (in the background; its lines come as they pass)"
  e2e_lane_bg functional
fi
nice_=(nice -n 10)

if want static; then
  group "clippy, packaged extension lints"
  check "cargo clippy -D warnings" "${nice_[@]}" cargo clippy --workspace --all-targets --locked -- -D warnings
  check "npm run package + web-ext lint (packaged xpi)" bash -c 'set -e; npm run package --silent -- --no-build; v=$(node -p "require(\"./package.json\").version"); d=$(mktemp -d); trap "rm -rf $d" EXIT; unzip -q "dist/micoff-$v.xpi" -d "$d"; test -s "dist/micoff-$v-chrome.zip"; out=$(npx web-ext lint --source-dir "$d" --output json --boring 2>/dev/null); echo "$out"; node -e "const r=JSON.parse(process.argv[1]); if (r.summary.errors>0) process.exit(1)" "$out"'
  check "web-ext lint (firefox)" bash -c 'out=$(npx web-ext lint --source-dir dist/firefox --output json --boring 2>/dev/null); echo "$out"; node -e "const r=JSON.parse(process.argv[1]); if (r.summary.errors>0) process.exit(1)" "$out"'
fi

if want rust; then
  group "cargo test"
  say "cargo test (Rust unit and integration tests)"
  log="$LOG_DIR/cargo-test.log"
  # The ignored tests are those that need root: as root they run.
  as_root=()
  [ "$(id -u)" = 0 ] && as_root=(--include-ignored)
  "${nice_[@]}" cargo test --workspace --locked --no-fail-fast -- "${as_root[@]}" >"$log" 2>&1
  rc=$?
  grep -E '^(test result:|failures:|    [a-z_:]+$|test .* FAILED)' "$log" >&2
  count_cargo_log "$log" "$rc"
fi

if want ts; then
  group "TypeScript unit tests"
  say "TypeScript unit tests (node --test)"
  mapfile -t ts_tests < <(find extension scripts e2e -name '*.test.ts' -not -path '*/node_modules/*' 2>/dev/null | sort)
  log="$LOG_DIR/ts-unit.log"
  if ((${#ts_tests[@]} == 0)); then
    count_from "ts unit tests" 0 0 0
  else
    "${nice_[@]}" node --import tsx --test --test-reporter=tap "${ts_tests[@]}" >"$log" 2>&1
    rc=$?
    grep -E '^(not ok|# (pass|fail|skip))' "$log" >&2
    count_tap_log "ts unit tests" "$log" "$rc"
  fi
fi

if want fuzz; then
  if [ -x native-host/fuzz/run-bounded.sh ]; then
    group "fuzz (bounded)"
    check "fuzz (bounded)" "${nice_[@]}" native-host/fuzz/run-bounded.sh
    # How many inputs each target got.
    grep -E '^(fuzz:|[a-z_]+: [0-9?]+ executions)' "$LOG_DIR/fuzz__bounded_.log" >&2 || true
  fi
fi

if want package && ((host_built == 1)); then
  # The .deb as `npm run package` builds it (the static tarball is left out: its first build takes
  # minutes, docs/design/packaging.md), then what a user's dpkg would see (check-deb.mjs) and lintian.
  group "Debian package"
  check "npm run package --deb + check-deb + lintian" "${nice_[@]}" bash -c 'set -e; command -v lintian >/dev/null || { echo "lintian is not installed"; exit 1; }; npm run package --silent -- --no-build --no-xpi --no-crx --deb; v=$(node -p "require(\"./package.json\").version"); node scripts/host-package/check-deb.mjs dist/micoff-host_"$v"-*_amd64.deb'
fi
group_done

if ((run_e2e == 1)); then
  e2e_lane_join functional "e2e functional lane (beside the groups above)"
  # The CPU specs one at a time, beside the timing specs two at a time, and nothing else.
  say "Playwright e2e, CPU lane (one spec at a time) beside the timing lane (two at a time)"
  e2e_lane_bg timing
  group "e2e CPU lane"
  e2e_lane cpu
  group_done
  e2e_lane_join timing "e2e timing lane (beside the CPU lane)"
fi
time_group "npm test in all" $((SECONDS - run_t0))

print_times "$ART/durations.tsv"
print_summary
