#!/usr/bin/env bash
# End-to-end check of tools/error_figures.py on a short virtual-clock k-sync race (K = 1, 2 of
# P = 4, 2 seeds): the curves CSV has a row per K with the runtime prediction close to the
# measured time per iteration, p0 and the measured fresh fraction 1 (k-sync is never stale), a
# finite positive bound; best-k names a K of the race at every budget; both PNGs are
# PNGs; the prediction is cached in the race; the measured excess is of train_objective, and of
# train_loss (said on stderr) for a race whose evals.csv lacks it; a race that mixes rules, or
# no race, is one error line and status 1; tools/error_grid.py on a race over lambda and batch;
# k-async's floor with its measured p0 and gamma.
# usage: tests/tools/error_figures_test.sh path/to/stalesgd   (needs MNIST in data/, pandas and
# matplotlib)
set -euo pipefail

# shellcheck source=script_test_setup.sh
source "$(dirname "$0")/script_test_setup.sh"

race_toml() {  # $1 = extra [[run]] lines
  cat <<TOML
model = "softmax"
l2 = 0.1
workers = 4
batch = 16
lr = 0.02
rule = "k-sync"
delay = "exp:mean=10ms"
clock = "virtual"
time = "1s"
eval_every = "0.125s"
eval_samples = 500
seeds = [1, 2]
[[run]]
label = "K={k}"
k = [1, 2]
$1
TOML
}
race_toml "" >"$tmp/race.toml"
"$stalesgd" race --config "$tmp/race.toml" --out "$tmp/race" >"$tmp/race.log" 2>&1 ||
  fail "stalesgd race failed: $(tail -n 1 "$tmp/race.log")"

# The constants from the 10,000 samples evals.csv's train_loss uses, and a shorter search for
# w*: a 0.3x quicker prediction (the sanitizer builds run this too).
fast=(--constants-samples 10000 --optimum-epochs 5)
"$python" tools/error_figures.py curves "$tmp/race" --stalesgd "$stalesgd" "${fast[@]}" \
  --out "$tmp/curves.png" --csv "$tmp/curves.csv" 2>"$tmp/curves.err" ||
  fail "curves exited $?: $(cat "$tmp/curves.err")"
[ -f "$tmp/race/theory-error.json" ] || fail "curves did not cache the prediction in the race"
"$python" tools/error_figures.py best-k "$tmp/race" --stalesgd "$stalesgd" "${fast[@]}" \
  --out "$tmp/best.png" --csv "$tmp/best.csv" 2>"$tmp/best.err" ||
  fail "best-k exited $?: $(cat "$tmp/best.err")"
for png in curves best; do
  [ "$(head -c 4 "$tmp/$png.png" | tail -c 3)" = PNG ] || fail "$png.png is not a PNG"
done

! grep -q "no train_objective" "$tmp/curves.err" "$tmp/best.err" ||
  fail "fell back to train_loss on a race that has train_objective: $(cat "$tmp/curves.err")"

"$python" - "$tmp/curves.csv" "$tmp/best.csv" <<'PY' || fail "the CSVs are wrong (above)"
import math, sys
import pandas as pd

curves, best = pd.read_csv(sys.argv[1]), pd.read_csv(sys.argv[2])
bad = []
if sorted(curves["k"]) != [1, 2]:
    bad.append(f"curves rows for K {list(curves['k'])}, want [1, 2]")
if set(curves["measured_of"]) != {"train_objective"}:
    bad.append(f"measured excess of {set(curves['measured_of'])}, want train_objective")
for _, r in curves.iterrows():
    k = int(r["k"])
    # 1 virtual second at 2.5-6 ms per iteration: hundreds of iterations per seed.
    ratio = r["seconds_per_iteration_measured"] / r["seconds_per_iteration_predicted"]
    if not 0.8 < ratio < 1.25:
        bad.append(f"K={k}: measured/predicted time per iteration {ratio:.3f}")
    if r["p0"] != 1.0 or r["fresh_measured"] != 1.0:
        bad.append(f"K={k}: p0 {r['p0']}, fresh fraction {r['fresh_measured']}; k-sync is never stale")
    for col in ("floor_predicted", "floor_measured", "predicted_2s", "measured_2s"):
        if not (math.isfinite(r[col]) and r[col] > 0):
            bad.append(f"K={k}: {col} = {r[col]}")
