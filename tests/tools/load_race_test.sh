#!/usr/bin/env bash
# End-to-end check of tools/load_race.py on short virtual-clock runs: a softmax race with 2 seeds
# (one row per run, one per evals.csv row, seeds grouped, updates/gradients on request, a run
# folder gone missing), an mlp race sweeping `hidden` (list values as one text cell), a lenet
# race, one `stalesgd train --out` folder finished and unfinished, the snippet of
# docs/outputs.md on the softmax and mlp races, and bad folders (one error line, status 1).
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

# A column results.csv gains later is read by name; a run whose folder is gone is `missing`,
# and a note says so.
cp -r "$race" "$tmp/changed"
sed -i '1s/$/,new_column/; 2,$s/$/,7/' "$tmp/changed/results.csv"
gone=$(sed -n 2p "$tmp/changed/results.csv" | "$python" -c 'import csv,sys; print(next(csv.reader(sys.stdin))[1])')
gone_rows=$(rows "$tmp/changed/$gone/evals.csv")
rm -r "${tmp:?}/changed/$gone"
"$python" - "$tmp/changed" "$gone" "$((n_snapshots - gone_rows))" <<'PY' 2>"$tmp/changed.err" ||
import sys
sys.path.insert(0, "tools")
from load_race import load_race
race = load_race(sys.argv[1])
runs = race.runs.set_index("slug")
assert runs["new_column"].eq(7).all(), runs["new_column"]
assert runs.loc[sys.argv[2], "status"] == "missing", runs["status"]
assert (runs.drop(index=sys.argv[2])["status"] == "complete").all()
assert len(race.snapshots) == int(sys.argv[3]), (len(race.snapshots), sys.argv[3])
assert len(race.notes) == 1 and sys.argv[2] in race.notes[0], race.notes
PY
  fail "changed race: $(cat "$tmp/changed.err")"
grep -qx "load_race.py: note: 1 of 6 runs ($gone) of results.csv have no folder: .*" "$tmp/changed.err" ||
  fail "no note of the missing run: $(cat "$tmp/changed.err")"

# Checks every loaded folder passes (PYTHONPATH=$tmp, `from loaded import load_checked`): one row
# per run, every cell a scalar (a list in a cell is what broke mlp races), snapshots and updates
# complete with their run's config.
cat >"$tmp/loaded.py" <<'PY'
import sys
sys.path.insert(0, "tools")
import pandas as pd
from load_race import load_race


def load_checked(path, n_runs):
    race = load_race(path, updates=True)
    runs, snaps = race.runs, race.snapshots
    assert len(runs) == n_runs, (len(runs), n_runs)
    for table in (runs, snaps, race.updates):
        for column in table.columns:
            lists = [v for v in table[column] if isinstance(v, (list, tuple, dict, set))]
            assert not lists, (column, lists[:1])
    n_snaps = n_updates = 0
    for _, run in runs.iterrows():
        evals = pd.read_csv(f"{path}/{run['slug']}/evals.csv")
        mine = snaps[snaps["slug"] == run["slug"]]
        assert list(mine["test_error"]) == list(evals["test_error"]), run["slug"]
        for column in (c for c in runs.columns if c.startswith("config.")):
            assert (mine[column].astype(str) == str(run[column])).all(), (run["slug"], column)
        n_snaps += len(evals)
        n_updates += len(pd.read_csv(f"{path}/{run['slug']}/updates.csv"))
    assert len(snaps) == n_snaps and len(race.updates) == n_updates, \
        (len(snaps), n_snaps, len(race.updates), n_updates)
    return race
PY
# The command line on a folder that loads whole: status 0, nothing on stderr, the summary line.
summary_ok() {  # DIR RUNS GROUPS
  "$python" tools/load_race.py "$1" >"$tmp/out" 2>"$tmp/err" || fail "$1: exit $?: $(cat "$tmp/err")"
  [ ! -s "$tmp/err" ] || fail "$1: load_race.py wrote to stderr: $(cat "$tmp/err")"
  head -n 1 "$tmp/out" | grep -qx "$1: $2 runs in $3 groups, [0-9]* snapshots" ||
    fail "$1: summary line: $(head -n 1 "$tmp/out")"
}

# An mlp race sweeping hidden: a list is one text cell ("256,128", as results.csv writes it).
cat >"$tmp/mlp.toml" <<'TOML'
model = "mlp"
hidden = [[64], [256, 128]]
rule = "async"
workers = 4
delay = "exp:mean=10ms"
clock = "virtual"
time = "0.3s"
eval_every = "0.1s"
eval_samples = 200
seeds = [1, 2]
[[run]]
label = "async"
TOML
mlp="$tmp/mlp"
"$stalesgd" race --config "$tmp/mlp.toml" --out "$mlp" >"$tmp/mlp.log" 2>&1 ||
  fail "stalesgd race (mlp) failed: $(tail -n 1 "$tmp/mlp.log")"
