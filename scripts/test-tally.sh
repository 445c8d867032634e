# npm test's tally (sourced by scripts/test.sh; scripts/test-tally.test.ts drives it on sample reports):
# the counters, each runner's report read into them, and the summary that ends the run.
# The last line is `N passed, N failed`, with ` (K on retry)` and `, N skipped` when there are any;
# above it, the tests passed only on retry and those skipped, by name (a retried pass is a finding).
# Counts per runner: `cargo test` its `test result:` lines (ignored = skipped), node --test its TAP
# totals, Playwright its JSON report (scripts/e2e-report.ts), `check` one pass/fail per command.

passed=0
failed=0
skipped=0
on_retry=0
failures=()
retried=()
skips=()
# "SECONDS NAME" per group of the run, and "MS SPEC [PROJECT]" per e2e spec file (both lanes).
group_times=()
spec_times=()

# time_group NAME SECONDS: how long a group of the run took (wall clock), for the summary.
time_group() {
  group_times+=("$2 $1")
}

# summary_line PASSED FAILED [SKIPPED] [ON_RETRY]: the run's last line.
summary_line() {
  local p=$1 f=$2 s=${3:-0} r=${4:-0}
  local line="$p passed"
  ((r > 0)) && line+=" ($r on retry)"
  line+=", $f failed"
  ((s > 0)) && line+=", $s skipped"
  printf '%s\n' "$line"
}

# count_from NAME PASSED FAILED RC: add a runner's own counts; a runner that failed without
# reporting a failed test, or ran none, still counts as one failure.
count_from() {
  local name=$1 p=$2 f=$3 rc=$4
  passed=$((passed + p))
  failed=$((failed + f))
  if ((f > 0)); then
    failures+=("$name ($f failed)")
  elif ((rc != 0)); then
    failed=$((failed + 1))
    failures+=("$name (exit $rc)")
  elif ((p == 0)); then
    failed=$((failed + 1))
    failures+=("$name (ran no test)")
  fi
}

# fail_one NAME: one failure that is no runner's (e.g. a dependency missing under CI).
fail_one() {
  failed=$((failed + 1))
  failures+=("$1")
}

# count_cargo_log LOG RC: `cargo test` output. Ignored tests are skipped, listed with their reason;
# under CI (CI set) they are also one failure: the workspace ignores only tests that need root, and
# CI runs as root with --include-ignored (scripts/test.sh), so one ignored there did not run.
count_cargo_log() {
  local log=$1 rc=$2 p f i line
  read -r p f i < <(awk '/^test result:/ { for (k = 1; k <= NF; k++) { if ($(k+1) ~ /^passed/) P += $k; if ($(k+1) ~ /^failed/) F += $k; if ($(k+1) ~ /^ignored/) I += $k } } END { print P+0, F+0, I+0 }' "$log")
  skipped=$((skipped + i))
  # `test path::name ... ignored, why`
  while IFS= read -r line; do
    skips+=("rust: $line")
  done < <(sed -n 's/^test \(.*\) \.\.\. ignored\(, \)\{0,1\}\(.*\)$/\1: \3/p' "$log")
  count_from "cargo test" "$p" "$f" "$rc"
  if [ -n "${CI:-}" ] && ((i > 0)); then
    fail_one "cargo test: $i test(s) ignored under CI (they need root: run CI as root)"
  fi
}

# count_tap_log NAME LOG RC: node --test's TAP output (its `# pass|fail|cancelled|skipped N` totals;
# a cancelled test, e.g. one cut off by its timeout, is a failed one).
count_tap_log() {
  local name=$1 log=$2 rc=$3 p f c s line
  p=$(sed -n 's/^# pass //p' "$log" | tail -n 1)
  f=$(sed -n 's/^# fail //p' "$log" | tail -n 1)
  c=$(sed -n 's/^# cancelled //p' "$log" | tail -n 1)
  s=$(sed -n 's/^# skipped //p' "$log" | tail -n 1)
  f=$((${f:-0} + ${c:-0}))
  skipped=$((skipped + ${s:-0}))
  while IFS= read -r line; do
    skips+=("ts: $line")
  done < <(sed -n 's/^ *ok [0-9]* - \(.*\) # SKIP *\(.*\)$/\1: \2/p' "$log")
  count_from "$name" "${p:-0}" "$f" "$rc"
}

