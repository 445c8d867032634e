#!/usr/bin/env bash
# `npm test`: every check micoff has, in one run (deps, types and lints, unit tests, the bounded fuzz
# run, the host's Debian package, the Playwright e2e suite), each counted by scripts/test-tally.sh; the
# last line is `N passed (K on retry), N failed, N skipped` and the exit status is non-zero on any
# failure. The functional e2e lane runs first, alone; then the CPU lane beside the timing lane and the
# echo lane after it (e2e/lanes.ts), with the builds and unit tests at the idle scheduling class beside
# them; the time per group and the slowest specs end the run (e2e/artifacts/).
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

# in_background NAME CMD...: CMD (a function of this script) in a subshell with counters of its own,
# its counts, names and times kept in $LOG_DIR for `join_background NAME`.
declare -A bg_pids=()
in_background() {
  local name=$1
  shift
  (
    passed=0 failed=0 skipped=0 on_retry=0 failures=() retried=() skips=() spec_times=() group_times=()
    "$@"
    group_done
    printf '%s %s %s %s\n' "$passed" "$failed" "$skipped" "$on_retry" >"$LOG_DIR/bg-$name.counts"
    printf '%s\n' "${failures[@]}" >"$LOG_DIR/bg-$name.failures"
    printf '%s\n' "${retried[@]}" >"$LOG_DIR/bg-$name.retried"
    printf '%s\n' "${skips[@]}" >"$LOG_DIR/bg-$name.skips"
    printf '%s\n' "${spec_times[@]}" >"$LOG_DIR/bg-$name.times"
    printf '%s\n' "${group_times[@]}" >"$LOG_DIR/bg-$name.groups"
  ) &
  bg_pids[$name]=$!
}

# join_background NAME: waits for it and adds its counts, names and times to this run's.
join_background() {
  local name=$1 p f s r
  wait "${bg_pids[$name]}"
  if read -r p f s r <"$LOG_DIR/bg-$name.counts" 2>/dev/null; then
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s)) on_retry=$((on_retry + r))
    local dir="$LOG_DIR/bg-$name"
    mapfile -t -O "${#failures[@]}" failures < <(grep -v '^$' "$dir.failures")
    mapfile -t -O "${#retried[@]}" retried < <(grep -v '^$' "$dir.retried")
    mapfile -t -O "${#skips[@]}" skips < <(grep -v '^$' "$dir.skips")
    mapfile -t -O "${#spec_times[@]}" spec_times < <(grep -v '^$' "$dir.times")
    mapfile -t -O "${#group_times[@]}" group_times < <(grep -v '^$' "$dir.groups")
  else
    fail_one "$name: it ended without its counts"
  fi
}

# timed_lane LANE WHAT: one e2e lane, its wall time in the summary as WHAT.
timed_lane() {
  local t0=$SECONDS
  e2e_lane "$1"
  time_group "$2" $((SECONDS - t0))
}

