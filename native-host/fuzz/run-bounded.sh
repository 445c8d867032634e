#!/usr/bin/env bash
# Bounded cargo-fuzz run of both targets (used by scripts/test.sh). Needs the nightly toolchain and
# cargo-fuzz; without them it says so and runs the stable stand-in (tests/fuzzish.rs) instead.
set -euo pipefail
cd "$(dirname "$0")"
SECONDS_PER_TARGET=${MICOFF_FUZZ_SECONDS:-20}
if cargo +nightly --version >/dev/null 2>&1 && cargo fuzz --version >/dev/null 2>&1; then
  for target in framing request; do
    cargo +nightly fuzz run "$target" -- -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=1024
  done
else
  echo "nightly or cargo-fuzz missing: running the stable stand-in (tests/fuzzish.rs)" >&2
  cd .. && cargo test -p micoff-host --test fuzzish
fi
