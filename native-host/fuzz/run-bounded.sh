#!/usr/bin/env bash
# Bounded fuzz run of every target (scripts/test.sh runs it as "fuzz (bounded)"):
#   proc_parsers    micoff-proc's /proc parsers (stat, status, io, schedstat, cmdline, net/unix, fd links)
#   doctor_parsers  micoff-doctor's parsers (asound, hw_params, interrupts, PulseAudio/limits files,
#                   kernel config, cmdline, cpuinfo)
#   request         frame bodies through the request decoder
#   framing         byte streams through the frame codec, the async reader and the whole server
# The targets are in native-host/crates/micoff-fuzz; the committed seed corpus in seeds/<target>/
# (real samples, plus regression-* inputs of crashes found and fixed), dictionaries in dicts/.
#
# With a nightly toolchain and cargo-fuzz it runs libFuzzer (coverage-guided, sanitizers on),
# MICOFF_FUZZ_SECONDS per target (default 20; the first build takes a few minutes more); the
# working corpus grows in corpus/<target>/ (not committed). Otherwise the stable runner
# (`micoff-fuzz`: the same target functions, a mutation loop with the same seeds and
# dictionaries, overflow checks on). Either way each target's number of executions is printed and
# the last line says which runner ran. MICOFF_FUZZ_RUNNER=stable forces the stable runner.
set -euo pipefail
cd "$(dirname "$0")"
SECONDS_PER_TARGET=${MICOFF_FUZZ_SECONDS:-20}
TARGETS=(proc_parsers doctor_parsers request framing)

have_cargo_fuzz() {
  [ "${MICOFF_FUZZ_RUNNER:-}" != stable ] &&
    cargo +nightly --version >/dev/null 2>&1 && cargo +nightly fuzz --version >/dev/null 2>&1
}

if have_cargo_fuzz; then
  echo "== building the libFuzzer targets (cargo +nightly fuzz build)"
  cargo +nightly fuzz build >/dev/null 2>&1 || cargo +nightly fuzz build
  summary=()
  for target in "${TARGETS[@]}"; do
    log=$(mktemp)
    mkdir -p "corpus/$target"
    echo "== cargo fuzz run $target (${SECONDS_PER_TARGET} s)"
    if ! cargo +nightly fuzz run "$target" "corpus/$target" "seeds/$target" -- \
      -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -dict="dicts/$target.dict" \
      -print_final_stats=1 >"$log" 2>&1; then
      tail -n 60 "$log"
      echo "fuzz: cargo-fuzz $target FAILED (crash input in native-host/fuzz/artifacts/$target/;"
      echo "      fix it, then add the input to seeds/$target/ as regression-<what>)"
      rm -f "$log"
      exit 1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
    grep -E '^(Done |stat::number_of_executed_units)' "$log" || true
    rm -f "$log"
    echo "$target: ${runs:-?} executions in ${SECONDS_PER_TARGET} s (${cov:-cov: ?})"
    summary+=("$target ${runs:-?}")
  done
  echo "fuzz: ran cargo-fuzz (libFuzzer, nightly), executions per target: $(IFS=';'; echo "${summary[*]}" | sed 's/;/, /g'); no crash"
else
  if [ "${MICOFF_FUZZ_RUNNER:-}" != stable ]; then
    echo "nightly or cargo-fuzz missing: running the stable runner (same targets, a mutation loop)" >&2
  fi
  cd ../..
  cargo build -q --locked -p micoff-fuzz
  cargo run -q --locked -p micoff-fuzz -- --seconds "$SECONDS_PER_TARGET" "${TARGETS[@]}"
  echo "fuzz: ran the stable runner (micoff-fuzz), not cargo-fuzz (needs a nightly toolchain + cargo install cargo-fuzz)"
fi
