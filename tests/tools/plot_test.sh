#!/usr/bin/env bash
# End-to-end check of tools/plot.py: three short virtual-clock runs and a hand-written
# results.csv (as `stalesgd race` writes it) must give five valid PNGs under 300 KB; a run
# folder missing pieces must not break it; a missing DIR must give one error line, status 1.
# A race with 2 seeds must be drawn as means with 95% bands, in PNG, PDF and SVG.
# usage: tests/tools/plot_test.sh path/to/stalesgd   (needs MNIST in data/: stalesgd data fetch mnist)
set -euo pipefail

# shellcheck source=script_test_setup.sh
source "$(dirname "$0")/script_test_setup.sh"

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

# One seed per run: no band anywhere (the --report of the race above).
"$python" tools/plot.py "$race" --out "$tmp/png1" --report "$tmp/one-seed.json" >/dev/null ||
  fail "plot.py --report exited $?"
"$python" - "$tmp/one-seed.json" <<'PY' || fail "one-seed report: see above"
import json, sys
figures = json.load(open(sys.argv[1]))["figures"]
assert len(figures) == 5, figures.keys()
for name, groups in figures.items():
    assert len(groups) == 4 and all(len(g["runs"]) == 1 and not g["band"] for g in groups), \
        f"{name}: {groups}"
PY

# The band's arithmetic: two seeds 0.2 apart -> mean +- t(0.975, 1) * sd / sqrt(2) = 12.706 * 0.1;
# three seeds {1, 2, 3} -> 4.303 * 1 / sqrt(3); a curve seen by only one seed gives no band.
"$python" - <<'PY' || fail "seed_band / t975 arithmetic: see above"
import sys
sys.path.insert(0, "tools")
import numpy as np
from plot import mean_ci, seed_band, t975
x = np.array([0.0, 1.0, 2.0])
grid, mean, half = seed_band([(x, np.array([0.5, 0.4, 0.3])), (x, np.array([0.7, 0.6, 0.5]))])
assert np.allclose(grid, x) and np.allclose(mean, [0.6, 0.5, 0.4]), (grid, mean)
assert np.allclose(half, 12.706 * 0.1), half
# Different snapshot times: the grid is the union inside the common range [0.5, 2].
grid, mean, _ = seed_band([(x, np.array([1.0, 1.0, 1.0])), (np.array([0.5, 3.0]), np.array([3.0, 3.0]))])
assert np.allclose(grid, [0.5, 1.0, 2.0]) and np.allclose(mean, 2.0), (grid, mean)
assert seed_band([(x, x)]) is None
assert seed_band([(x, x), (x + 10, x)]) is None  # no overlap: no mean to take
m, h = mean_ci([1.0, 2.0, 3.0])
assert m == 2.0 and abs(h - 4.303 / 3 ** 0.5) < 1e-9, (m, h)
assert mean_ci([5.0]) == (5.0, None)
assert abs(t975(30) - 2.042) < 1e-9 and abs(t975(60) - 2.000) < 2e-3 and abs(t975(10**6) - 1.96) < 1e-3
PY

# A real race with 2 seeds per run: means with bands, every figure in every format.
cat >"$tmp/seeds.toml" <<'TOML'
model = "softmax"
workers = 4
delay = "exp:mean=10ms"
clock = "virtual"
time = "1s"
eval_every = "0.1s"
seeds = [1, 2]
[[run]]
label = "sync"
rule = "sync"
[[run]]
label = "k-async K=2"
rule = "k-async"
k = 2
TOML
"$stalesgd" race --config "$tmp/seeds.toml" --out "$tmp/seeds" >"$tmp/seeds.log" 2>&1 ||
  fail "stalesgd race (2 seeds) failed: $(tail -n 1 "$tmp/seeds.log")"
