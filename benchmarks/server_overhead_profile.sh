#!/usr/bin/env bash
# Where the parameter server's extra CPU goes (docs/performance.md): `perf record` of
# server_overhead --only single|inline-async|inline-sync|thread-async|thread-sync|hogwild-async
# for each model, and per gradient the CPU microseconds spent in each part: the model's gradient,
# the minibatch gather (memmove), the server's arithmetic (UpdateAccumulator, or Hogwild's
# in-place update), the kernel (futex waits and wake-ups, scheduling, page faults), user-space
# locking, and the rest; then (perf stat) context switches per gradient.
# Samples at 4 kHz of cpu-clock (the VM has no hardware counters): one sample is 250 us of CPU;
# profiling itself adds 20-30% to the totals, so compare the parts between kinds.
#
# usage: benchmarks/server_overhead_profile.sh [--build DIR] [--data-dir DIR] [--models "softmax mlp"]
#                                              [--seconds 3]
# Needs perf (apt-get install linux-perf) and permission to profile (perf_event_paranoid <= 2
# for one's own processes).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
data_dir=data
models="softmax mlp"
seconds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --data-dir) data_dir="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "server_overhead_profile.sh: unknown argument '$1'; see --help" >&2; exit 2 ;;
  esac
done
bench="$build/benchmarks/server_overhead"
[ -x "$bench" ] || { echo "server_overhead_profile.sh: $bench not found; build first or pass --build DIR" >&2; exit 1; }
command -v perf >/dev/null || { echo "server_overhead_profile.sh: perf missing; apt-get install linux-perf" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for model in $models; do
  for kind in single inline-async inline-sync thread-async thread-sync hogwild-async; do
    perf record -q -e cpu-clock -F 4000 -o "$tmp/perf.data" -- \
      "$bench" --data-dir "$data_dir" --models "$model" --only "$kind" --reps 1 \
      --seconds "$seconds" --warmup 0.01 >"$tmp/out.txt" 2>/dev/null
    grads=$(sed -n 's/.*, \([0-9]*\) gradients$/\1/p' "$tmp/out.txt")
    perf report -i "$tmp/perf.data" --no-children --stdio --sort dso,symbol -n 2>/dev/null |
      /usr/bin/python3 -c '
import re, sys
model, kind, grads = sys.argv[1], sys.argv[2], float(sys.argv[3])
buckets = {"model gradient": 0, "batch gather": 0, "server update": 0, "kernel": 0,
           "locks (libc)": 0, "data load": 0, "other": 0}
for line in sys.stdin:
    m = re.match(r"\s+[\d.]+%\s+(\d+)\s+(\S+)\s+\[(.)\]\s+(.*?)\s*$", line)
    if not m:
        continue
    n, dso, space, sym = int(m.group(1)), m.group(2), m.group(3), m.group(4)
    if space == "k":
        b = "kernel"
    elif "UpdateAccumulator" in sym or "HogwildEngine" in sym:
        b = "server update"
    elif "memmove" in sym or "MinibatchSampler" in sym:
        b = "batch gather"
    elif "load_idx" in sym or "inflate" in sym:
        b = "data load"
    elif "stalesgd::model" in sym or "Eigen::" in sym or dso.startswith("libm") or "memset" in sym:
        b = "model gradient"
    elif "pthread" in sym or "futex" in sym or "lll_" in sym or "cond" in sym:
        b = "locks (libc)"
    else:
        b = "other"
    buckets[b] += n
total = sum(buckets.values())
us = lambda n: n * 250.0 / grads  # 4 kHz: 250 us of CPU per sample
parts = "  ".join(f"{k} {us(v):6.1f}" for k, v in buckets.items())
print(f"{model:8} {kind:6} {int(grads):7d} gradients  CPU us/gradient: total {us(total):6.1f}  {parts}")
' "$model" "$kind" "$grads"
    perf stat -x, -e context-switches -- "$bench" --data-dir "$data_dir" --models "$model" \
      --only "$kind" --reps 1 --seconds "$seconds" --warmup 0.01 >"$tmp/out2.txt" 2>"$tmp/stat.txt"
    grads2=$(sed -n 's/.*, \([0-9]*\) gradients$/\1/p' "$tmp/out2.txt")
    cs=$(grep context-switches "$tmp/stat.txt" | cut -d, -f1)
    /usr/bin/python3 -c "import sys; print(f'{sys.argv[1]:8} {sys.argv[2]:6} context switches per gradient: {float(sys.argv[3]) / float(sys.argv[4]):.2f}')" \
      "$model" "$kind" "$cs" "$grads2"
  done
done
