#!/usr/bin/env bash
# npm test's "fuzz (bounded)": every fuzz target (native-host/crates/micoff-fuzz) through the stable
# runner over the committed seeds (seeds/<target>/), with a fixed rng seed and a fixed number of
# mutations per target, so every run tries the same inputs and a failure reproduces. Targets run in
# parallel, one per core. Open-ended exploration (libFuzzer, growing corpus) is explore.sh
# (`npm run bench:fuzz`); what it finds goes into seeds/ and is then tried here on every run.
set -euo pipefail
cd "$(dirname "$0")/../.."
SEED=${MICOFF_FUZZ_SEED:-1}
# Mutations per target: about 10 s each on one core of a 2-core machine.
declare -A RUNS=([proc_parsers]=100000 [doctor_parsers]=30000 [request]=200000 [framing]=10000
  [policies_json]=80000)
# Only a guard against a runaway run: the counts above end each target long before.
CAP_SECONDS=${MICOFF_FUZZ_CAP_SECONDS:-300}
INPUT_TIMEOUT=${MICOFF_FUZZ_INPUT_TIMEOUT:-10}
jobs=$(nproc 2>/dev/null || echo 2)

cargo build -q --locked -p micoff-fuzz
bin=$(cargo metadata --format-version 1 --no-deps | node -e \
  'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')/debug/micoff-fuzz
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pids=()
names=()
for target in "${!RUNS[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  timeout --kill-after=30 $((CAP_SECONDS + 60)) "$bin" --seed "$SEED" --runs "${RUNS[$target]}" \
    --seconds "$CAP_SECONDS" --timeout "$INPUT_TIMEOUT" "$target" >"$out/$target.log" 2>&1 &
  pids+=($!)
  names+=("$target")
done
failed=()
for i in "${!pids[@]}"; do
  rc=0
  wait "${pids[$i]}" || rc=$?
  target=${names[$i]}
  grep -v '^fuzz (stable runner)' "$out/$target.log" || true
  if ((rc == 124 || rc == 137)); then
    echo "fuzz: $target FAILED: it did not end within $((CAP_SECONDS + 60)) s (a hang)"
    failed+=("$target")
  elif ((rc != 0)); then
    echo "fuzz: $target FAILED (exit $rc; the input is in native-host/fuzz/artifacts/$target/:"
    echo "      replay it with micoff-fuzz --replay, fix it, then add it to seeds/$target/ as regression-<what>)"
    failed+=("$target")
  fi
done
if ((${#failed[@]} > 0)); then
  echo "fuzz: FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#names[@]} targets, rng seed $SEED, the committed seeds plus a fixed number of mutations each; no crash"
