#!/usr/bin/env bash
# The engine and theory benchmarks, one after the other (never side by side: each would be the
# other's noise): server_overhead (parameter server vs 2 x one worker loop), version_transfer
# (an update in place vs as a new version from the other core's: what snapshots cost), scale
# (P = 8, 64, 256 vs the closed forms), fidelity (P = 8, all rules, real vs virtual clock vs
# theory) and virtual_speed (virtual seconds per real second, determinism). Each one's output
# goes to OUT/<name>.txt and to the terminal, framed by the machine's load average, which says
# how much of the 2 cores the run really had. Docs: docs/performance.md, docs/theory.md.
#
# usage: benchmarks/engine_benchmarks.sh [--build DIR] [--out DIR] [--data-dir DIR]
#                                        [--only "server_overhead version_transfer scale fidelity
#                                                 virtual_speed"]
#                                        [--quick]
# --quick: short runs (minutes instead of ~35), for checking that everything works; the
# numbers are then too noisy to quote.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
out=
data_dir=data
only="server_overhead version_transfer scale fidelity virtual_speed"
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --data-dir) data_dir="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "engine_benchmarks.sh: unknown argument '$1'; see --help" >&2; exit 2 ;;
  esac
done
out="${out:-$build/bench-results}"
mkdir -p "$out"
[ -f "$data_dir/mnist/train-images-idx3-ubyte" ] ||
  { echo "engine_benchmarks.sh: MNIST not in $data_dir/mnist; run: stalesgd data fetch mnist" >&2; exit 1; }

args_for() {
  if [ "$quick" = 1 ]; then
    case "$1" in
      server_overhead) echo "--reps 3 --seconds 0.5" ;;
      version_transfer) echo "--reps 2 --updates 500" ;;
      scale) echo "--ci 0.1 --min-seconds 0.5 --max-seconds 5" ;;
      fidelity) echo "--ci 0.1 --min-seconds 0.5 --max-seconds 5" ;;
      virtual_speed) echo "--virtual-seconds 60 --reps 1" ;;
    esac
  else
    case "$1" in
      server_overhead) echo "--reps 15 --seconds 1.0" ;;
      *) echo "" ;;
    esac
  fi
}

for name in $only; do
  bin="$build/benchmarks/$name"
  [ -x "$bin" ] || { echo "engine_benchmarks.sh: $bin not found; build first (tools/build.sh) or pass --build DIR" >&2; exit 1; }
  # shellcheck disable=SC2046  # the options are words on purpose
  cmd="$bin --data-dir $data_dir $(args_for "$name")"
  {
    echo "\$ $cmd"
    echo "# $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(git rev-parse --short HEAD)"
    start=$(date +%s)
    $cmd
    echo "# finished in $(( $(date +%s) - start )) s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  } 2>&1 | tee "$out/$name.txt"
done
