#!/usr/bin/env bash
# The faults of a two-host cluster and what --engine mpi does with each, measured: two hosts on
# this machine (tools/two_hosts.sh, as root), softmax, async, exp:mean=20ms, 2 workers per rank,
# --time 20s --checkpoint-every 1s --worker-timeout 2s --stall-timeout 4s (the stall's row:
# --worker-timeout 10s, so that the watchdog, not the hung-worker watch, ends it); the fault comes
# 2 s into the run. For each fault: how the run ended (stop reason, status, exit), when summary.json
# was written and when the job ended (seconds after the fault), the updates in the 2 s after
# the fault (against the same span before it), what is on disk, and whether `train --resume`
# then continues the run to its end with every iteration once.
# usage: benchmarks/mpi_faults.sh [--build DIR] [--csv FILE]   (prints a markdown table)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
csv=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --csv) csv=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--csv FILE]" >&2; exit 2 ;;
  esac
done
cli=$(readlink -f "$build/stalesgd")
[ -x "$cli" ] || { echo "$build/stalesgd missing: tools/build.sh" >&2; exit 2; }
name=flt$$
name=${name:0:9}
out=$(mktemp -d)
trap 'tools/two_hosts.sh down "$name"; rm -rf "$out"' EXIT
tools/two_hosts.sh up "$name"
now() { date +%s.%N; }
flags=(--engine mpi --model softmax --rule async --workers-per-rank 2 --delay exp:mean=20ms
       --time 20s --checkpoint-every 1s --stall-timeout 4s
       --eval-every 1000s --eval-samples 1000 --no-progress --data-dir "$PWD/data")

# pid of rank $2 of the job writing into $1 (ranks share this machine's pid space)
pid_of_rank() {
  for p in $(pgrep -x stalesgd); do
    grep -q -- "$1" "/proc/$p/cmdline" 2>/dev/null &&
      tr '\0' '\n' <"/proc/$p/environ" | grep -qx "OMPI_COMM_WORLD_RANK=$2" && echo "$p"
  done
}
# waits until rank 0 of the job writing into $1 trains (its receive thread exists)
underway() {
  for _ in $(seq 1200); do
    for p in $(pgrep -x stalesgd); do
      grep -q -- "$1" "/proc/$p/cmdline" 2>/dev/null &&
        grep -qx mpi-server-recv /proc/"$p"/task/*/comm 2>/dev/null && return
    done
    sleep 0.05
  done
}
job() {  # dir on_a on_b [more train args]
  local dir=$1 on_a=$2 on_b=$3; shift 3
  tools/two_hosts.sh mpirun "$name" --host "$name-a:$on_a,$name-b:$on_b" -np $((on_a + on_b)) \
    "$cli" train "${flags[@]}" "$@" --out "$dir"
}

echo "| fault | stop reason | status | exit | summary.json after (s) | job ended after (s) | updates 2 s after / 2 s before | did not answer the end | on disk | --resume |"
echo "|---|---|---|---:|---:|---:|---:|---|---|---|"
[ -z "$csv" ] || echo "fault,stop_reason,status,exit,summary_after_s,ended_after_s,updates_after,updates_before,not_answered,on_disk,resume" >"$csv"
run_fault() {  # label on_a on_b worker-timeout action (shell, with $dir)
  local label=$1 on_a=$2 on_b=$3 timeout=$4 action=$5 dir="$out/$RANDOM$RANDOM"
  job "$dir" "$on_a" "$on_b" --worker-timeout "$timeout" >"$dir.log" 2>&1 &
  local pid=$!
  underway "$dir"
  sleep 2
  local fault
  fault=$(now)
  eval "$action"
  local status=0
  wait "$pid" || status=$?
  local ended
  ended=$(now)
  tools/two_hosts.sh link "$name" up
  local disk=""
  for f in updates.csv gradients.csv workers.csv summary.json checkpoint.bin; do
    [ -e "$dir/$f" ] && disk+="${disk:+ }$f"
  done
  # The job's own outcome, before a resume writes over it.
  local row
  row=$(/usr/bin/python3 - "$dir" "$fault" "$ended" <<'EOF'
import csv, json, os, sys
d, fault, ended = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
s = os.path.join(d, "summary.json")
summary = json.load(open(s)) if os.path.exists(s) else None
# The fault came 2 s after rank 0's receive thread started, the run's time zero within ms.
t = [float(r["wall_s"]) for r in csv.DictReader(open(os.path.join(d, "updates.csv")))]
after = sum(1 for x in t if 2.0 <= x < 4.0)
before = sum(1 for x in t if 0.0 <= x < 2.0)
silent = [f"rank {r['rank']}" for r in summary["ranks"] if not r["answered"]] if summary else []
print("\t".join([summary["stop_reason"] if summary else "-", summary["status"] if summary else "-",
                 f"{os.path.getmtime(s) - fault:.1f}" if summary else "-", f"{ended - fault:.1f}",
                 str(after), str(before), ", ".join(silent) or "-"]))
EOF
)
  local resume="-"
  if [ -e "$dir/checkpoint.bin" ] &&
     { [ ! -e "$dir/summary.json" ] || grep -q '"stop_reason": "interrupted"' "$dir/summary.json"; }; then
    if tools/two_hosts.sh mpirun "$name" --host "$name-a:$on_a,$name-b:$on_b" \
         -np $((on_a + on_b)) "$cli" train --engine mpi --no-progress --data-dir "$PWD/data" \
         --resume "$dir" >"$dir.resume.log" 2>&1; then
      resume=$(/usr/bin/python3 -c "
import csv, json
its = [int(r['iteration']) for r in csv.DictReader(open('$dir/updates.csv'))]
s = json.load(open('$dir/summary.json'))
once = its == list(range(1, len(its) + 1))
print(f\"yes: {s['stop_reason']} at {s['wall_s']:.1f} s, {len(its)} iterations{', each once' if once else ', NOT each once'}\")")
    else
      resume="failed: $(tail -n 1 "$dir.resume.log")"
    fi
  fi
  local reason st sum end after before silent
  IFS=$'\t' read -r reason st sum end after before silent <<<"$row"
  echo "| $label | $reason | $st | $status | $sum | $end | $after / $before | $silent | $disk | $resume |"
  [ -z "$csv" ] || printf '"%s",%s,%s,%s,%s,%s,%s,%s,"%s","%s","%s"\n' "$label" "$reason" "$st" \
    "$status" "$sum" "$end" "$after" "$before" "$silent" "$disk" "$resume" >>"$csv"
}

L="tools/two_hosts.sh link $name"
run_fault "link down 3 s (workers on both hosts)" 2 2 2s "$L down; sleep 3; $L up"
run_fault "link down for good (workers on both hosts)" 2 2 2s "$L down"
run_fault "link down past --stall-timeout (every worker on the other host)" 1 3 10s "$L down"
run_fault "SIGSTOP of a rank on the other host" 2 2 2s 'kill -STOP $(pid_of_rank "$dir" 3)'
run_fault "kill -9 of a rank on the other host" 2 2 2s 'kill -KILL $(pid_of_rank "$dir" 3)'
run_fault "kill -9 of rank 0" 2 2 2s 'kill -KILL $(pid_of_rank "$dir" 0)'