summary_ok "$mlp" 4 2
"$python" tools/load_race.py "$mlp" --csv runs >"$tmp/mlp-runs.csv" || fail "--csv runs (mlp) exited $?"
PYTHONPATH="$tmp" "$python" - "$mlp" "$tmp/mlp-runs.csv" <<'PY' || fail "mlp race: see above"
import sys
from loaded import load_checked, pd
race = load_checked(sys.argv[1], 4)
runs = race.runs
hidden = ["64", "64", "256,128", "256,128"]
assert runs["config.hidden"].tolist() == hidden, runs["config.hidden"].tolist()
results = pd.read_csv(f"{sys.argv[1]}/results.csv", dtype=str)
assert runs["config.hidden"].tolist() == results["hidden"].tolist(), results["hidden"].tolist()
assert runs["summary.model"].tolist()[2] == "mlp(784-256-128-10)", runs["summary.model"].tolist()
assert runs["summary.failures"].eq("").all(), runs["summary.failures"].tolist()  # [] -> ""
sizes = runs.groupby("group").size().to_dict()
assert sizes == {"async (hidden=64)": 2, "async (hidden=256,128)": 2}, sizes
assert race.notes == [], race.notes
csv = pd.read_csv(sys.argv[2], dtype=str)  # the text cell survives a CSV round trip
assert csv["config.hidden"].tolist() == hidden, csv["config.hidden"].tolist()
PY

# A lenet race (its config has no hidden), two runs on a tiny budget.
cat >"$tmp/lenet.toml" <<'TOML'
model = "lenet"
workers = 2
delay = "exp:mean=10ms"
clock = "virtual"
iterations = 10
eval_every = "1s"
eval_samples = 100
[[run]]
label = "sync"
rule = "sync"
[[run]]
label = "async"
rule = "async"
TOML
lenet="$tmp/lenet"
"$stalesgd" race --config "$tmp/lenet.toml" --out "$lenet" >"$tmp/lenet.log" 2>&1 ||
  fail "stalesgd race (lenet) failed: $(tail -n 1 "$tmp/lenet.log")"
summary_ok "$lenet" 2 2
PYTHONPATH="$tmp" "$python" - "$lenet" <<'PY' || fail "lenet race: see above"
import sys
from loaded import load_checked
runs = load_checked(sys.argv[1], 2).runs
assert runs["config.model"].eq("lenet").all() and "config.hidden" not in runs.columns
assert runs["summary.model"].str.startswith("lenet(").all(), runs["summary.model"].tolist()
assert runs["final_test_error"].tolist() == runs["summary.final_test_error"].tolist()
assert runs["label"].tolist() == ["sync", "async"] and runs["config.iterations"].eq(10).all()
PY

# One `stalesgd train --out` folder: a run of its own, labelled by its folder's name.
run="$tmp/one-run"
"$stalesgd" train --model mlp --hidden 256,128 --workers 2 --rule async --delay exp:mean=10ms \
  --clock virtual --time 0.2s --eval-every 0.1s --eval-samples 200 --out "$run" >"$tmp/run.log" 2>&1 ||
  fail "stalesgd train failed: $(tail -n 1 "$tmp/run.log")"
summary_ok "$run" 1 1
final=$("$python" -c 'import json,sys; print("%.4f" % json.load(open(sys.argv[1]))["final_test_error"])' "$run/summary.json")
grep -qE "^one-run +complete +$(rows "$run/evals.csv") +$final$" "$tmp/out" ||
  fail "no line 'one-run complete $(rows "$run/evals.csv") $final' in: $(cat "$tmp/out")"
PYTHONPATH="$tmp" "$python" - "$run" <<'PY' || fail "run folder: see above"
import json
import sys
from loaded import load_checked
race = load_checked(sys.argv[1], 1)
run = race.runs.iloc[0]
summary = json.load(open(f"{sys.argv[1]}/summary.json"))
assert (run["label"], run["slug"], run["status"]) == ("one-run", ".", "complete"), run[:4]
assert run["summary.final_test_error"] == summary["final_test_error"]
assert run["summary.iterations"] == summary["iterations"] and run["config.hidden"] == "256,128"
assert run["config.workers"] == 2 and race.notes == [], race.notes
PY
# The same run still going (summary.json says running, as written at the start): its CSVs and
# config are loaded, and a note says so.
cp -r "$run" "$tmp/going"
"$python" - "$tmp/going/summary.json" <<'PY' || fail "cannot write a running summary"
import json, sys
s = json.load(open(sys.argv[1]))
json.dump({"status": "running", "config": s["config"], "provenance": s["provenance"]}, open(sys.argv[1], "w"))
PY
"$python" tools/load_race.py "$tmp/going" >"$tmp/out" 2>"$tmp/err" || fail "going run: exit $?: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^load_race.py: note: .* says running' "$tmp/err" ||
  fail "going run: want one note line, got: $(cat "$tmp/err")"
