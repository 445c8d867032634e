#!/usr/bin/env bash
# The echo-after-unmute sweep (outside npm test): e2e/tests/release-echo.spec.ts with more rounds and
# unmutes than the suite's default, then the first 3 s after each unmute at 100 ms. Needs
# `npm run build` and `cargo build --release -p micoff-host`. Raw figures are copied to
# docs/design/data/release-echo{,-fine}-<server>.json, also when the bar failed (the exit status says so).
# Options (environment): MICOFF_ECHO_ROUNDS (default 3), MICOFF_ECHO_UNMUTES (unmutes of each kind per
# call, default 3), MICOFF_ECHO_MUTED_MS (default 2000; micoff releases at once in this spec),
# SERVER (pulseaudio | pipewire, default pulseaudio).
set -euo pipefail
cd "$(dirname "$0")/.."
server=${SERVER:-pulseaudio}
export MICOFF_ECHO_ROUNDS=${MICOFF_ECHO_ROUNDS:-3} MICOFF_ECHO_UNMUTES=${MICOFF_ECHO_UNMUTES:-3}
status=0
MICOFF_ECHO_FINE_MS=100 npx playwright test -c e2e tests/release-echo.spec.ts --project "$server" || status=$?
mkdir -p docs/design/data
for f in release-echo release-echo-fine; do
  [ -f "e2e/artifacts/$f-$server.json" ] && cp "e2e/artifacts/$f-$server.json" "docs/design/data/$f-$server.json"
done
echo "bench-echo: docs/design/data/release-echo{,-fine}-$server.json" >&2
exit "$status"
