#!/usr/bin/env bash
# --engine mpi on this machine, each part against its baseline in the same run:
#  fidelity  8 worker ranks, exp:mean=20ms, all six rules (K = 4): seconds per iteration
#            measured against the theory's, beside the thread engine's on the same options and
#            the virtual clock's on the same delay draws (same seed, same iterations: the
#            theory's value for exactly these draws, with no overhead at all)
#  overhead  2 worker ranks, --delay none, softmax and mlp: gradients per second against the
#            bound 2 / (C + RTT), C one gradient's compute (the sequential trainer) and RTT an MPI
#            ping-pong of the parameter vector, both measured here; and against the CPU ceiling,
#            cores / (CPU seconds of all ranks per gradient), what this machine allows at most
#  scale     32 worker ranks (oversubscribed), exp:mean=50ms, k-async and k-sync (K = 4)
#  cross-host  two hosts (tools/two_hosts.sh, as root: network namespaces joined by a veth pair,
#            or with --link by the emulated link): k-sync, k-async and async at 8 worker ranks
#            (rank 0 and 3 worker ranks on host a, 5 on host b), exp:mean=20ms, measured/theory
#            beside the same on one host, runs alternating, the ratio's 95% interval over the
#            repeats; and mlp async, no delay, 2 worker ranks on host b against the same on one
#            host and against 2 / (C + RTT), the ping-pong across the link; with Open MPI's TCP
#            eager limit at its default (64 KB) and at tools/mpirun.sh's 1 MiB (no handshake per
#            message). And the clocks: 10 jobs of 9 ranks, each
#            estimated offset against the truth (0: both hosts read one CLOCK_MONOTONIC), with
#            mpi_yield_when_idle 0 and 1.
# usage: benchmarks/mpi_engine.sh [--seconds S] [--build DIR] [--link SPEC] [--repeats N]
#        [fidelity] [overhead] [scale] [cross-host]   (default: the first three parts, 25 s per
#        run; MNIST in data/; --link e.g. 'latency=1ms,bandwidth=1gbit', see tools/two_hosts.sh;
#        --repeats: cross-host runs per engine and rule, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
seconds=25
repeats=3
link=""
parts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --link) link=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    fidelity|overhead|scale|cross-host) parts+=("$1"); shift ;;
    *) echo "usage: $0 [--seconds S] [--build DIR] [--link SPEC] [--repeats N] [fidelity] [overhead] [scale] [cross-host]" >&2; exit 2 ;;
  esac