for format in png pdf svg; do
  out="$tmp/seeds-$format"
  "$python" tools/plot.py "$tmp/seeds" --out "$out" --format "$format" --dpi 80 \
    --report "$out.json" >"$out.list" 2>"$out.err" || fail "plot.py --format $format exited $?: $(cat "$out.err")"
  [ ! -s "$out.err" ] || fail "plot.py --format $format wrote to stderr: $(cat "$out.err")"
  [ "$(wc -l <"$out.list")" -eq 5 ] || fail "--format $format: expected 5 files, got $(cat "$out.list")"
  for name in error_vs_time error_vs_iteration loss_vs_time staleness time_per_iteration; do
    file="$out/$name.$format"
    grep -qxF "$file" "$out.list" || fail "$file is not in the printed list"
    case $format in
      png) want=89504e470d0a1a0a; magic=$(head -c 8 "$file" | od -An -tx1 | tr -d ' \n') ;;
      pdf) want=%PDF-; magic=$(head -c 5 "$file") ;;
      svg) want='<svg '; magic=$(grep -o -m 1 '<svg ' "$file" || true)
           head -c 5 "$file" | grep -qx '<?xml' || fail "$file does not start with <?xml" ;;
    esac
    [ "$magic" = "$want" ] || fail "$file is not a $format file (starts with '$magic')"
  done
  "$python" - "$out.json" "$format" <<'PY' || fail "2-seed report ($format): see above"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["format"] == sys.argv[2], report["format"]
figures = report["figures"]
want = {"sync": ["sync (seed 1)", "sync (seed 2)"],
        "k-async K=2": ["k-async K=2 (seed 1)", "k-async K=2 (seed 2)"]}
for name, groups in figures.items():
    assert {g["group"]: g["runs"] for g in groups} == want, f"{name}: {groups}"
    # Curves get a band, the time per iteration an error bar; the staleness is pooled.
    assert all(g["band"] for g in groups) == (name != "staleness"), f"{name}: {groups}"
PY
done
# The bands are in the drawing itself, not only in the report: one filled polygon per group in
# each curve figure of the SVG (matplotlib names them PolyCollection_N), none with one seed.
for name in error_vs_time error_vs_iteration loss_vs_time; do
  bands=$(grep -c 'id="PolyCollection_' "$tmp/seeds-svg/$name.svg" || true)
  [ "$bands" -eq 2 ] || fail "$name.svg of 2 groups of 2 seeds has $bands bands, want 2"
done
"$python" tools/plot.py "$race" --out "$tmp/svg1" --format svg >/dev/null || fail "plot.py --format svg (1 seed) exited $?"
! grep -q 'id="PolyCollection_' "$tmp/svg1/error_vs_time.svg" || fail "error_vs_time.svg of single seeds has a band"

# --dpi reaches the PNG: 80 dpi gives a smaller image than the default 150.
small=$(stat -c %s "$tmp/seeds-png/error_vs_time.png")
"$python" tools/plot.py "$tmp/seeds" --out "$tmp/seeds-150" >/dev/null || fail "plot.py (default dpi) exited $?"
large=$(stat -c %s "$tmp/seeds-150/error_vs_time.png")
[ "$small" -lt "$large" ] || fail "--dpi 80 gave $small bytes, not fewer than the default's $large"

# paper_figures.py groups the same seeds: bars with the mean and its 95% interval, and curves.
"$python" tools/paper_figures.py bars "$tmp/seeds" --value seconds_per_iteration \
  --out "$tmp/bars.svg" >"$tmp/bars.out" 2>"$tmp/bars.err" || fail "paper_figures.py bars exited $?: $(cat "$tmp/bars.err")"
grep -q '<svg ' "$tmp/bars.svg" || fail "paper_figures.py bars --out bars.svg wrote no SVG"
for group in "sync" "k-async K=2"; do  # "label  seed 1, seed 2  mean  ±half-width"
  grep -qE "^  $group +[0-9.]+, [0-9.]+  [0-9.]+  ±[0-9.]+$" "$tmp/bars.out" ||
    fail "paper_figures.py bars: no 2-seed mean and interval for '$group' in: $(cat "$tmp/bars.out")"
done
"$python" tools/paper_figures.py curves "$tmp/seeds" --metric test_error --x time iteration \
  --at 0.5 --out "$tmp/curves.pdf" --csv "$tmp/curves.csv" >/dev/null 2>"$tmp/curves.err" ||
  fail "paper_figures.py curves exited $?: $(cat "$tmp/curves.err")"