# The builds and unit tests: run beside the CPU and timing lanes at the scheduler's idle class
# (SCHED_IDLE: they get a CPU only when no lane's process wants it, and give it up the moment one
# wakes), so the lanes keep the machine as if alone while the idle CPU does this work.
builds() {
  chrt --idle -p 0 "$BASHPID" >/dev/null 2>&1 || renice -n 19 -p "$BASHPID" >/dev/null 2>&1 || true
  if want static; then
    group "clippy, packaged extension lints (beside the CPU and timing lanes)"
    check "cargo clippy -D warnings" cargo clippy --workspace --all-targets --locked -- -D warnings
    check "npm run package + web-ext lint (packaged xpi)" bash -c 'set -e; npm run package --silent -- --no-build; v=$(node -p "require(\"./package.json\").version"); d=$(mktemp -d); trap "rm -rf $d" EXIT; unzip -q "dist/micoff-$v.xpi" -d "$d"; test -s "dist/micoff-$v-chrome.zip"; out=$(npx web-ext lint --source-dir "$d" --output json --boring 2>/dev/null); echo "$out"; node -e "const r=JSON.parse(process.argv[1]); if (r.summary.errors>0) process.exit(1)" "$out"'
    check "web-ext lint (firefox)" bash -c 'out=$(npx web-ext lint --source-dir dist/firefox --output json --boring 2>/dev/null); echo "$out"; node -e "const r=JSON.parse(process.argv[1]); if (r.summary.errors>0) process.exit(1)" "$out"'
  fi

  if want rust; then
    group "cargo test (beside the CPU and timing lanes)"
    say "cargo test (Rust unit and integration tests)"
    local log="$LOG_DIR/cargo-test.log" rc
    # The ignored tests are those that need root: as root they run.
    local as_root=()
    [ "$(id -u)" = 0 ] && as_root=(--include-ignored)
    cargo test --workspace --locked --no-fail-fast -- "${as_root[@]}" >"$log" 2>&1
    rc=$?
    grep -E '^(test result:|failures:|    [a-z_:]+$|test .* FAILED)' "$log" >&2
    count_cargo_log "$log" "$rc"
  fi

  if want ts; then
    group "TypeScript unit tests (beside the CPU and timing lanes)"
    say "TypeScript unit tests (node --test)"
    local ts_tests
    mapfile -t ts_tests < <(find extension scripts e2e -name '*.test.ts' -not -path '*/node_modules/*' 2>/dev/null | sort)
    local log="$LOG_DIR/ts-unit.log" rc
    if ((${#ts_tests[@]} == 0)); then
      count_from "ts unit tests" 0 0 0
    else
      node --import tsx --test --test-reporter=tap "${ts_tests[@]}" >"$log" 2>&1
      rc=$?
      grep -E '^(not ok|# (pass|fail|skip))' "$log" >&2
      count_tap_log "ts unit tests" "$log" "$rc"
    fi
  fi

  if want fuzz && [ -x native-host/fuzz/run-bounded.sh ]; then
    group "fuzz (bounded, beside the CPU and timing lanes)"
    check "fuzz (bounded)" native-host/fuzz/run-bounded.sh
    # How many inputs each target got.
    grep -E '^(fuzz:|[a-z_]+: [0-9?]+ executions)' "$LOG_DIR/fuzz__bounded_.log" >&2 || true
  fi

  if want package && ((host_built == 1)); then
    # The .deb as `npm run package` builds it (the static tarball is left out: its first build takes
    # minutes, docs/design/packaging.md), then what a user's dpkg would see (check-deb.mjs) and lintian.
    group "Debian package (beside the CPU and timing lanes)"
    check "npm run package --deb + check-deb + lintian" bash -c 'set -e; command -v lintian >/dev/null || { echo "lintian is not installed"; exit 1; }; npm run package --silent -- --no-build --no-xpi --no-crx --deb; v=$(node -p "require(\"./package.json\").version"); node scripts/host-package/check-deb.mjs dist/micoff-host_"$v"-*_amd64.deb'
  fi
}

# builds_done: waits until the builds beside the lanes have ended (their counts written, or their
# subshell gone), and says how long it waited.
builds_done() {
  local t0=$SECONDS pid=${bg_pids[builds]:-}
  while [ ! -e "$LOG_DIR/bg-builds.counts" ] && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; do
    sleep 2
  done
  ((SECONDS - t0 > 0)) && say "the echo lane waited $((SECONDS - t0)) s for the builds"
  return 0
}

# The timing lane, then the echo lane once the builds are done: beside them the echo specs needed
# release-echo's second stage in r18-r21 and capture-latency-aec its retry in r22 (docs/test-rig.md#lanes).
timing_then_echo() {
  timed_lane timing "e2e timing lane (beside the CPU lane)"
  builds_done
  timed_lane echo "e2e echo lane (after the timing lane and the builds, beside the CPU lane)"
}

# First the functional e2e lane, alone (its specs mostly wait on browsers and audio servers, several at
# a time); then the CPU lane beside the timing lane and the echo lane after it, with the builds and unit
# tests in the idle time.
group_done
if want e2e && ((host_built == 0)); then
  fail_one "e2e: not run, the host did not build (above)"
elif want e2e; then
  say "Playwright e2e, functional lane"
  timed_lane functional "e2e functional lane"
fi
in_background builds builds
if want e2e && ((host_built == 1)); then
  say "Playwright e2e, CPU lane beside the timing lane, then the echo lane (one spec each at a time), the builds beside them"
  in_background timing timing_then_echo
  timed_lane cpu "e2e CPU lane"
  join_background timing
fi
join_background builds
time_group "npm test in all" $((SECONDS - run_t0))

print_times "$ART/durations.tsv"
print_summary
