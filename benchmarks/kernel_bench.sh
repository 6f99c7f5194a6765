#!/usr/bin/env bash
# Gradient kernels against PyTorch (issue 3): one SGD step (forward + backward + w -= lr * g) per
# model and batch size, single thread, stalesgd (benchmarks/kernel_bench.cpp) and PyTorch
# (benchmarks/pytorch_kernels.py, the same architectures) run back to back, alternating which
# goes first, for several rounds; the table shows the median over rounds of each one's median
# step time, the ratio stalesgd/PyTorch and the GFLOP/s each achieves (FLOPs of the matrix
# products of forward + backward, counted as if the input were dense; see docs/performance.md).
#
# usage: benchmarks/kernel_bench.sh [--build DIR] [--rounds R] [--models "softmax mlp ..."]
#                                   [--batches "32 64 128"] [--data-dir DIR]
# A model written NAME+dense (e.g. mlp+dense) runs on the same images with 1e-3 added to every
# pixel: no exact zeros, so stalesgd's sparse first layer stays off (the GEMM path).
# Needs `tools/setup.sh bench` (python3-torch, OpenBLAS) and MNIST in --data-dir (default data/).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
rounds=3
models="softmax mlp mlp+dense lenet cifar-cnn"
batches="32 64 128"
data_dir=data
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --batches) batches="$2"; shift 2 ;;
    --data-dir) data_dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "kernel_bench.sh: unknown argument '$1'; see --help" >&2; exit 2 ;;
  esac
done
bench="$build/benchmarks/kernel_bench"
[ -x "$bench" ] || { echo "kernel_bench.sh: $bench not found; build first (tools/build.sh) or pass --build DIR" >&2; exit 1; }
/usr/bin/python3 -c 'import torch' 2>/dev/null ||
  { echo "kernel_bench.sh: PyTorch missing; run tools/setup.sh bench" >&2; exit 1; }

# Single-threaded everywhere. On the AVX-512 machine the figures of docs/performance.md come from,
# OpenBLAS did not recognise the CPU and fell back to SSE3 kernels without SKYLAKEX; a CPU
# without AVX-512 must not be given it (PyTorch then dies of an illegal instruction).
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
if grep -qw avx512f /proc/cpuinfo; then export OPENBLAS_CORETYPE=SKYLAKEX; fi

reps_for() {  # about a second of steps per measurement
  case "$1" in softmax*) echo 1000 ;; mlp*) echo 400 ;; lenet) echo 80 ;; *) echo 20 ;; esac
}

results=$(mktemp)
trap 'rm -f "$results"' EXIT
echo "kernel_bench.sh: $rounds rounds of {$models} x {$batches}; $(nproc --all) cores ($(nproc) usable), $(date -u +%FT%TZ)" >&2
for round in $(seq 1 "$rounds"); do
  for model in $models; do
    for batch in $batches; do
      reps=$(reps_for "$model")
      name=${model%+dense}
      extra=()
      if [ "$name" != "$model" ]; then extra=(--dense-input); fi
      cpp=("$bench" --model "$name" --batch "$batch" --reps "$reps" --data-dir "$data_dir" "${extra[@]}")
      py=(/usr/bin/python3 benchmarks/pytorch_kernels.py --model "$name" --batch "$batch"
          --reps "$reps" --data-dir "$data_dir" "${extra[@]}")
      if [ $((round % 2)) -eq 1 ]; then
        "${cpp[@]}" | sed "s/ $name / $model /" >>"$results"
        "${py[@]}" | sed "s/ $name / $model /" >>"$results"
      else
        "${py[@]}" | sed "s/ $name / $model /" >>"$results"
        "${cpp[@]}" | sed "s/ $name / $model /" >>"$results"
      fi
      echo "  round $round: $model batch $batch done" >&2
    done
  done
done

# Lines: `stalesgd <model> <batch> <us> <flops>` and `pytorch <model> <batch> <us>`.
/usr/bin/python3 - "$results" "$models" "$batches" <<'PY'
import statistics, sys
path, models, batches = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
times, flops = {}, {}
for line in open(path):
    f = line.split()
    times.setdefault((f[0], f[1], f[2]), []).append(float(f[3]))
    if f[0] == "stalesgd":
        flops[(f[1], f[2])] = float(f[4])
print("| model | batch | stalesgd µs/step | PyTorch µs/step | ratio stalesgd/PyTorch | stalesgd GFLOP/s | PyTorch GFLOP/s |")
print("|---|---:|---:|---:|---:|---:|---:|")
for m in models:
    for b in batches:
        s = statistics.median(times[("stalesgd", m, b)])
        p = statistics.median(times[("pytorch", m, b)])
        fl = flops[(m, b)]
        label = m.replace("+dense", " (dense input)")
        print(f"| {label} | {b} | {s:.0f} | {p:.0f} | {s / p:.2f} | {fl / s / 1e3:.1f} | {fl / p / 1e3:.1f} |")
PY