[ "$(head -c 5 "$tmp/curves.pdf")" = %PDF- ] || fail "paper_figures.py curves --out curves.pdf wrote no PDF"
# --csv keeps the printed numbers: per run the mean of its seeds and the t-interval of them.
"$python" tools/paper_figures.py bars "$tmp/seeds" --value seconds_per_iteration \
  --out "$tmp/bars.png" --csv "$tmp/bars.csv" >/dev/null 2>"$tmp/bars.err" ||
  fail "paper_figures.py bars --csv exited $?: $(cat "$tmp/bars.err")"
"$python" - "$tmp/bars.csv" "$tmp/curves.csv" <<'PY' || fail "paper_figures.py --csv rows are wrong (above)"
import csv, statistics, sys
bad = []
for path, quantities in ((sys.argv[1], {("seconds_per_iteration", "")}),
                         (sys.argv[2], {("test_error", "t=0.5"), ("test_error", "last quarter"),
                                        ("test_error", "minimum")})):
    rows = list(csv.DictReader(open(path)))
    got = {(r["run"], r["quantity"], r["at"]) for r in rows}
    want = {(run, q, at) for run in ("sync", "k-async K=2") for q, at in quantities}
    if got != want:
        bad.append(f"{path}: rows {sorted(got)}, want {sorted(want)}")
    for r in rows:
        values = [float(v) for v in r["values"].split(";")]
        mean, half = float(r["mean"]), float(r["ci95_half_width"])
        # 2 seeds: t(0.975, 1) = 12.706 times the standard error.
        want_half = 12.706 * statistics.stdev(values) / len(values) ** 0.5
        if (r["seeds"], r["reached"]) != ("2", "2") or abs(mean - statistics.mean(values)) > 1e-5 * abs(mean) \
                or abs(half - want_half) > 1e-3 * want_half + 1e-12:
            bad.append(f"{path}: {r}")
if bad:
    print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# Every figure names its clock, its seeds and, on the real clock, the load (also in --csv).
grep -qxF "virtual clock (load does not enter), 2 seeds per run, runs share seeds" "$tmp/bars.out" ||
  fail "paper_figures.py bars printed no provenance line: $(cat "$tmp/bars.out")"
sed -e 's/^clock = "virtual"/clock = "real"/' -e 's/^time = "1s"/time = "0.3s"/' \
  -e 's/^seeds = \[1, 2\]/seeds = [1, 2]\nseed_stride = 10/' "$tmp/seeds.toml" >"$tmp/real.toml"
"$stalesgd" race --config "$tmp/real.toml" --out "$tmp/real" >"$tmp/real.log" 2>&1 ||
  fail "stalesgd race (real clock) failed: $(tail -n 1 "$tmp/real.log")"
"$python" tools/paper_figures.py curves "$tmp/real" --out "$tmp/real.png" --csv "$tmp/real.csv" \
  >"$tmp/real.out" 2>"$tmp/real.err" || fail "paper_figures.py curves (real) exited $?: $(cat "$tmp/real.err")"
grep -qE "^real clock, 2 seeds per run, independent seeds per run, load \(1-min average\) [0-9.]+-[0-9.]+ on [0-9]+ cores$" \
  "$tmp/real.out" || fail "paper_figures.py curves (real) names no load: $(cat "$tmp/real.out")"
for group in "sync" "k-async K=2"; do
  for key in load_1min_start load_1min_end; do
    grep -qE "^$group,$key,,2,2,[0-9.]+," "$tmp/real.csv" ||
      fail "--csv of a real-clock race has no $key row of 2 seeds for '$group': $(cat "$tmp/real.csv")"
  done
done

# A format plot.py does not write: one error line, status 1.
status=0
"$python" tools/plot.py "$tmp/seeds" --format jpg >/dev/null 2>"$tmp/fmt.err" || status=$?
[ "$status" -eq 1 ] && [ "$(wc -l <"$tmp/fmt.err")" -eq 1 ] &&
  grep -q "^plot.py: error: .*jpg" "$tmp/fmt.err" || fail "--format jpg: status $status, $(cat "$tmp/fmt.err")"

echo "plot_test: ok ($(wc -l <"$tmp/plot.out") plots; 2 seeds in png, pdf, svg)"
