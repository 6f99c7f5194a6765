#!/usr/bin/env bash
# --engine mpi on this machine: (1) throughput with 2 worker ranks and no delay, softmax and
# mlp, against the bound from one gradient's compute time and an MPI ping-pong of the
# parameter vector measured in the same run; (2) fidelity: 8 worker ranks, exp:mean=20ms, all
# six rules, measured seconds per iteration against the theory's.
# usage: benchmarks/mpi_overhead.sh [BUILD_DIR]   (default build; MNIST in data/)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cli="$build/stalesgd"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpicxx -O2 benchmarks/mpi_pingpong.cpp -o "$out/pingpong"

field() { python3 -c "import json,sys; d=json.load(open('$1')); print(eval('d' + sys.argv[1]))" "$2"; }

echo "## throughput: 2 worker ranks, async, --delay none, 5 s"
echo "| model | params | compute C (s) | ping-pong RTT (s) | bound 2/(C+RTT) grad/s | measured grad/s | ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for model in softmax mlp; do
  # C: the sequential trainer's seconds per iteration (gradient + update, one thread).
  "$cli" train --sequential --model "$model" --time 3s --eval-every 1000s --eval-samples 1000 \
    --no-progress --out "$out/seq-$model" >/dev/null
  c=$(field "$out/seq-$model/summary.json" "['seconds_per_iteration']")
  n=$(field "$out/seq-$model/summary.json" "['num_params']")
  rtt=$(tools/mpirun.sh -np 2 "$out/pingpong" "$n" 2000)
  tools/mpirun.sh -np 3 "$cli" train --engine mpi --rule async --model "$model" --time 5s \
    --eval-every 1000s --eval-samples 1000 --no-progress --out "$out/mpi-$model" >/dev/null
  pushed=$(field "$out/mpi-$model/summary.json" "['gradients']['pushed']")
  wall=$(field "$out/mpi-$model/summary.json" "['wall_s']")
  python3 -c "
c, rtt, pushed, wall = $c, $rtt, $pushed, $wall
bound = 2 / (c + rtt); got = pushed / wall
print(f'| $model | $n | {c:.6f} | {rtt:.6f} | {bound:.0f} | {got:.0f} | {got / bound:.2f} |')"
done

echo
echo "## fidelity: 8 worker ranks (9 processes), softmax, exp:mean=20ms, 8 s per rule, K = 4"
echo "| rule | iterations | s/iter measured | s/iter theory | measured/theory |"
echo "|---|---:|---:|---:|---:|"
for rule in sync k-sync k-batch-sync async k-async k-batch-async; do
  k=""
  case "$rule" in k-*) k="--k 4" ;; esac
  tools/mpirun.sh -np 9 "$cli" train --engine mpi --rule "$rule" $k --delay exp:mean=20ms \
    --time 8s --eval-every 1000s --eval-samples 1000 --no-progress --out "$out/f-$rule" >/dev/null
  s="$out/f-$rule/summary.json"
  python3 -c "
import json; d = json.load(open('$s'))
m = d['seconds_per_iteration']; t = d['theory']['seconds_per_iteration']
print(f\"| $rule | {d['iterations']} | {m:.5f} | {t:.5f} | {m / t:.3f} |\")"
done
