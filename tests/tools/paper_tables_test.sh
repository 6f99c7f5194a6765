#!/usr/bin/env bash
# tools/paper_tables.py: the tables of docs/reproducing-the-paper.md and its finding pages
# docs/paper/*.md (and of docs/theory.md and docs/the-field.md) equal what their CSVs in
# docs/data/ give and every claim marker holds (--check, exit 0); a number changed in a copy of
# one CSV fails the check naming its page and table; intervals made to overlap fail it naming the
# claim; a finding page gone fails it naming its table; a comparison sentence without a claim or
# no-claim marker fails it naming its line, and so does a range claim the CSV does not give; a
# table of measured numbers neither generated nor marked hand-typed fails naming its line.
# And the fix behind
# "—": a seed's value past its run's last snapshot is missing, and so is the mean over seeds
# (tools/paper_runs.py), also end to end on a hand-written race of two seeds of unequal length.
# usage: tests/tools/paper_tables_test.sh path/to/stalesgd   (the binary is not run; needs numpy
# and matplotlib)
set -euo pipefail

# shellcheck source=script_test_setup.sh
source "$(dirname "$0")/script_test_setup.sh"

# (a) The repository's pages: every table and every claim as its CSVs say, on every page that
# has markers (the paper's, docs/theory.md's error tables, docs/the-field.md's ranking races).
"$python" tools/paper_tables.py --check >"$tmp/check.out" 2>"$tmp/check.err" ||
  fail "paper_tables.py --check on docs/ exited $?: $(cat "$tmp/check.err")"
# One page alone (--doc) is checked too.
"$python" tools/paper_tables.py --doc docs/the-field.md --check >"$tmp/check.out" \
  2>"$tmp/check.err" ||
  fail "paper_tables.py --doc docs/the-field.md --check exited $?: $(cat "$tmp/check.err")"

