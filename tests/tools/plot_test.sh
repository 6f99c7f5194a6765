#!/usr/bin/env bash
# End-to-end check of tools/plot.py: three short virtual-clock runs and a hand-written
# results.csv (as `stalesgd race` writes it) must give five valid PNGs under 300 KB; a run
# folder missing pieces must not break it; a missing DIR must give one error line, status 1.
# usage: tests/tools/plot_test.sh path/to/stalesgd   (needs MNIST in data/: stalesgd data fetch mnist)
set -euo pipefail

stalesgd=$(realpath "${1:?usage: plot_test.sh path/to/stalesgd}")
cd "$(dirname "$0")/../.."  # the repo root: tools/plot.py and the default data/ live here
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "plot_test: FAIL: $*" >&2
  exit 1
}

race="$tmp/race"
train() {  # slug, then extra train flags
  local slug=$1
  shift
  "$stalesgd" train --model softmax --workers 4 --delay 'exp:mean=10ms' --time 2s \
    --clock virtual --seed 7 --out "$race/$slug" "$@" >"$tmp/$slug.log" 2>&1 ||
    fail "stalesgd train ($slug) failed: $(tail -n 1 "$tmp/$slug.log")"
}
train sync --rule sync
train k-async --rule k-async --k 2 --target-error 0.2
train async --rule async

# A damaged copy: one evaluation, no gradients.csv, no theory. It must be drawn, not fatal.
cp -r "$race/async" "$race/partial"
rm "$race/partial/gradients.csv"
head -n 2 "$race/async/evals.csv" >"$race/partial/evals.csv"
sed -i 's/"theory": {/"theory": null, "old_theory": {/' "$race/partial/summary.json"

# results.csv as the race writes it; empty cells are unknown values (plot.py falls back to
# each run's summary.json), the k-async row carries the race's own numbers.
{
  printf '%s\n' 'label,slug,rule,k,seed,clock,iterations,wall_s,time_to_target_s,final_test_error,seconds_per_iteration,predicted_seconds_per_iteration,predicted_method,mean_staleness,p95_staleness,gradients_started,gradients_applied,gradients_cancelled,wasted_fraction'
  printf '%s\n' 'sync (K=P=4),sync,sync,4,7,virtual,,,,,,,,,,,,,'
  printf '%s\n' 'k-async K=2,k-async,k-async,2,7,virtual,300,2.0,1.0,0.15,0.0062,0.0058,closed form,1.0,4,700,690,0,0.014'
  printf '%s\n' 'async (K=1),async,async,1,7,virtual,,,,,,,,,,,,,'
  printf '%s\n' 'partial run,partial,async,1,7,virtual,,,,,,,,,,,,,'
} >"$race/results.csv"

pngs="$tmp/png"
"$python" tools/plot.py "$race" --out "$pngs" --title "plot test" >"$tmp/plot.out" 2>"$tmp/plot.err" ||
  fail "plot.py exited $?: $(cat "$tmp/plot.err")"
[ ! -s "$tmp/plot.err" ] || fail "plot.py wrote to stderr: $(cat "$tmp/plot.err")"

for name in error_vs_time error_vs_iteration staleness time_per_iteration loss_vs_time; do
  png="$pngs/$name.png"
  [ -f "$png" ] || fail "$name.png was not written"
  grep -qxF "$png" "$tmp/plot.out" || fail "$name.png is not in the printed list"
  magic=$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')
  [ "$magic" = 89504e470d0a1a0a ] || fail "$name.png is not a PNG (magic $magic)"
  size=$(stat -c %s "$png")
  [ "$size" -lt 307200 ] || fail "$name.png is $size bytes, over 300 KB"
done

# A single run directory (summary.json at the top) plots into itself.
"$python" tools/plot.py "$race/k-async" >"$tmp/single.out" 2>"$tmp/single.err" ||
  fail "plot.py on a single run exited $?: $(cat "$tmp/single.err")"
[ "$(wc -l <"$tmp/single.out")" -eq 5 ] || fail "single run: expected 5 files, got $(cat "$tmp/single.out")"

# Bad DIR: status 1 and exactly one line on stderr.
status=0
"$python" tools/plot.py "$tmp/no-such-dir" >"$tmp/bad.out" 2>"$tmp/bad.err" || status=$?
[ "$status" -eq 1 ] || fail "missing DIR: exit status $status, want 1"
[ "$(wc -l <"$tmp/bad.err")" -eq 1 ] || fail "missing DIR: want one stderr line, got: $(cat "$tmp/bad.err")"
grep -q '^plot.py: error: .*; ' "$tmp/bad.err" || fail "missing DIR: unexpected message: $(cat "$tmp/bad.err")"
[ ! -s "$tmp/bad.out" ] || fail "missing DIR: wrote to stdout: $(cat "$tmp/bad.out")"

echo "plot_test: ok ($(wc -l <"$tmp/plot.out") plots)"
