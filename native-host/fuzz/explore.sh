#!/usr/bin/env bash
# `npm run bench:fuzz`: open-ended exploration of every fuzz target, libFuzzer (cargo-fuzz, nightly)
# when there, else the stable runner, MICOFF_FUZZ_SECONDS per target (default 20); the corpus grows in
# corpus/<target>/. A crash or hang fails it; add what it finds to seeds/<target>/ as regression-<what>
# so npm test's reproducible run (run-bounded.sh) tries it every time. Every step is time-bounded and
# a broken toolchain falls back to the stable runner: docs/design/security.md#fuzzing.
set -euo pipefail
cd "$(dirname "$0")"
FUZZ_DIR=$PWD
SECONDS_PER_TARGET=${MICOFF_FUZZ_SECONDS:-20}
BUILD_TIMEOUT=${MICOFF_FUZZ_BUILD_TIMEOUT:-900}
RUN_SLACK=${MICOFF_FUZZ_RUN_SLACK:-300}
INPUT_TIMEOUT=${MICOFF_FUZZ_INPUT_TIMEOUT:-10}
# A toolchain that does not answer its --version within this is as good as missing.
PROBE_TIMEOUT=60
TARGETS=(proc_parsers doctor_parsers request framing policies_json)

# bounded SECONDS CMD...: CMD, ended (with everything it started) after SECONDS; exit 124 then.
bounded() {
  local limit=$1
  shift
  timeout --kill-after=30 "$limit" "$@"
}

# whole_seconds S: S (seconds, maybe with a fraction) rounded up.
whole_seconds() {
  local s=${1%.*}
  [[ $1 == *.* ]] && s=$((${s:-0} + 1))
  echo "${s:-0}"
}

# stable_runner WHY TARGET...: the stable runner over the given targets, bounded by their fuzzing
# time plus RUN_SLACK (its build is not: it is the workspace's ordinary stable build). A crash, a
# hang it reports, or a run cut off at its bound exits the script with status 1.
stable_runner() {
  local why=$1
  shift
  local limit=$(($# * $(whole_seconds "$SECONDS_PER_TARGET") + RUN_SLACK)) rc=0
  echo "fuzz: $why: running the stable runner (same targets, seeds and dictionaries; at most $limit s)"
  (cd "$FUZZ_DIR/../.." && cargo build -q --locked -p micoff-fuzz)
  (
    cd "$FUZZ_DIR/../.."
    bounded "$limit" cargo run -q --locked -p micoff-fuzz -- --seconds "$SECONDS_PER_TARGET" \
      --timeout "$INPUT_TIMEOUT" "$@"
  ) || rc=$?
  if ((rc == 124 || rc == 137)); then
    echo "fuzz: the stable runner FAILED: it did not end within $limit s (a hang its own --timeout did not catch)"
    exit 1
  elif ((rc != 0)); then
    echo "fuzz: the stable runner FAILED (exit $rc; the input is in native-host/fuzz/artifacts/:"
    echo "      fix it, then add the input to seeds/<target>/ as regression-<what>)"
    exit 1
  fi
}

if [ "${MICOFF_FUZZ_RUNNER:-}" = stable ]; then
  stable_runner "MICOFF_FUZZ_RUNNER=stable" "${TARGETS[@]}"
  echo "fuzz: ran the stable runner (micoff-fuzz), as asked"
  exit 0
fi
if ! bounded "$PROBE_TIMEOUT" cargo +nightly --version >/dev/null 2>&1 ||
  ! bounded "$PROBE_TIMEOUT" cargo +nightly fuzz --version >/dev/null 2>&1; then
  stable_runner "no nightly toolchain or no cargo-fuzz" "${TARGETS[@]}"
  echo "fuzz: ran the stable runner (micoff-fuzz), not cargo-fuzz (needs a nightly toolchain + cargo install cargo-fuzz)"
  exit 0
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "== building the libFuzzer targets (cargo +nightly fuzz build, at most ${BUILD_TIMEOUT} s)"
rc=0
bounded "$BUILD_TIMEOUT" cargo +nightly fuzz build >"$log" 2>&1 || rc=$?
if ((rc != 0)); then
  tail -n 30 "$log"
  if ((rc == 124 || rc == 137)); then
    why="the libFuzzer build did not finish within ${BUILD_TIMEOUT} s (what it compiled is kept; the next run continues it)"
  else
    why="the libFuzzer build failed (exit $rc)"
  fi
  stable_runner "$why" "${TARGETS[@]}"
  echo "fuzz: ran the stable runner (micoff-fuzz), not cargo-fuzz: $why"
  exit 0
fi

summary=()
for i in "${!TARGETS[@]}"; do
  target=${TARGETS[$i]}
  mkdir -p "corpus/$target"
  echo "== cargo fuzz run $target (${SECONDS_PER_TARGET} s)"
  rc=0
  limit=$(($(whole_seconds "$SECONDS_PER_TARGET") + RUN_SLACK))
  # -timeout: one input running longer is a hang, reported (and saved) as a crash is; without it
  # libFuzzer waits 1200 s per input.
  bounded "$limit" cargo +nightly fuzz run "$target" \
    "corpus/$target" "seeds/$target" -- \
    -max_total_time="$SECONDS_PER_TARGET" -timeout="$INPUT_TIMEOUT" -rss_limit_mb=2048 \
    -dict="dicts/$target.dict" -print_final_stats=1 >"$log" 2>&1 || rc=$?
  if ((rc != 0)); then
    tail -n 60 "$log"
    # libFuzzer names the input it saved for every crash, leak, timeout or out-of-memory.
    if grep -qE 'Test unit written to|^==[0-9]+== ?ERROR: libFuzzer' "$log"; then
      echo "fuzz: cargo-fuzz $target FAILED (crash or hang input in native-host/fuzz/artifacts/$target/;"
      echo "      fix it, then add the input to seeds/$target/ as regression-<what>)"
      exit 1
    fi
    # Cut off at its bound: a hang that -timeout did not catch (e.g. outside one input), not a
    # toolchain problem to fall back from.
    if ((rc == 124 || rc == 137)); then
      echo "fuzz: cargo-fuzz $target FAILED: it did not end within $limit s (a hang)"
      exit 1
    fi
    why="cargo fuzz run $target ended (exit $rc) without a crash report"
    stable_runner "$why" "${TARGETS[@]:$i}"
    echo "fuzz: ran cargo-fuzz (libFuzzer) for: ${summary[*]:-no target}; the stable runner for the rest: $why"
    exit 0
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
  grep -E '^(Done |stat::number_of_executed_units)' "$log" || true
  echo "$target: ${runs:-?} executions in ${SECONDS_PER_TARGET} s (${cov:-cov: ?})"
  summary+=("$target ${runs:-?}")
done
echo "fuzz: ran cargo-fuzz (libFuzzer, nightly), executions per target: $(IFS=';'; echo "${summary[*]}" | sed 's/;/, /g'); no crash"
