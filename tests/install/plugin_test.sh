#!/usr/bin/env bash
# examples/custom_rule's plug-in, built against the installed package, through the installed
# stalesgd's commands (docs/rules.md, "Your own rule"): its rule and --cap in `train --help`, a
# train run whose recorded gradients keep the cap, a race sweeping the cap from an experiment
# file's plugin key, theory's Monte Carlo of the rule, serve showing the race, and the MPI engine
# (tools/mpirun.sh) on two worker ranks. Run by install_test.sh.
# usage: plugin_test.sh STALESGD PLUGIN SOURCE_DIR
set -euo pipefail
cli=${1:?usage: plugin_test.sh STALESGD PLUGIN SOURCE_DIR}
plugin=${2:?usage: plugin_test.sh STALESGD PLUGIN SOURCE_DIR}
source_dir=${3:?usage: plugin_test.sh STALESGD PLUGIN SOURCE_DIR}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stalesgd-plugin.XXXXXX")
serve_pid=""
trap '[ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "plugin_test: $*" >&2; exit 1; }
data=(--data-dir "$source_dir/data")
# Worker 0 is 8 times slower than the others: its gradients come in many versions late.
run=(--rule capped-k-async --k 2 --workers 8 --delay 'exp:mean=10ms;w0=x8' --iterations 200
     --eval-every 1000s --no-progress "${data[@]}")
# The highest staleness gradients.csv records.
stalest() { awk -F, 'NR > 1 && $4 > m { m = $4 } END { print m + 0 }' "$1/gradients.csv"; }

# Read whole first: grep -q stops reading at its match, and under pipefail the help's SIGPIPE
# would fail the line.
help=$("$cli" train --plugin "$plugin" --help) || fail "train --plugin ... --help failed"
grep -q -- "--cap" <<<"$help" || fail "train --help shows no --cap"
grep -q "capped-k-async" <<<"$help" || fail "train --help does not list capped-k-async"

"$cli" train --plugin "$plugin" "${run[@]}" --clock virtual --cap 1 --out "$tmp/train" >/dev/null ||
  fail "train with the plug-in's rule failed"
[ "$(stalest "$tmp/train")" -le 1 ] || fail "train: a gradient staler than --cap 1 was applied"
grep -q '"cap": 1' "$tmp/train/summary.json" || fail "summary.json does not record cap 1"

cat >"$tmp/capped.toml" <<TOML
name = "capped"
plugin = "$plugin"
model = "softmax"
workers = 8
k = 2
rule = "capped-k-async"
delay = "exp:mean=10ms;w0=x8"
clock = "virtual"
iterations = 200
eval_every = "1000s"
[[run]]
label = "cap {cap}"
cap = [0, 2]
TOML
"$cli" race --config "$tmp/capped.toml" --out "$tmp/race" --no-progress "${data[@]}" >/dev/null ||
  fail "a race over the plug-in's --cap failed"
for cap in 0 2; do
  [ "$(stalest "$tmp/race/cap-$cap")" -le "$cap" ] || fail "race: cap $cap let a staler gradient in"
done

theory=$("$cli" theory --plugin "$plugin" --rule capped-k-async --k 2 --cap 1 --workers 8 \
  --delay exp:mean=10ms --samples 4000 --json) || fail "theory with the plug-in's rule failed"
grep -q '"monte_carlo"' <<<"$theory" || fail "theory gave no Monte Carlo estimate of the plug-in's rule"

"$cli" serve "$tmp/race" --plugin "$plugin" --port 0 >"$tmp/serve.out" 2>&1 &
serve_pid=$!
url=""
for _ in $(seq 100); do
  url=$(grep -o 'http://[^ ]*/' "$tmp/serve.out" || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || fail "serve printed no address: $(cat "$tmp/serve.out")"
runs=$(curl -sf "${url}api/runs") || fail "serve's /api/runs did not answer"
grep -q 'capped-k-async' <<<"$runs" || fail "serve's /api/runs shows no capped-k-async run"
kill "$serve_pid"
wait "$serve_pid" 2>/dev/null || true
serve_pid=""

if command -v mpirun >/dev/null 2>&1; then
  "$source_dir/tools/mpirun.sh" -np 3 "$cli" train --engine mpi --workers-per-rank 4 \
    --plugin "$plugin" "${run[@]}" --cap 1 --out "$tmp/mpi" >/dev/null ||
    fail "the MPI engine with the plug-in's rule failed"
  [ "$(stalest "$tmp/mpi")" -le 1 ] || fail "mpi: a gradient staler than --cap 1 was applied"
else
  fail "mpirun not found: the install test needs Open MPI (tools/setup.sh)"
fi
echo "plugin_test: ok"