# count_playwright_json JSON RC: Playwright's JSON report, read by scripts/e2e-report.ts (one line
# `counts P F S` then `retried NAME` / `skipped NAME: WHY` lines). A missing report is a failure.
count_playwright_json() {
  local json=$1 rc=$2 kind rest p=0 f=0 s=0 out
  if [ ! -f "$json" ]; then
    count_from "e2e (no report)" 0 0 "$rc"
    return
  fi
  # From the checkout (where node finds tsx), the report by its absolute path.
  json=$(realpath "$json")
  if ! out=$(cd "$TALLY_ROOT" && node --import tsx scripts/e2e-report.ts "$json"); then
    count_from "e2e (report unreadable: $json)" 0 0 1
    return
  fi
  while IFS=' ' read -r kind rest; do
    case $kind in
      counts) read -r p f s <<<"$rest" ;;
      retried)
        retried+=("e2e: $rest")
        on_retry=$((on_retry + 1))
        ;;
      skipped) skips+=("e2e: $rest") ;;
      duration) spec_times+=("$rest") ;;
    esac
  done <<<"$out"
  skipped=$((skipped + s))
  count_from "e2e" "$p" "$f" "$rc"
}

# print_times [FILE]: the time per group and the ten slowest e2e specs (stderr); with FILE, every
# group's and spec's time as `group|spec<TAB>seconds<TAB>name` lines there (an artifact).
print_times() {
  local file=${1:-} t name ms spec
  if ((${#group_times[@]} > 0)); then
    printf '\nTime per group:\n' >&2
    for t in "${group_times[@]}"; do
      printf '  %6.1f min  %s\n' "$(awk -v s="${t%% *}" 'BEGIN { print s / 60 }')" "${t#* }" >&2
    done
  fi
  if ((${#spec_times[@]} > 0)); then
    printf '\nSlowest e2e specs:\n' >&2
    printf '%s\n' "${spec_times[@]}" | sort -rn | head -n 10 | while read -r ms spec; do
      printf '  %6.1f min  %s\n' "$(awk -v m="$ms" 'BEGIN { print m / 60000 }')" "$spec" >&2
    done
  fi
  if [ -n "$file" ]; then
    : >"$file"
    for t in "${group_times[@]}"; do printf 'group\t%s\t%s\n' "${t%% *}" "${t#* }" >>"$file"; done
    for t in "${spec_times[@]}"; do
      ms=${t%% *} spec=${t#* }
      printf 'spec\t%s\t%s\n' "$(awk -v m="$ms" 'BEGIN { print m / 1000 }')" "$spec" >>"$file"
    done
  fi
  return 0
}

# print_summary: the skipped and retried tests by name and the failures (stderr), then the last line
# (stdout). Returns non-zero when anything failed.
print_summary() {
  if ((${#skips[@]} > 0)); then
    printf '\nSkipped:\n' >&2
    printf '  - %s\n' "${skips[@]}" >&2
  fi
  if ((${#retried[@]} > 0)); then
    printf '\nPassed only on retry (a flake to find the cause of, not noise):\n' >&2
    printf '  - %s\n' "${retried[@]}" >&2
  fi
  if ((${#failures[@]} > 0)); then
    printf '\nFailed:\n' >&2
    printf '  - %s\n' "${failures[@]}" >&2
  fi
  summary_line "$passed" "$failed" "$skipped" "$on_retry"
  ((failed == 0))
}

TALLY_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
