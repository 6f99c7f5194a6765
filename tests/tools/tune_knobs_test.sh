#!/usr/bin/env bash
# End-to-end check of tools/tune_knobs.py and tools/field_grid.py on a short virtual-clock race
# with a holdout: k-async crossed over K (2, 4) and lr (0.001, 0.1, 1000, which diverges), 2 seeds.
# The setting with the lowest held-out error is chosen (never a diverged one), the runner-up is
# ranked 2, a choice at its grid's edge names the knob (and `field_grid.py edges` fails on it),
# a value at the knob's own bound (K = 1, K = P) is no edge, `field_grid.py widen` writes the
# race past the edge, whose runs tune_knobs.py joins to the first race's, and
# `field_grid.py check` passes a race file at the chosen setting and fails, naming the run and
# the knob, on one that differs.
# usage: tests/tools/tune_knobs_test.sh path/to/stalesgd   (needs MNIST in data/)
set -euo pipefail

# shellcheck source=script_test_setup.sh
source "$(dirname "$0")/script_test_setup.sh"

cat >"$tmp/race.toml" <<TOML
model = "softmax"
workers = 8
batch = 16
delay = "exp:mean=10ms"
clock = "virtual"
time = "1s"
eval_every = "0.125s"
eval_samples = 500
holdout = 2000
seeds = [1, 2]
[[run]]
label = "exp | k-async"
rule = "k-async"
k = [2, 4]
lr = [0.001, 0.1, 1000.0]
TOML
"$stalesgd" race --config "$tmp/race.toml" --out "$tmp/race" >"$tmp/race.log" 2>&1 ||
  fail "stalesgd race failed: $(tail -n 1 "$tmp/race.log")"
"$python" tools/tune_knobs.py "$tmp/race" --csv "$tmp/tuning.csv" >"$tmp/out" 2>&1 ||
  fail "tune_knobs.py exited $?: $(cat "$tmp/out")"

"$python" - "$tmp/tuning.csv" <<'PY' || fail "the CSV is wrong (above)"
import csv, sys
rows = {r["setting"]: r for r in csv.DictReader(open(sys.argv[1]))}
assert set(rows) == {f"k={k}, lr={lr}" for k in (2, 4) for lr in ("0.001", "0.1", "1000")}, rows.keys()
assert all(r["run"] == "exp | k-async" for r in rows.values())
scored = sorted((float(r["mean"]), s) for s, r in rows.items() if r["mean"])
assert len(scored) == 4, scored  # the two diverged settings have no score
best, second = scored[0][1], scored[1][1]
assert rows[best]["chosen"] == "1" and rows[best]["rank"] == "1", rows[best]
assert rows[second]["rank"] == "2" and rows[second]["chosen"] == "0", rows[second]
assert sum(r["chosen"] == "1" for r in rows.values()) == 1
assert "lr=1000" not in best
# lr 0.1 lies inside the rate grid; K is 2 or 4, both edges of its grid.
assert best.endswith("lr=0.1"), best
assert rows[best]["at_edge"] == "k", rows[best]
assert rows[best]["apart_from_next"] in ("0", "1")
PY
grep -q "^exp | k-async .*chosen .*(at the grid's edge: k)" "$tmp/out" ||
  fail "the printout does not name the edge: $(cat "$tmp/out")"