PYTHONPATH="$tmp" "$python" - "$tmp/going" <<'PY' 2>"$tmp/err" || fail "going run: $(cat "$tmp/err")"
import sys
from loaded import load_checked
race = load_checked(sys.argv[1], 1)
assert race.runs["status"].tolist() == ["running"] and len(race.notes) == 1, race.notes
assert race.runs["config.hidden"].tolist() == ["256,128"], race.runs.columns
assert "summary.final_test_error" not in race.runs.columns
PY
# The same run with no summary.json at all (cut before it started): its CSVs are loaded, and a
# note says so.
cp -r "$run" "$tmp/running"
rm "$tmp/running/summary.json" "$tmp/running/workers.csv"
"$python" tools/load_race.py "$tmp/running" >"$tmp/out" 2>"$tmp/err" || fail "running run: exit $?: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^load_race.py: note: .* no summary.json' "$tmp/err" ||
  fail "running run: want one note line, got: $(cat "$tmp/err")"
grep -qE "^running +unfinished +$(rows "$run/evals.csv") +$" "$tmp/out" || fail "running run: $(cat "$tmp/out")"
PYTHONPATH="$tmp" "$python" - "$tmp/running" <<'PY' 2>"$tmp/err" || fail "running run: $(cat "$tmp/err")"
import sys
from loaded import load_checked
race = load_checked(sys.argv[1], 1)
assert race.runs["status"].tolist() == ["unfinished"] and len(race.notes) == 1, race.notes
assert not any(c.startswith(("config.", "summary.")) for c in race.runs.columns)
PY

# The snippet of docs/outputs.md, run as a reader would: from a checkout with a race in
# runs/quickstart (a link to the softmax race, then the mlp one), so the documented code cannot
# drift.
snippet="$tmp/snippet.py"
awk '/^## Loading a race in pandas/ { section = 1; next }
     section && /^## / { exit }
     section && /^```python$/ { code = 1; next }
     code && /^```$/ { exit }
     code { print }' docs/outputs.md >"$snippet"
[ -s "$snippet" ] || fail "no python snippet under '## Loading a race in pandas' in docs/outputs.md"
mkdir -p "$tmp/reader/runs"
ln -s "$repo/tools" "$tmp/reader/tools"
for case in "$race|sync|k-async K=2|async, lr 0.1" "$mlp|async (hidden=64)|async (hidden=256,128)"; do
  IFS='|' read -r dir groups <<<"$case"
  ln -sfn "$dir" "$tmp/reader/runs/quickstart"
  (cd "$tmp/reader" && "$python" "$snippet") >"$tmp/snippet.out" 2>"$tmp/snippet.err" ||
    fail "the docs/outputs.md snippet failed on $dir: $(tail -n 3 "$tmp/snippet.err")"
  IFS='|' read -ra groups <<<"$groups"
  for group in "${groups[@]}"; do
    grep -qF "$group" "$tmp/snippet.out" || fail "the snippet's output lacks '$group': $(cat "$tmp/snippet.out")"
  done
done

# Bad folders: one line on stderr, status 1; as a module a ValueError. A folder holding files and
# folders but no run's is neither a race nor a run.
mkdir -p "$tmp/empty" "$tmp/neither/sub"
echo notes >"$tmp/neither/notes.txt"
echo notes >"$tmp/neither/sub/results.txt"
for bad in "$tmp/no-such-dir" "$tmp/empty" "$tmp/neither"; do
  status=0
  "$python" tools/load_race.py "$bad" >"$tmp/bad.out" 2>"$tmp/bad.err" || status=$?
  [ "$status" -eq 1 ] || fail "$bad: exit status $status, want 1"
  [ "$(wc -l <"$tmp/bad.err")" -eq 1 ] || fail "$bad: want one stderr line, got: $(cat "$tmp/bad.err")"
  grep -q '^load_race.py: error: .*stalesgd race' "$tmp/bad.err" || fail "$bad: message: $(cat "$tmp/bad.err")"
  [ ! -s "$tmp/bad.out" ] || fail "$bad: wrote to stdout"
  "$python" - "$bad" <<'PY' || fail "$bad: as a module: see above"
import sys
sys.path.insert(0, "tools")
from load_race import load_race
try:
    load_race(sys.argv[1])
except ValueError as e:
    assert sys.argv[1] in str(e) and "\n" not in str(e), str(e)
else:
    raise AssertionError("no ValueError")
PY
done
grep -q 'neither a race .* nor a run' "$tmp/bad.err" || fail "neither: message: $(cat "$tmp/bad.err")"

# Seeds of one run written before and after a switch existed group together (a switch off is
# as good as unrecorded); a switch on, or another value, makes another group.
"$python" - <<'PY' || fail "group_names: see above"
import sys
sys.path.insert(0, "tools")
from load_race import group_names
old, off, on = {"lr": 0.1, "seed": 1}, {"lr": 0.1, "seed": 2, "record_drift": False}, \
    {"lr": 0.1, "seed": 3, "record_drift": True}
names = group_names(["a (seed 1)", "a (seed 2)", "a (seed 3)"], [old, off, on])
assert names == ["a", "a", "a [2]"], names
PY

echo "load_race_test: ok (softmax race: $n_runs runs, $n_snapshots snapshots, $n_gradients gradients;" \
  "mlp race: 4 runs; lenet race: 2 runs; a run folder finished and unfinished; 3 bad folders)"
