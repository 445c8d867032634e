#!/usr/bin/env bash
# `npm run demo [-- --window S ...]`: install what is missing, build the extension and the host, then run
# the measurement (scripts/demo.ts). Options are passed through (see `--help`); Firefox ESR is installed
# only for `--browser firefox` or `--browser both`.
set -euo pipefail
cd "$(dirname "$0")/.."
deps=()
prev=
for a in "$@"; do
  case "$prev=$a" in
    --browser=firefox | --browser=both | *=--browser=firefox | *=--browser=both) deps=(--firefox) ;;
  esac
  prev=$a
done
bash scripts/ensure-deps.sh ${deps[@]+"${deps[@]}"}
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
echo 'demo: npm run build' >&2
npm run build --silent >&2
echo 'demo: cargo build --release' >&2
cargo build --release --quiet -p micoff-host >&2
exec node --import tsx scripts/demo.ts "$@"
