#!/usr/bin/env bash
# Bounded fuzz run of both targets (scripts/test.sh runs it as "fuzz (bounded)").
#
# With the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`) it runs the real libFuzzer
# targets, MICOFF_FUZZ_SECONDS per target (default 25: under a minute for both, not counting the
# first build, which takes a few minutes); otherwise the stable, deterministic stand-in
# (tests/fuzzish.rs). The last line says which ran and, for libFuzzer, how many inputs it tried.
#   framing: byte streams through FrameCodec, FrameReader (fuzzed chunking) and server::run
#   request: frame bodies through the request decoder
set -euo pipefail
cd "$(dirname "$0")"
SECONDS_PER_TARGET=${MICOFF_FUZZ_SECONDS:-25}

# A frame: 4-byte length (little endian, as on x86/arm) + body.
frame() {
  local n=${#1}
  printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((n & 255)) $(((n >> 8) & 255)) $(((n >> 16) & 255)) $(((n >> 24) & 255)))"
  printf '%s' "$1"
}

seed() {
  mkdir -p corpus/framing corpus/request
  local requests=(
    '{"id":1,"type":"version"}'
    '{"id":2,"type":"cpu_sample","window_ms":100,"pids":[1,2]}'
    '{"id":3,"type":"subscribe","topic":"cpu","interval_ms":250,"pids":[7]}'
    '{"id":4,"type":"subscribe","topic":"audio"}'
    '{"id":5,"type":"unsubscribe","subscription":1}'
    '{"id":6,"type":"processes","browser_pid":123}'
    '{"id":7,"type":"audio_server_info"}'
    '{"id":8,"type":"doctor"}'
  )
  local i=0
  for r in "${requests[@]}"; do
    i=$((i + 1))
    [ -e "corpus/request/seed-$i" ] || printf '%s' "$r" >"corpus/request/seed-$i"
  done
  # Framing inputs: byte 0 = number of chunk-size bytes, then the sizes, then the stream.
  [ -e corpus/framing/seed-1 ] || { printf '\x00'; for r in "${requests[@]}"; do frame "$r"; done; } >corpus/framing/seed-1
  [ -e corpus/framing/seed-2 ] || { printf '\x03\x01\x05\x02'; frame "${requests[2]}"; frame "${requests[4]}"; } >corpus/framing/seed-2
  [ -e corpus/framing/seed-3 ] || { printf '\x01\x03'; frame "${requests[0]}"; printf '\x40\x00\x00\x00{"id"'; } >corpus/framing/seed-3
}

if cargo +nightly --version >/dev/null 2>&1 && cargo fuzz --version >/dev/null 2>&1; then
  seed
  summary=()
  for target in framing request; do
    log=$(mktemp)
    echo "== cargo fuzz run $target (${SECONDS_PER_TARGET} s)"
    if ! cargo +nightly fuzz run "$target" "corpus/$target" -- \
      -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -dict=protocol.dict \
      -print_final_stats=1 >"$log" 2>&1; then
      tail -n 60 "$log"
      echo "fuzz: cargo-fuzz $target FAILED (crash input in native-host/fuzz/artifacts/$target/)"
      rm -f "$log"
      exit 1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
    grep -E '^(Done |stat::)' "$log" || true
    rm -f "$log"
    summary+=("$target ${runs:-?} runs in ${secs:-?} s (${cov:-cov: ?}), no crash")
  done
  echo "fuzz: ran cargo-fuzz (libFuzzer, nightly): $(IFS=';'; echo "${summary[*]}" | sed 's/;/; /g')"
else
  echo "nightly or cargo-fuzz missing: running the stable stand-in (tests/fuzzish.rs)" >&2
  (cd .. && cargo test -p micoff-host --test fuzzish)
  echo "fuzz: ran the stable stand-in (tests/fuzzish.rs), not cargo-fuzz (needs nightly + cargo install cargo-fuzz)"
fi
