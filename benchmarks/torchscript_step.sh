#!/usr/bin/env bash
# The price of a TorchScript model (issue 24): seconds per step of `stalesgd train --model
# torchscript:PATH` (P = 1, sync, no delay) against PyTorch's own training loop on the same file
# in train mode (benchmarks/pytorch_loop.py), and of the built-in mlp and lenet against their
# TorchScript twins (tools/export_model.py mlp / lenet; the zoo's bn-cnn and resnet have no
# built-in twin). Single-threaded everywhere; the systems alternate which goes first, round by
# round. stalesgd's time per step is read from updates.csv between iteration 10 and the last (no
# start-up, no LibTorch loading); PyTorch's after 10 warm-up steps. A model given as NAME:N runs
# N steps instead of --steps (resnet's step is a hundred times the mlp's). Prints one row per
# measurement and a table of ratios (median and range over the rounds); --csv FILE keeps the
# rows (docs/performance.md).
#
# usage: benchmarks/torchscript_step.sh [--build DIR] [--rounds R] [--steps N] [--batch B]
#                                       [--models "mlp lenet bn-cnn:200 resnet:100"] [--csv FILE]
#                                       [--data-dir DIR]
# Needs `tools/setup.sh torch` (LibTorch, PyTorch, torchvision) and MNIST in --data-dir
# (default data/).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build rounds=5 steps=600 batch=64 models="mlp lenet bn-cnn:200 resnet:100" csv="" data_dir=data
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --csv) csv="$2"; shift 2 ;;
    --data-dir) data_dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "torchscript_step.sh: unknown argument '$1'; see --help" >&2; exit 2 ;;
  esac
done
cli="$build/stalesgd"
[ -x "$cli" ] || { echo "torchscript_step.sh: $cli not found; build first (tools/build.sh)" >&2; exit 1; }
[ -e "$build/libstalesgd_torchscript.so" ] ||
  { echo "torchscript_step.sh: $build has no TorchScript plugin; run tools/setup.sh torch and rebuild" >&2; exit 1; }
cores=$(nproc)  # before OMP_NUM_THREADS=1, which nproc honours
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/torchscript_step.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for spec in $models; do
  m=${spec%%:*}
  /usr/bin/python3 tools/export_model.py "$m" --out "$tmp/$m.pt" >/dev/null
done

# stalesgd's seconds per step from iteration 10 to the last, in updates.csv.
stalesgd_step() {  # MODEL STEPS
  rm -rf "$tmp/run"
  "$cli" train --model "$1" --rule sync --workers 1 --batch "$batch" --iterations "$2" \
    --eval-every 1000s --eval-samples 500 --no-progress --data-dir "$data_dir" --out "$tmp/run" >/dev/null
  awk -F, -v n="$2" 'NR == 11 { t0 = $2 } NR == n + 1 { printf "%.9f\n", ($2 - t0) / (n - 10) }' \
    "$tmp/run/updates.csv"
}
pytorch_step() {  # FILE STEPS
  /usr/bin/python3 benchmarks/pytorch_loop.py "$1" --batch "$batch" --steps $(($2 - 10)) \
    --warmup 10 --data-dir "$data_dir" | awk '{ print $2 }'
}

rows="$tmp/rows.csv"
echo "round,model,system,s_per_step" >"$rows"
echo "torchscript_step.sh: $rounds rounds x {$models}, $steps steps of batch $batch; $cores cores, $(date -u +%FT%TZ)" >&2
for round in $(seq 1 "$rounds"); do
  for spec in $models; do
    m=${spec%%:*} n=$steps
    [ "$spec" != "$m" ] && n=${spec#*:}
    order=(torchscript pytorch builtin)
    [ $((round % 2)) -eq 0 ] && order=(builtin pytorch torchscript)
    for system in "${order[@]}"; do
      case "$system" in
        torchscript) s=$(stalesgd_step "torchscript:$tmp/$m.pt" "$n") ;;
        pytorch) s=$(pytorch_step "$tmp/$m.pt" "$n") ;;
        builtin)
          case "$m" in mlp|lenet) ;; *) continue ;; esac  # the zoo has no built-in twin
          s=$(stalesgd_step "$m" "$n") ;;
      esac
      echo "$round,$m,$system,$s" | tee -a "$rows"
    done
  done
done
[ -n "$csv" ] && cp "$rows" "$csv"

/usr/bin/python3 - "$rows" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t = {}
for r in rows:
    t.setdefault((r["model"], r["round"]), {})[r["system"]] = float(r["s_per_step"])
models = sorted({m for m, _ in t}, key=lambda m: [r["model"] for r in rows].index(m))
print(f"{'model':8} {'stalesgd-ts us':>14} {'pytorch us':>10} {'builtin us':>10}   "
      f"{'ts/pytorch (range)':>24}   {'builtin/ts (range)':>24}")
for m in models:
    per = [v for (mm, _), v in t.items() if mm == m]
    med = lambda k: statistics.median(p[k] for p in per) * 1e6
    r1 = [p["torchscript"] / p["pytorch"] for p in per]
    builtin = f"{med('builtin'):.1f}" if "builtin" in per[0] else "-"
    line = (f"{m:8} {med('torchscript'):14.1f} {med('pytorch'):10.1f} {builtin:>10}   "
            f"{statistics.median(r1):6.3f} ({min(r1):.3f}-{max(r1):.3f})   ")
    if "builtin" in per[0]:
        r2 = [p["builtin"] / p["torchscript"] for p in per]
        line += f"{statistics.median(r2):6.3f} ({min(r2):.3f}-{max(r2):.3f})"
    else:
        line += f"{'-':>6}"
    print(line)
PY
