#!/usr/bin/env bash
# End-to-end check of tools/load_race.py on a short virtual-clock race with 2 seeds: one row per
# run, one per evals.csv row, seeds grouped, updates/gradients on request, a run folder gone
# missing, the snippet of docs/outputs.md, and bad folders (one error line, status 1).
# usage: tests/tools/load_race_test.sh path/to/stalesgd   (needs MNIST in data/ and python3-pandas)
set -euo pipefail

# shellcheck source=script_test_setup.sh
source "$(dirname "$0")/script_test_setup.sh"
repo=$PWD

"$python" -c 'import pandas' 2>/dev/null || fail "no pandas: install python3-pandas (tools/setup.sh plot)"

cat >"$tmp/race.toml" <<'TOML'
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
[[run]]
label = "async, lr 0.1"
rule = "async"
lr = 0.1
TOML
race="$tmp/race"
"$stalesgd" race --config "$tmp/race.toml" --out "$race" >"$tmp/race.log" 2>&1 ||
  fail "stalesgd race failed: $(tail -n 1 "$tmp/race.log")"

# The expected counts, from the files themselves (header lines excluded).
rows() { echo $(($(wc -l <"$1") - 1)); }
n_runs=$(rows "$race/results.csv")
[ "$n_runs" -eq 6 ] || fail "the race wrote $n_runs runs, want 6"
n_snapshots=0 n_updates=0 n_gradients=0
for dir in "$race"/*/; do
  n_snapshots=$((n_snapshots + $(rows "$dir/evals.csv")))
  n_updates=$((n_updates + $(rows "$dir/updates.csv")))
  n_gradients=$((n_gradients + $(rows "$dir/gradients.csv")))
done
[ "$n_snapshots" -gt "$n_runs" ] || fail "only $n_snapshots snapshots in $n_runs runs"

# The command line's summary.
"$python" tools/load_race.py "$race" >"$tmp/summary.out" 2>"$tmp/summary.err" ||
  fail "load_race.py exited $?: $(cat "$tmp/summary.err")"
[ ! -s "$tmp/summary.err" ] || fail "load_race.py wrote to stderr: $(cat "$tmp/summary.err")"
head -n 1 "$tmp/summary.out" | grep -qxF "$race: $n_runs runs in 3 groups, $n_snapshots snapshots" ||
  fail "summary line: $(head -n 1 "$tmp/summary.out")"
grep -qxF "  async, lr 0.1: 2 runs (seeds 1, 2)" "$tmp/summary.out" ||
  fail "no group 'async, lr 0.1' of seeds 1, 2 in: $(cat "$tmp/summary.out")"

# --csv writes the table itself: a header and one line per snapshot.
"$python" tools/load_race.py "$race" --csv snapshots >"$tmp/snapshots.csv" || fail "--csv exited $?"
[ "$(rows "$tmp/snapshots.csv")" -eq "$n_snapshots" ] ||
  fail "--csv snapshots: $(rows "$tmp/snapshots.csv") rows, want $n_snapshots"

# The module: row counts, groups, joined columns, and columns read by name.
"$python" - "$race" "$n_runs" "$n_snapshots" "$n_updates" "$n_gradients" <<'PY' || fail "module checks: see above"
import sys
sys.path.insert(0, "tools")
import pandas as pd
from load_race import load_race
race_dir, n_runs, n_snaps, n_updates, n_grads = sys.argv[1], *map(int, sys.argv[2:])
race = load_race(race_dir)
runs, snaps = race.runs, race.snapshots
assert race.updates is None and race.gradients is None, "updates/gradients loaded unasked"
assert len(runs) == n_runs, (len(runs), n_runs)
assert len(snaps) == n_snaps, (len(snaps), n_snaps)
results = pd.read_csv(f"{race_dir}/results.csv")
assert list(runs["label"]) == list(results["label"]), "runs not in results.csv's order"
for column in results.columns:  # every results.csv column, under its own name
    assert column in runs.columns, column
assert (runs["status"] == "complete").all(), runs["status"].tolist()
assert runs["config.workers"].eq(4).all() and runs["config.clock"].eq("virtual").all()
assert runs.loc[runs["label"].str.startswith("async"), "config.lr"].eq(0.1).all()
assert "summary.staleness.mean" in runs.columns and "summary.theory.method" in runs.columns
sizes = runs.groupby("group").size().to_dict()
assert sizes == {"sync": 2, "k-async K=2": 2, "async, lr 0.1": 2}, sizes
assert sorted(runs.groupby("group")["config.seed"].apply(sorted).tolist()) == [[1, 2]] * 3
# Each snapshot carries its run's label, group and config; counts match per run.
per_run = snaps.groupby("slug", observed=True).size()
for _, run in runs.iterrows():
    evals = pd.read_csv(f"{race_dir}/{run['slug']}/evals.csv")
    mine = snaps[snaps["slug"] == run["slug"]]
    assert per_run[run["slug"]] == len(evals), run["slug"]
    assert (mine["label"] == run["label"]).all() and (mine["group"] == run["group"]).all()
    assert (mine["config.seed"] == run["config.seed"]).all()
    assert list(mine["test_error"]) == list(evals["test_error"]), run["slug"]
    # evals.csv's last column, read by name; without --l2 it is the training loss.
    assert list(mine["train_objective"]) == list(mine["train_loss"]), run["slug"]
race = load_race(race_dir, updates=True, gradients=True)
assert len(race.updates) == n_updates and len(race.gradients) == n_grads, \
    (len(race.updates), n_updates, len(race.gradients), n_grads)
assert {"label", "slug", "group", "iteration", "staleness"} <= set(race.gradients.columns)
PY

# A column results.csv gains later is read by name; a run whose folder is gone is `missing`.
cp -r "$race" "$tmp/changed"
sed -i '1s/$/,new_column/; 2,$s/$/,7/' "$tmp/changed/results.csv"
gone=$(sed -n 2p "$tmp/changed/results.csv" | "$python" -c 'import csv,sys; print(next(csv.reader(sys.stdin))[1])')
gone_rows=$(rows "$tmp/changed/$gone/evals.csv")
rm -r "${tmp:?}/changed/$gone"
"$python" - "$tmp/changed" "$gone" "$((n_snapshots - gone_rows))" <<'PY' || fail "changed race: see above"
import sys
sys.path.insert(0, "tools")
from load_race import load_race
race = load_race(sys.argv[1])
runs = race.runs.set_index("slug")
assert runs["new_column"].eq(7).all(), runs["new_column"]
assert runs.loc[sys.argv[2], "status"] == "missing", runs["status"]
assert (runs.drop(index=sys.argv[2])["status"] == "complete").all()
assert len(race.snapshots) == int(sys.argv[3]), (len(race.snapshots), sys.argv[3])
PY

# The snippet of docs/outputs.md, run as a reader would: from a checkout with a race in
# runs/quickstart (here a link to this race), so the documented code cannot drift.
snippet="$tmp/snippet.py"
awk '/^## Loading a race in pandas/ { section = 1; next }
     section && /^## / { exit }
     section && /^```python$/ { code = 1; next }
     code && /^```$/ { exit }
     code { print }' docs/outputs.md >"$snippet"
[ -s "$snippet" ] || fail "no python snippet under '## Loading a race in pandas' in docs/outputs.md"
mkdir -p "$tmp/reader/runs"
ln -s "$repo/tools" "$tmp/reader/tools"
ln -s "$race" "$tmp/reader/runs/quickstart"
(cd "$tmp/reader" && "$python" "$snippet") >"$tmp/snippet.out" 2>"$tmp/snippet.err" ||
  fail "the docs/outputs.md snippet failed: $(tail -n 3 "$tmp/snippet.err")"
for group in "sync" "k-async K=2" "async, lr 0.1"; do
  grep -qF "$group" "$tmp/snippet.out" || fail "the snippet's output lacks '$group': $(cat "$tmp/snippet.out")"
done

# Bad folders: one line on stderr, status 1.
mkdir "$tmp/empty"
for bad in "$tmp/no-such-dir" "$tmp/empty"; do
  status=0
  "$python" tools/load_race.py "$bad" >"$tmp/bad.out" 2>"$tmp/bad.err" || status=$?
  [ "$status" -eq 1 ] || fail "$bad: exit status $status, want 1"
  [ "$(wc -l <"$tmp/bad.err")" -eq 1 ] || fail "$bad: want one stderr line, got: $(cat "$tmp/bad.err")"
  grep -q '^load_race.py: error: .*stalesgd race' "$tmp/bad.err" || fail "$bad: message: $(cat "$tmp/bad.err")"
  [ ! -s "$tmp/bad.out" ] || fail "$bad: wrote to stdout"
done

echo "load_race_test: ok ($n_runs runs, $n_snapshots snapshots, $n_gradients gradients)"