if best.empty or not set(best["best_k_predicted"]) <= {1, 2} or \
        not set(best["best_k_measured"]) <= {1, 2}:
    bad.append(f"best-k names K outside the race: {best.head()}")
if list(best["budget_s"]) != sorted(best["budget_s"]):
    bad.append("best-k budgets are not in order")
if bad:
    print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# A race from before train_objective (evals.csv without its last column): the excess of
# train_loss, a note on stderr, other measured floors and the same prediction.
cp -r "$tmp/race" "$tmp/old"
for f in "$tmp"/old/*/evals.csv; do cut -d, -f1-5 "$f" >"$f.tmp" && mv "$f.tmp" "$f"; done
"$python" tools/error_figures.py curves "$tmp/old" --stalesgd "$stalesgd" "${fast[@]}" \
  --out "$tmp/old.png" --csv "$tmp/old.csv" 2>"$tmp/old.err" ||
  fail "curves on the old race exited $?: $(cat "$tmp/old.err")"
grep -q "^error_figures.py: note: .*no train_objective.*train_loss - train_loss_star" "$tmp/old.err" ||
  fail "no note of the fallback on stderr: $(cat "$tmp/old.err")"
"$python" - "$tmp/old.csv" "$tmp/curves.csv" <<'PY' || fail "the fallback CSV is wrong (above)"
import sys
import pandas as pd

old, new = pd.read_csv(sys.argv[1]), pd.read_csv(sys.argv[2])
bad = []
if set(old["measured_of"]) != {"train_loss"}:
    bad.append(f"old race: measured excess of {set(old['measured_of'])}, want train_loss")
if (old["floor_measured"] == new["floor_measured"]).any():
    bad.append("the old race's measured floors are the objective's")
if list(old["floor_predicted"]) != list(new["floor_predicted"]):
    bad.append("the prediction changed with the measured column")
if bad:
    print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# A race with two rules: one line naming the key, status 1.
race_toml $'[[run]]\nlabel = "async"\nrule = "async"' >"$tmp/mixed.toml"
"$stalesgd" race --config "$tmp/mixed.toml" --set time=0.2s --set seeds=[1] --out "$tmp/mixed" >"$tmp/mixed.log" 2>&1 ||
  fail "the mixed race failed: $(tail -n 1 "$tmp/mixed.log")"
refused() {  # $1 = the race folder, $2 = what the one line must say
  set +e
  "$python" tools/error_figures.py curves "$1" --stalesgd "$stalesgd" "${fast[@]}" --out "$tmp/x.png" \
    --csv "$tmp/x.csv" >"$tmp/x.out" 2>"$tmp/x.err"
  local status=$?
  set -e
  [ "$status" -eq 1 ] || fail "curves $1 exited $status, want 1"
  [ "$(wc -l <"$tmp/x.err")" -eq 1 ] || fail "curves $1 printed: $(cat "$tmp/x.err")"
  grep -q "^error_figures.py: error: .*$2" "$tmp/x.err" || fail "curves $1: $(cat "$tmp/x.err")"
}
refused "$tmp/mixed" "runs differ in rule"
refused "$tmp/nothing-here" "nothing-here"

# tools/error_grid.py on a race over two lambdas and two batches (the runs of K = 2 only): a row
# per setting, its constants from a prediction cached per setting, the ratio of the two floors.
"$stalesgd" race --config "$tmp/race.toml" --set 'l2=[0.1,0.3]' --set 'batch=[16,32]' \
  --only 'K=2*' --out "$tmp/grid" >"$tmp/grid.log" 2>&1 ||
  fail "the grid race failed: $(tail -n 1 "$tmp/grid.log")"
"$python" tools/error_grid.py "$tmp/grid" --stalesgd "$stalesgd" "${fast[@]}" \
  --csv "$tmp/grid.csv" >"$tmp/grid.out" 2>&1 || fail "error_grid.py exited $?: $(cat "$tmp/grid.out")"
[ "$(ls "$tmp/grid"/theory-error-l2-*.json | wc -l)" -eq 4 ] ||
  fail "error_grid.py did not cache one prediction per setting: $(ls "$tmp/grid")"
"$python" - "$tmp/grid.csv" <<'PY' || fail "the grid CSV is wrong (above)"
import sys
import pandas as pd

g = pd.read_csv(sys.argv[1])
bad = []
if sorted(zip(g["l2"], g["batch"])) != [(0.1, 16), (0.1, 32), (0.3, 16), (0.3, 32)]:
    bad.append(f"settings {list(zip(g['l2'], g['batch']))}")
if set(g["k"]) != {2} or set(g["seeds"]) != {2}:
    bad.append(f"k {set(g['k'])}, seeds {set(g['seeds'])}")
if ((g["c"] - g["l2"]).abs() > 1e-6).any() or ((g["L_over_c"] - g["L"] / g["c"]).abs() > 1e-4 * g["L_over_c"]).any():
    bad.append("c is not lambda or L_over_c not L / c")
if ((g["floor_ratio"] - g["floor_predicted"] / g["floor_measured"]).abs() > 1e-4 * g["floor_ratio"]).any():
    bad.append("floor_ratio is not predicted / measured")
if not (g["floor_measured"] > 0).all() or not (g["floor_predicted"] > 0).all():
    bad.append("a floor is not positive")
# The bound's floor falls with the batch (sigma^2 of a minibatch ~ 1/m).
for l2, rows in g.groupby("l2"):
    f = dict(zip(rows["batch"], rows["floor_predicted"]))
    if not f[32] < f[16]:
        bad.append(f"l2 {l2}: predicted floor {f} does not fall with the batch")
if bad:
    print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
# k-async with --record-drift: gamma measured from the drift, and the floor with the measured
# p0 and gamma from `theory --error --p0 --gamma` (cached per K), which is the doc's
# gamma' = 1 - (1 - p0) gamma and the floor's 1/gamma' scaling.
"$stalesgd" race --config "$tmp/race.toml" --set rule=k-async --set record_drift=true \
  --only 'K=2*' --out "$tmp/async" >"$tmp/async.log" 2>&1 ||
  fail "the k-async race failed: $(tail -n 1 "$tmp/async.log")"
"$python" tools/error_figures.py curves "$tmp/async" --stalesgd "$stalesgd" "${fast[@]}" \
  --out "$tmp/async.png" --csv "$tmp/async.csv" 2>"$tmp/async.err" ||
  fail "curves on the k-async race exited $?: $(cat "$tmp/async.err")"
[ -f "$tmp/async/theory-error-k2-measured.json" ] ||
  fail "no prediction with the measured constants cached: $(ls "$tmp/async")"
"$python" - "$tmp/async.csv" <<'PY' || fail "the k-async CSV is wrong (above)"
import sys
import pandas as pd

r = pd.read_csv(sys.argv[1]).iloc[0]
bad = []
if not 0.0 < r["gamma_measured"] <= 1.0 or not 0.0 < r["fresh_measured"] < 1.0:
    bad.append(f"gamma measured {r['gamma_measured']}, fresh {r['fresh_measured']}")
want = 1.0 - (1.0 - r["fresh_measured"]) * r["gamma_measured"]
if abs(r["gamma_prime_measured"] - want) > 1e-5 * want:
    bad.append(f"gamma' measured {r['gamma_prime_measured']}, want {want}")
floor = r["floor_predicted"] * r["gamma_prime"] / r["gamma_prime_measured"]
if abs(r["floor_predicted_measured_constants"] - floor) > 1e-4 * floor:
    bad.append(f"floor with measured constants {r['floor_predicted_measured_constants']}, "
               f"want {floor}")
if bad:
    print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
echo "error_figures_test: ok"