# The race file at the chosen settings passes the check; one knob changed fails it.
chosen=$("$python" -c "import csv,sys; print([r['setting'] for r in csv.DictReader(open(sys.argv[1])) if r['chosen']=='1'][0])" "$tmp/tuning.csv")
k=${chosen#k=}; k=${k%%,*}
cat >"$tmp/best.toml" <<TOML
[[run]]
label = "exp | k-async"
rule = "k-async"
k = $k
lr = 0.1
TOML
"$python" tools/field_grid.py check "$tmp/tuning.csv" "$tmp/best.toml" >"$tmp/check.out" 2>&1 ||
  fail "the chosen settings failed the check: $(cat "$tmp/check.out")"
sed -i 's/^lr = 0.1/lr = 0.2/' "$tmp/best.toml"
if "$python" tools/field_grid.py check "$tmp/tuning.csv" "$tmp/best.toml" >"$tmp/check.out" 2>&1; then
  fail "a race file whose lr differs from the tuning's passed the check"
fi
grep -q "run 'exp | k-async' has lr = 0.2, the tuning chose 0.1" "$tmp/check.out" ||
  fail "the check did not name the run and knob: $(cat "$tmp/check.out")"
# K chosen at 2 or 4, both edges of its grid: `edges` names the cell and the knob and fails.
if "$python" tools/field_grid.py edges "$tmp/tuning.csv" >"$tmp/edges.out" 2>&1; then
  fail "a choice at its grid's edge passed the edges check"
fi
grep -q "'exp | k-async' chose k=$k, lr=0.1, at the edge of its grid in k: widen it" "$tmp/edges.out" ||
  fail "the edges check did not name the cell and knob: $(cat "$tmp/edges.out")"

# A value at the knob's own bound is no edge: K = 1, and K = P for a rule that takes K <= P.
"$python" - <<'PY' || fail "tune_knobs.at_bound is wrong (above)"
import sys
sys.path.insert(0, "tools")
from tune_knobs import at_bound
assert at_bound("k", "1", {"rule": "rennala", "workers": 8})
assert at_bound("k", "8", {"rule": "k-async", "workers": 8})
assert not at_bound("k", "8", {"rule": "rennala", "workers": 8})  # S may exceed P
assert not at_bound("k", "4", {"rule": "k-async", "workers": 8})
assert not at_bound("lr", "1", {"rule": "k-async", "workers": 8})
PY

# `widen` writes the race past the edge: K = 2 widens to 1 (the least), K = 4 to 6 and 8 (P),
# at the chosen rate, on seeds of its own; tune_knobs.py joins both races' settings.
"$python" tools/field_grid.py widen "$tmp/tuning.csv" >"$tmp/edges.toml" 2>"$tmp/widen.err" ||
  fail "field_grid.py widen failed: $(cat "$tmp/widen.err")"
if [ "$k" = 2 ]; then widened="1"; else widened="6 8"; fi
for v in $k $widened; do
  grep -q "^label = \"exp | k-async (k=$v, lr=0.1)\"$" "$tmp/edges.toml" ||
    fail "widen did not write k=$v: $(grep '^label' "$tmp/edges.toml")"
done
[ "$(grep -c '^\[\[run\]\]' "$tmp/edges.toml")" -eq $(($(wc -w <<<"$widened") + 1)) ] ||
  fail "widen wrote other runs: $(grep '^label' "$tmp/edges.toml")"
grep -q '^seeds = \[13, 14\]$' "$tmp/edges.toml" || fail "widen's seeds are not its own"
sed -i 's/^time = "20s"/time = "1s"/; s/^eval_every = "0.5s"/eval_every = "0.125s"/;
        s/^eval_samples = 2000/eval_samples = 500/; s/^holdout = 10000/holdout = 2000/' \
  "$tmp/edges.toml"
"$stalesgd" race --config "$tmp/edges.toml" --out "$tmp/edges" >"$tmp/edges.log" 2>&1 ||
  fail "the widened race failed: $(tail -n 1 "$tmp/edges.log")"
"$python" tools/tune_knobs.py "$tmp/race" "$tmp/edges" --csv "$tmp/both.csv" >"$tmp/out" 2>&1 ||
  fail "tune_knobs.py on two races exited $?: $(cat "$tmp/out")"
"$python" - "$tmp/both.csv" "$k" "$widened" <<'PY' || fail "the joined tuning is wrong (above)"
import csv, sys
rows = {r["setting"]: r for r in csv.DictReader(open(sys.argv[1]))}
k, widened = sys.argv[2], sys.argv[3].split()
for v in widened:
    assert f"k={v}, lr=0.1" in rows, rows.keys()
    assert rows[f"k={v}, lr=0.1"]["seeds"] == "2", rows[f"k={v}, lr=0.1"]
# The chosen setting of the first race ran again on two more seeds: four in all.
assert rows[f"k={k}, lr=0.1"]["seeds"] == "4", rows[f"k={k}, lr=0.1"]
assert sum(r["chosen"] == "1" for r in rows.values()) == 1
PY
echo "$test_name: ok"
