#!/usr/bin/env bash
# End-to-end check of tools/tune_lr.py on a short virtual-clock race with a holdout: async at
# lr 0.001, 0.1 and 1000 (which diverges), 2 seeds. The rate with the lowest held-out error
# (0.1: 0.001 barely moves in 1 s) is chosen; the diverged rate has no score and is never
# chosen; the CSV's rows read back through tools/paper_tables.py's cell lookup; a race without
# a holdout is one error line and status 1.
# usage: tests/tools/tune_lr_test.sh path/to/stalesgd   (needs MNIST in data/, matplotlib)
set -euo pipefail

# shellcheck source=script_test_setup.sh
source "$(dirname "$0")/script_test_setup.sh"

race_toml() {  # $1 = the holdout line
  cat <<TOML
model = "softmax"
workers = 4
batch = 16
lr = [0.001, 0.1, 1000.0]
rule = "async"
delay = "exp:mean=10ms"
clock = "virtual"
time = "1s"
eval_every = "0.125s"
eval_samples = 500
$1
seeds = [1, 2]
[[run]]
label = "async"
TOML
}
race_toml "holdout = 2000" >"$tmp/race.toml"
"$stalesgd" race --config "$tmp/race.toml" --out "$tmp/race" >"$tmp/race.log" 2>&1 ||
  fail "stalesgd race failed: $(tail -n 1 "$tmp/race.log")"

"$python" tools/tune_lr.py "$tmp/race" --csv "$tmp/tuning.csv" >"$tmp/out" 2>&1 ||
  fail "tune_lr.py exited $?: $(cat "$tmp/out")"
grep -q "lr 0.1 .*<- chosen" "$tmp/out" || fail "lr 0.1 not chosen: $(cat "$tmp/out")"

"$python" - "$tmp/tuning.csv" <<'PY' || fail "the CSV is wrong (above)"
import csv, sys
sys.path.insert(0, "tools")
from pathlib import Path
from paper_tables import Docs

rows = {r["at"]: r for r in csv.DictReader(open(sys.argv[1]))}
assert set(rows) == {"lr=0.001", "lr=0.1", "lr=1000"}, rows.keys()
assert [r["chosen"] for r in (rows["lr=0.001"], rows["lr=0.1"], rows["lr=1000"])] == ["0", "1", "0"]
assert rows["lr=1000"]["mean"] == "" and rows["lr=1000"]["reached"] == "0", rows["lr=1000"]
assert float(rows["lr=0.1"]["mean"]) < float(rows["lr=0.001"]["mean"]), rows
assert rows["lr=0.1"]["apart_from_next"] in ("0", "1")
cell = Docs(Path(sys.argv[1]).parent).cell("tuning.csv", "async",
                                            "val_error, last 0.25 of the time", "lr=0.1")
assert abs(cell.mean - float(rows["lr=0.1"]["mean"])) < 1e-12
PY

race_toml "" >"$tmp/plain.toml"
sed -i 's/^lr = .*/lr = 0.1/' "$tmp/plain.toml"
"$stalesgd" race --config "$tmp/plain.toml" --out "$tmp/plain" >"$tmp/plain.log" 2>&1 ||
  fail "stalesgd race failed: $(tail -n 1 "$tmp/plain.log")"
set +e
"$python" tools/tune_lr.py "$tmp/plain" >"$tmp/plain.out" 2>&1
status=$?
set -e
[ "$status" = 1 ] || fail "a race without a holdout exited $status"
[ "$(wc -l <"$tmp/plain.out")" = 1 ] && grep -q "^tune_lr.py: error: .*ran without a holdout" \
  "$tmp/plain.out" || fail "a race without a holdout said: $(cat "$tmp/plain.out")"
echo "$test_name: ok"