done
[ ${#parts[@]} -gt 0 ] || parts=(fidelity overhead scale)
cli="$build/stalesgd"
pingpong="$build/benchmarks/mpi_pingpong"
[ -x "$pingpong" ] || { echo "$pingpong missing: build with MPI (tools/setup.sh, tools/build.sh)" >&2; exit 2; }
out=$(mktemp -d)
hosts=""  # the two hosts of cross-host, while up
trap 'rm -rf "$out"; [ -z "$hosts" ] || tools/two_hosts.sh down "$hosts"' EXIT
load() { cut -d' ' -f1 /proc/loadavg; }
common=(--eval-every 1000s --eval-samples 1000 --no-progress)

field() { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval('d' + sys.argv[2]))" "$1" "$2"; }
ratio() { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f\"{d['seconds_per_iteration'] / d['theory']['seconds_per_iteration']:.3f}\")" "$1"; }
k_of() { case "$1" in k-*) echo "--k 4" ;; esac; }

# One rule on P worker ranks (P + 1 processes) and, for comparison, on P threads.
mpi_run() {  # rule ranks delay dir
  tools/mpirun.sh -np $(($2 + 1)) "$cli" train --engine mpi --rule "$1" $(k_of "$1") \
    --delay "$3" --time "${seconds}s" "${common[@]}" --out "$4" >/dev/null
}

for part in "${parts[@]}"; do
  case "$part" in
  fidelity)
    echo "## fidelity: 8 worker ranks (9 processes on $(nproc) cores), softmax, exp:mean=20ms, ${seconds} s per run, K = 4"
    echo "| rule | iterations | s/iter measured | s/iter theory | mpi / theory | threads / theory | mpi / virtual, same draws |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for rule in sync k-sync k-batch-sync async k-async k-batch-async; do
      mpi_run "$rule" 8 exp:mean=20ms "$out/m-$rule"
      "$cli" train --workers 8 --rule "$rule" $(k_of "$rule") --delay exp:mean=20ms \
        --time "${seconds}s" "${common[@]}" --out "$out/t-$rule" >/dev/null
      s="$out/m-$rule/summary.json"
      its=$(field "$s" "['iterations']")
      "$cli" train --clock virtual --workers 8 --rule "$rule" $(k_of "$rule") \
        --delay exp:mean=20ms --iterations "$its" "${common[@]}" --out "$out/v-$rule" >/dev/null
      v=$(field "$out/v-$rule/summary.json" "['seconds_per_iteration']")
      m=$(field "$s" "['seconds_per_iteration']")
      printf '| %s | %s | %.5f | %.5f | %s | %s | %.3f |\n' "$rule" "$its" "$m" \
        "$(field "$s" "['theory']['seconds_per_iteration']")" \
        "$(ratio "$s")" "$(ratio "$out/t-$rule/summary.json")" "$(/usr/bin/python3 -c "print($m / $v)")"
    done
    echo ;;
  overhead)
    echo "## overhead: 2 worker ranks (3 processes on $(nproc) cores), async, --delay none, ${seconds} s"
    echo "| model | params | C (s) | ping-pong RTT (s) | bound 2/(C+RTT) grad/s | measured grad/s | measured/bound | threads grad/s | CPU µs/grad (all ranks) | CPU ceiling $(nproc)/CPU grad/s | measured/ceiling |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for model in softmax mlp; do
      # C: the sequential trainer's seconds per iteration (gradient + update, one thread).
      "$cli" train --sequential --model "$model" --time 5s "${common[@]}" --out "$out/seq-$model" >/dev/null
      c=$(field "$out/seq-$model/summary.json" "['seconds_per_iteration']")
      n=$(field "$out/seq-$model/summary.json" "['num_params']")
      rtt=$(tools/mpirun.sh -np 2 "$pingpong" "$n" 4000)
      # CPU of every process of the job (mpirun reaps its ranks), less that of a job that
      # starts, runs one update and ends: what the gradients themselves cost.
      cpu() { /usr/bin/time -f "%U %S" -o "$out/cpu" "$@" >/dev/null; awk '{print $1 + $2}' "$out/cpu"; }
      cpu0=$(cpu tools/mpirun.sh -np 3 "$cli" train --engine mpi --rule async --model "$model" \
        --iterations 1 "${common[@]}" --out "$out/mpi0-$model")
      cpu1=$(cpu tools/mpirun.sh -np 3 "$cli" train --engine mpi --rule async --model "$model" \
        --time "${seconds}s" "${common[@]}" --out "$out/mpi-$model")
      "$cli" train --workers 2 --rule async --model "$model" --time "${seconds}s" "${common[@]}" \
        --out "$out/thr-$model" >/dev/null
      /usr/bin/python3 -c "
import json
c, rtt = $c, $rtt
m = json.load(open('$out/mpi-$model/summary.json')); t = json.load(open('$out/thr-$model/summary.json'))
bound = 2 / (c + rtt); got = m['gradients']['pushed'] / m['wall_s']; thr = t['gradients']['pushed'] / t['wall_s']
per = ($cpu1 - $cpu0) / m['gradients']['pushed']; ceiling = $(nproc) / per
print(f'| $model | $n | {c:.6f} | {rtt:.6f} | {bound:.0f} | {got:.0f} | {got / bound:.2f} | {thr:.0f} | {per * 1e6:.0f} | {ceiling:.0f} | {got / ceiling:.2f} |')"
    done
    echo ;;
  scale)
    echo "## scale: 32 worker ranks (33 processes on $(nproc) cores), softmax, exp:mean=50ms, ${seconds} s, K = 4"
    echo "| rule | iterations | s/iter measured | s/iter theory | measured/theory |"
    echo "|---|---:|---:|---:|---:|"
    for rule in k-async k-sync; do
      mpi_run "$rule" 32 exp:mean=50ms "$out/s-$rule"
      s="$out/s-$rule/summary.json"
      printf '| %s | %s | %.5f | %.5f | %s |\n' "$rule" "$(field "$s" "['iterations']")" \
        "$(field "$s" "['seconds_per_iteration']")" "$(field "$s" "['theory']['seconds_per_iteration']")" \
        "$(ratio "$s")"
    done
    echo ;;
  cross-host)
    hosts=mpib$$
    hosts=${hosts:0:9}
    tools/two_hosts.sh up "$hosts" ${link:+--link "$link"}
    # Rank 0 (the server) and ranks 1-3 on host a, ranks 4-8 on host b; the data at the same
    # absolute path on both, as on real hosts.
    across() {  # np on_a [mpirun args] -- train args
      local np=$1 on_a=$2; shift 2
      local extra=(); while [ "$1" != -- ]; do extra+=("$1"); shift; done; shift
      tools/two_hosts.sh mpirun "$hosts" --host "$hosts-a:$on_a,$hosts-b:$((np - on_a))" -np "$np" \
        "${extra[@]}" "$(readlink -f "$cli")" train --engine mpi --data-dir "$PWD/data" "$@" >/dev/null
    }
    echo "## cross-host: two hosts (${link:-a veth pair}), softmax, 8 worker ranks (rank 0 and 3 on host a, 5 on host b), exp:mean=20ms, ${repeats} x ${seconds} s per engine and rule, alternating, K = 4"
    echo "| rule | measured/theory, two hosts | measured/theory, one host | two hosts / one host, mean ± 95% | load (1 min) |"
    echo "|---|---:|---:|---:|---:|"
    for rule in k-sync k-async async; do
      for i in $(seq "$repeats"); do
        across 9 4 -- --rule "$rule" $(k_of "$rule") --delay exp:mean=20ms --time "${seconds}s" \
          "${common[@]}" --out "$out/x-$rule-$i"
        mpi_run "$rule" 8 exp:mean=20ms "$out/o-$rule-$i"
      done
      /usr/bin/python3 -c "
