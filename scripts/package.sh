#!/usr/bin/env bash
# `npm run package [-- options]`: first what packaging needs, installed where missing (node_modules,
# cargo, the build's and the package tools: scripts/ensure-deps.sh --package-only, nothing when it is
# all there), then scripts/package.mjs with the options (its header lists them).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh --package-only
# cargo installed by rustup lives here when the shell did not source its env.
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
exec node scripts/package.mjs "$@"
