#!/usr/bin/env bash
# End-to-end check of tools/machine_projection.py on softmax, P = 1 to 4: a calibration is
# written and used, every rule, machine, P and shard count has a row naming it, the async row
# on the 64-core box at P = 1 is the calibration's own arithmetic (C + the server's times per update, contention
# 1 on one busy core), shards never slow a rule down, and the figure is drawn.
# usage: tests/tools/machine_projection_test.sh path/to/stalesgd   (needs MNIST in data/, matplotlib)
set -euo pipefail

# shellcheck source=script_test_setup.sh
source "$(dirname "$0")/script_test_setup.sh"

"$python" tools/machine_projection.py --build "$(dirname "$stalesgd")" --models softmax \
  --max-workers 4 --samples 200 --calibrations "$tmp" --csv "$tmp/p.csv" \
  --figure "$tmp/p.png" 2>/dev/null || fail "machine_projection.py failed"
[ -s "$tmp/softmax.json" ] || fail "no calibration written"
[ -s "$tmp/p.png" ] || fail "no figure"
"$python" - "$tmp/p.csv" <<'PY' || fail "the CSV's rows"
import csv, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
assert len(rows) == 6 * 2 * 3 * 3, len(rows)  # rules x machines x P x shards
one = [r for r in rows if r["rule"] == "async" and r["workers"] == "1" and r["shards"] == "1"
       and r["machine"] == "64-core box"]
assert one
for r in one:
    per = float(r["compute_s"]) + float(r["server_gradient_s"]) + float(r["server_update_s"])
    assert abs(float(r["gradients_per_s"]) * per - 1) < 2e-3, (r, per)
key = lambda r: (r["machine"], r["rule"], r["workers"])
by = {}
for r in rows:
    by.setdefault(key(r), {})[int(r["shards"])] = float(r["gradients_per_s"])
for k, s in by.items():
    assert s[16] >= s[4] * 0.99 >= s[1] * 0.98, (k, s)
assert all(r["calibrated_on"] for r in rows)
PY
echo "machine_projection_test: ok"