import json, statistics
r = lambda d: (lambda s: s['seconds_per_iteration'] / s['theory']['seconds_per_iteration'])(json.load(open(d + '/summary.json')))
x = [r(f'$out/x-$rule-{i}') for i in range(1, $repeats + 1)]
o = [r(f'$out/o-$rule-{i}') for i in range(1, $repeats + 1)]
q = [a / b for a, b in zip(x, o)]
t = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57}.get(len(q), 2.0)
h = t * statistics.stdev(q) / len(q) ** 0.5 if len(q) > 1 else float('nan')
print(f'| $rule | {statistics.mean(x):.3f} | {statistics.mean(o):.3f} | {statistics.mean(q):.3f} ± {h:.3f} | $(load) |')"
    done
    echo
    echo "## cross-host: the clock estimate, 8 worker ranks (9 processes on $(nproc) cores), 10 jobs each; true offset 0 (one CLOCK_MONOTONIC)"
    echo "| mpi_yield_when_idle | jobs with an offset > 1 ms off | largest offset off (µs) | largest error bound (µs) | median error bound (µs) | load (1 min) |"
    echo "|---|---:|---:|---:|---:|---:|"
    for yield in 0 1; do
      for i in $(seq 10); do
        across 9 4 --mca mpi_yield_when_idle "$yield" -- --rule async --iterations 1 \
          "${common[@]}" --out "$out/clock-$yield-$i"
      done
      /usr/bin/python3 -c "
import json, statistics
off, err, bad = [], [], 0
for i in range(1, 11):
    r = [x for x in json.load(open(f'$out/clock-$yield-{i}/summary.json'))['ranks'] if x['clock_estimated']]
    o = max(abs(x['clock_offset_s']) for x in r); off.append(o); err += [x['clock_error_s'] for x in r]
    bad += o > 1e-3
print(f'| $yield | {bad} of 10 | {max(off) * 1e6:.0f} | {max(err) * 1e6:.0f} | {statistics.median(err) * 1e6:.0f} | $(load) |')"
    done
    echo
    echo "## cross-host: mlp async, --delay none, 2 worker ranks on host b (rank 0 on host a), ${seconds} s per run"
    echo "| eager limit | C (s) | ping-pong RTT across (s) | bound 2/(C+RTT) grad/s | measured grad/s | measured/bound | one host grad/s | two hosts / one host | load (1 min) |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    "$cli" train --sequential --model mlp --time 5s "${common[@]}" --out "$out/seq-x" >/dev/null
    c=$(field "$out/seq-x/summary.json" "['seconds_per_iteration']")
    n=$(field "$out/seq-x/summary.json" "['num_params']")
    tools/mpirun.sh -np 3 "$cli" train --engine mpi --rule async --model mlp --time "${seconds}s" \
      "${common[@]}" --out "$out/one-mlp" >/dev/null
    one=$(/usr/bin/python3 -c "import json; d=json.load(open('$out/one-mlp/summary.json')); print(d['gradients']['pushed'] / d['wall_s'])")
    for eager in 65536 1048576; do
      mca=(--mca btl_tcp_eager_limit "$eager")
      rtt=$(tools/two_hosts.sh mpirun "$hosts" --host "$hosts-a:1,$hosts-b:1" -np 2 "${mca[@]}" \
        "$(readlink -f "$pingpong")" "$n" 400)
      across 3 1 "${mca[@]}" -- --rule async --model mlp --time "${seconds}s" "${common[@]}" \
        --out "$out/x-mlp-$eager"
      /usr/bin/python3 -c "
import json
c, rtt, one = $c, $rtt, $one
m = json.load(open('$out/x-mlp-$eager/summary.json'))
bound = 2 / (c + rtt); got = m['gradients']['pushed'] / m['wall_s']
print(f'| $eager | {c:.6f} | {rtt:.6f} | {bound:.0f} | {got:.0f} | {got / bound:.2f} | {one:.0f} | {got / one:.2f} | $(load) |')"
    done
    tools/two_hosts.sh down "$hosts"
    hosts=""
    echo ;;
  esac
done
