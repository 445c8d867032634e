#!/usr/bin/env bash
# `npm run demo [-- --window S ...]`: install what is missing, build the extension and the host, then run
# the two-phase measurement (scripts/demo.ts). Options are passed through (see `--help`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
echo 'demo: npm run build' >&2
npm run build --silent >&2
echo 'demo: cargo build --release' >&2
cargo build --release --quiet -p micoff-host >&2
exec node --import tsx scripts/demo.ts "$@"