# A copy of the pages and their CSVs to change.
copy() {
  rm -rf "$tmp/docs" && mkdir -p "$tmp/docs/data" "$tmp/docs/paper"
  cp docs/*.md "$tmp/docs/"
  cp docs/paper/*.md "$tmp/docs/paper/"
  cp docs/data/*.csv "$tmp/docs/data/"
}
edit_row() {  # FILE RUN QUANTITY AT COLUMN VALUE: set one cell of a --csv file of paper_figures.py
  "$python" - "$@" <<'PY'
import csv, sys
path, run, quantity, at, column, value = sys.argv[1:]
rows = list(csv.DictReader(open(path, newline="")))
hit = [r for r in rows if (r["run"], r["quantity"], r["at"]) == (run, quantity, at)]
assert len(hit) == 1, f"{path}: {len(hit)} rows {run!r} {quantity!r} {at!r}"
hit[0][column] = value
with open(path, "w", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
PY
}

# (b) One number of finding 2's CSV changed: the check fails and names the table.
copy
edit_row "$tmp/docs/data/paper-2-k-sync-tradeoff.csv" K=4 test_error t=10 mean 0.1234
status=0
"$python" tools/paper_tables.py --docs "$tmp/docs" --check >/dev/null 2>"$tmp/b.err" || status=$?
[ "$status" -eq 1 ] || fail "a changed CSV number: --check exited $status, want 1"
grep -q "^$tmp/docs/paper/finding-2-k-sync-tradeoff.md: table finding-2 differs from its CSVs (1 lines): row '4', column 'at 10 s': doc '0.093 ± 0.002', CSV gives '0.123 ± 0.002'$" \
  "$tmp/b.err" || fail "a changed CSV number: no line naming table finding-2 in: $(cat "$tmp/b.err")"
# Without --check the tables are rewritten, and then they check.
"$python" tools/paper_tables.py --docs "$tmp/docs" >/dev/null ||
  fail "rewriting the copy's tables exited $?"
grep -qF "| 4 | 6.34 ± 0.06 (6.35) | 0.161 ± 0.013 | 0.123 ± 0.002 |" \
  "$tmp/docs/paper/finding-2-k-sync-tradeoff.md" ||
  fail "the rewritten table does not show the changed number"
"$python" tools/paper_tables.py --docs "$tmp/docs" --check ||
  fail "--check after rewriting the tables exited $?"

# (c) k-batch-sync's 95% interval to 0.09 widened until it overlaps k-sync's: the claim that
# k-batch-sync K = 4 is there first, apart, fails by name (the tables it feeds differ too).
copy
edit_row "$tmp/docs/data/k-batch-sync-vs-k-sync-target.csv" "k-batch-sync K=4" time_to_target \
  "test_error<=0.09" ci95_half_width 2.5
status=0
"$python" tools/paper_tables.py --docs "$tmp/docs" --check >/dev/null 2>"$tmp/c.err" || status=$?
[ "$status" -eq 1 ] || fail "overlapping intervals: --check exited $status, want 1"
claim='below docs/data/k-batch-sync-vs-k-sync-target.csv "k-batch-sync K=4" "k-sync K=4" time_to_target "test_error<=0.09"'
grep -qE "^$tmp/docs/paper/k-batch-sync-vs-k-sync.md:[0-9]+: claim '$claim': does not hold: " \
  "$tmp/c.err" ||
  fail "overlapping intervals: no line naming the claim in: $(cat "$tmp/c.err")"
# An unknown verb or a row that is not there is a failure too, not a pass.
copy
printf '%s\n' 'Text. <!-- claim: faster docs/data/paper-1-time-to-target.csv "async" "sync" time_to_target "test_error<=0.3" -->' \
  'Text. <!-- claim: apart docs/data/paper-1-time-to-target.csv "async" "nobody" time_to_target "test_error<=0.3" -->' \
  >>"$tmp/docs/reproducing-the-paper.md"
status=0
"$python" tools/paper_tables.py --docs "$tmp/docs" --check >/dev/null 2>"$tmp/bad.err" ||
  status=$?
[ "$status" -eq 1 ] &&
  [ "$(grep -c "^$tmp/docs/reproducing-the-paper.md:[0-9]*: claim " "$tmp/bad.err")" -eq 2 ] ||
  fail "a bad verb and a missing row: status $status, $(cat "$tmp/bad.err")"
# (e) Comparison sentences: one planted without a marker fails naming its page and line; the
# same with a no-claim marker passes; a range claim whose ends the CSV does not give fails.
copy
printf '\n%s\n' 'Async took 2.08 s against sync'"'"'s 3.72 s, faster.' >>"$tmp/docs/the-field.md"
line=$(wc -l <"$tmp/docs/the-field.md")
status=0
"$python" tools/paper_tables.py --docs "$tmp/docs" --check >/dev/null 2>"$tmp/cmp.err" || status=$?
[ "$status" -eq 1 ] &&
  grep -q "^$tmp/docs/the-field.md:$line: comparison without a claim marker" "$tmp/cmp.err" ||
  fail "an unmarked comparison: status $status, want 1 naming the-field.md:$line: $(cat "$tmp/cmp.err")"
copy
printf '\n%s\n' 'Async took 2.08 s against sync'"'"'s 3.72 s, faster <!-- no-claim: a test -->.' \
  >>"$tmp/docs/the-field.md"
"$python" tools/paper_tables.py --docs "$tmp/docs" --check >/dev/null 2>"$tmp/nc.err" ||
  fail "a no-claim comparison: --check exited $?: $(cat "$tmp/nc.err")"
copy
range='range docs/data/the-field.csv "* | k-*" "* | async" time_to_target "" 2 5'
printf '\n%s\n' "The K-of-P rules took 2-5 times as long as async <!-- claim: $range -->." \
  >>"$tmp/docs/the-field.md"
line=$(wc -l <"$tmp/docs/the-field.md")
status=0
"$python" tools/paper_tables.py --docs "$tmp/docs" --check >/dev/null 2>"$tmp/rg.err" || status=$?
[ "$status" -eq 1 ] &&
  grep -qF "$tmp/docs/the-field.md:$line: claim '$range': print LO and HI to two significant figures at least, not 2-5 (16 values from 2.288 to 5.4)" \
    "$tmp/rg.err" ||
  fail "a wrong range claim: status $status, $(cat "$tmp/rg.err")"
# Two significant figures that the CSV does not give fail too; the CSV's ends hold.
copy
printf '\n%s\n' "The K-of-P rules took 2.3-5.2 times as long as async <!-- claim: ${range% 2 5} 2.3 5.2 -->." \
  >>"$tmp/docs/the-field.md"
status=0
"$python" tools/paper_tables.py --docs "$tmp/docs" --check >/dev/null 2>"$tmp/rg1.err" || status=$?
[ "$status" -eq 1 ] && grep -qF "does not hold: 16 values from 2.288 to 5.4, 2.3-5.4 as printed" "$tmp/rg1.err" ||
  fail "a range the CSV does not give: status $status, $(cat "$tmp/rg1.err")"
copy
printf '\n%s\n' "The K-of-P rules took 2.29-5.40 times as long as async <!-- claim: ${range% 2 5} 2.29 5.40 -->." \
  >>"$tmp/docs/the-field.md"
"$python" tools/paper_tables.py --docs "$tmp/docs" --check >/dev/null 2>"$tmp/rg2.err" ||
  fail "a right range claim: --check exited $?: $(cat "$tmp/rg2.err")"
# (f) A table of measured numbers typed by hand fails naming its page and line; marked
# hand-typed (where its numbers come from) it passes; a table of words needs no marker.
copy
printf '\n%s\n%s\n%s\n' '| rule | s/it |' '|---|---:|' '| async | 0.0025 |' >>"$tmp/docs/the-field.md"
line=$(($(wc -l <"$tmp/docs/the-field.md") - 2))
status=0
"$python" tools/paper_tables.py --docs "$tmp/docs" --check >/dev/null 2>"$tmp/ht.err" || status=$?
[ "$status" -eq 1 ] &&
  grep -q "^$tmp/docs/the-field.md:$line: a table of measured numbers neither generated" "$tmp/ht.err" ||
  fail "an unmarked hand-typed table: status $status, want 1 naming the-field.md:$line: $(cat "$tmp/ht.err")"
copy
printf '\n%s\n\n%s\n%s\n%s\n' '<!-- hand-typed: a test -->' '| rule | s/it |' '|---|---:|' \
  '| async | 0.0025 |' >>"$tmp/docs/the-field.md"
printf '\n%s\n%s\n%s\n' '| rule | what |' '|---|---|' '| async | one gradient |' >>"$tmp/docs/the-field.md"
"$python" tools/paper_tables.py --docs "$tmp/docs" --check >/dev/null 2>"$tmp/ht2.err" ||
  fail "a marked hand-typed table and a table of words: --check exited $?: $(cat "$tmp/ht2.err")"
# A finding's page gone: its table is held nowhere, and the check names it.
copy
rm "$tmp/docs/paper/finding-4-runtime-ratio.md"
status=0
"$python" tools/paper_tables.py --docs "$tmp/docs" --check >/dev/null 2>"$tmp/gone.err" ||
  status=$?
[ "$status" -eq 1 ] &&
  grep -q "^table finding-4: no '<!-- table: finding-4 \.\.\.' marker" "$tmp/gone.err" ||
  fail "a finding page gone: status $status, $(cat "$tmp/gone.err")"

# (d) Past a run's last snapshot there is no value, and a mean over seeds with one missing is
# missing (np.interp repeated the last value there).
"$python" - <<'PY' || fail "value_at / summary_row: see above"
import math, sys
sys.path.insert(0, "tools")
import numpy as np
from paper_runs import summary_row, value_at
x, y = np.array([0.0, 10.0, 20.0]), np.array([0.5, 0.4, 0.3])
assert math.isnan(value_at(x, y, 21.0)) and math.isnan(value_at(x, y, -1.0))
assert abs(value_at(x, y, 15.0) - 0.35) < 1e-12 and value_at(x, y, 20.0) == 0.3
rows = []
assert summary_row(rows, "r", "test_error", "iteration=21", [0.3, value_at(x, y, 21.0)]) == (None, None)
assert rows[0]["mean"] is None and (rows[0]["seeds"], rows[0]["reached"]) == (2, 1), rows
assert rows[0]["values"] == "0.3;", rows
mean, half = summary_row(rows, "r", "test_error", "iteration=15", [0.35, 0.45])
assert abs(mean - 0.4) < 1e-12 and half > 0, (mean, half)
PY

# End to end: seed 1 runs to iteration 40, seed 2 to iteration 20; at iteration 30 (seed 1: 0.4)
# the CSV's mean is empty and the printed mean is "—"; at iteration 10 it is (0.7 + 0.65) / 2.
race="$tmp/race"
mkdir -p "$race/s1" "$race/s2"
printf '%s\n' 'label,slug,seed,clock' 'k (seed 1),s1,1,virtual' 'k (seed 2),s2,2,virtual' >"$race/results.csv"
printf '%s\n' 'wall_s,iteration,train_loss,test_loss,test_error' 0,0,2,2,0.9 1,20,1,1,0.5 2,40,0.8,0.8,0.3 >"$race/s1/evals.csv"
printf '%s\n' 'wall_s,iteration,train_loss,test_loss,test_error' 0,0,2,2,0.9 1,20,1,1,0.4 >"$race/s2/evals.csv"
"$python" tools/paper_figures.py curves "$race" --x iteration --at-iteration 10 30 --out "$tmp/race.png" \
  --csv "$tmp/race.csv" >"$tmp/race.out" 2>"$tmp/race.err" || fail "paper_figures.py curves exited $?: $(cat "$tmp/race.err")"
tr -d '\r' <"$tmp/race.csv" >"$tmp/race.lf.csv"  # the csv module ends rows with CRLF
grep -qxF "k,test_error,iteration=30,2,1,,,0.4;" "$tmp/race.lf.csv" ||
  fail "iteration 30 (past seed 2's end) is not missing in: $(cat "$tmp/race.csv")"
grep -qE "^k,test_error,iteration=10,2,2,0\.675,0\.317[0-9]*,0\.7;0\.65$" "$tmp/race.lf.csv" ||
  fail "iteration 10 is not the mean of both seeds in: $(cat "$tmp/race.csv")"
grep -qE "^  k +0\.6750  —  " "$tmp/race.out" || fail "the printed mean at iteration 30 is not —: $(cat "$tmp/race.out")"

# Time to a target, first snapshot against smoothed crossing: seed 1 dips to 0.19 once at 1 s
# (noise), then stays at 0.18 from 3 s; the first crossing says 1 s, the smoothed one 5 s (the
# last of the first three snapshots whose mean is <= 0.2).
noisy="$tmp/noisy"
mkdir -p "$noisy/s1"
printf '%s\n' 'label,slug,seed,clock' 'k (seed 1),s1,1,virtual' >"$noisy/results.csv"
printf '%s\n' 'wall_s,iteration,train_loss,test_loss,test_error' 0,0,2,2,0.9 1,10,1,1,0.19 \
  2,20,1,1,0.3 3,30,1,1,0.18 4,40,1,1,0.18 5,50,1,1,0.18 >"$noisy/s1/evals.csv"
for value in time_to_target time_to_target_smoothed; do
  "$python" tools/paper_figures.py bars "$noisy" --value "$value" --target 0.2 --out "$tmp/$value.png" \
    --csv "$tmp/$value.csv" >/dev/null 2>"$tmp/bars.err" || fail "bars --value $value exited $?: $(cat "$tmp/bars.err")"
done
tr -d '\r' <"$tmp/time_to_target.csv" | grep -qE "^k,time_to_target,test_error<=0\.2,1,1,1(\.0)?," ||
  fail "first crossing is not 1 s: $(cat "$tmp/time_to_target.csv")"
tr -d '\r' <"$tmp/time_to_target_smoothed.csv" | grep -qE "^k,time_to_target_smoothed,test_error<=0\.2,1,1,5(\.0)?," ||
  fail "smoothed crossing is not 5 s: $(cat "$tmp/time_to_target_smoothed.csv")"

echo "paper_tables_test: ok"
