#!/usr/bin/env bash
# Runs mpirun with what stalesgd's ranks need, passing every argument through.
# usage: tools/mpirun.sh -np N build/stalesgd train --engine mpi [train flags...]
#        tools/mpirun.sh --hostfile hosts -np N build/stalesgd train --engine mpi ...
# Rank 0 is the parameter server, ranks 1..N-1 the workers (docs/distributed.md).
# - As root, Open MPI refuses to start unless told (--allow-run-as-root and its two variables).
# - --oversubscribe: more ranks than cores is the normal case here (workers sleep out delays).
# - --quiet: stalesgd reports its own failures in one line (rank 0); without it mpirun adds a
#   ten-line banner for every non-zero exit. MPIRUN_QUIET=0 shows Open MPI's messages, e.g.
#   after a crash.
# Open MPI settings, each only where the environment does not set it already (an OMPI_MCA_*
# variable) and overridden by an explicit --mca:
# - mpi_yield_when_idle 1: a rank waiting in a blocking call yields its core; with more ranks
#   than cores, spinning ranks put the start-up clock ping-pongs on the scheduler's 4 ms tick.
# - odls_base_sigkill_timeout 3: after mpirun's SIGTERM (a rank that died, a signal to mpirun
#   itself) rank 0 has 3 s, not 1, to write everything before SIGKILL (a rank stopped by SIGSTOP
#   holds an abort about twice that long).
# - oob_tcp_keepalive_time/intvl/probes 4/1/4: mpirun finds a host that stopped answering lost
#   after 4 to 8 s of silence and ends the job, instead of after 8 minutes; a shorter network
#   blip goes unnoticed by it (docs/distributed.md, "Faults").
# - btl_tcp_eager_limit 1048576: between hosts a message of up to 1 MiB (every built-in model's
#   parameters and gradients) goes out at once instead of waiting a round trip for the receiver's
#   go-ahead; stalesgd keeps receives posted, so it lands in place (benchmarks/mpi_engine.sh
#   cross-host measures both).
# - plm_rsh_args '-o ConnectTimeout=5 -o BatchMode=yes' when Open MPI starts its daemons with
#   ssh (no plm_rsh_agent given): an unreachable host fails in 5 s with ssh's one line, instead
#   of hanging for minutes or asking for a password.
# MPIRUN overrides the mpirun to use.
# Signals, as for a plain `stalesgd train` (docs/distributed.md, "Ctrl-C and the live line"):
# mpirun runs in a session of its own, so a terminal's Ctrl-C reaches this script alone, which
# passes SIGINT, SIGTERM, SIGHUP and SIGUSR1 on as SIGUSR1 and SIGUSR2 as itself (mpirun forwards
# both to the ranks), then exits 128 + the signal once rank 0 has written everything. Rank 0 then
# exits 0 (STALESGD_MPIRUN_REPORTS_STOP): after any rank's non-zero exit, or a SIGINT or SIGTERM
# of its own, mpirun sends SIGCONT, SIGTERM and SIGKILL a sigkill timeout apart and exits 1. A
# second signal a second or more later is passed on as mpirun's SIGTERM, its hard stop.
# mpirun's stdin is /dev/null: stalesgd reads none, and a background session would stop on it.
# When stderr is a terminal, STALESGD_LIVE_LINE=COLUMNS has rank 0, whose stderr is a pipe to
# mpirun, draw the live progress line (mpirun passes '\r' and partial lines straight on).
set -euo pipefail

mpirun=${MPIRUN:-mpirun}
command -v "$mpirun" >/dev/null 2>&1 || {
  echo "tools/mpirun.sh: $mpirun not found; install openmpi-bin libopenmpi-dev (tools/setup.sh does)" >&2
  exit 2
}
extra=(--oversubscribe)
[ "${MPIRUN_QUIET:-1}" = 0 ] || extra+=(--quiet)
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  extra+=(--allow-run-as-root)
fi
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
export OMPI_MCA_odls_base_sigkill_timeout=${OMPI_MCA_odls_base_sigkill_timeout:-3}
export OMPI_MCA_oob_tcp_keepalive_time=${OMPI_MCA_oob_tcp_keepalive_time:-4}
export OMPI_MCA_oob_tcp_keepalive_intvl=${OMPI_MCA_oob_tcp_keepalive_intvl:-1}
export OMPI_MCA_oob_tcp_keepalive_probes=${OMPI_MCA_oob_tcp_keepalive_probes:-4}
export OMPI_MCA_btl_tcp_eager_limit=${OMPI_MCA_btl_tcp_eager_limit:-1048576}
if [ -z "${OMPI_MCA_plm_rsh_agent:-}" ] && [[ " $* " != *" plm_rsh_agent "* ]]; then
  export OMPI_MCA_plm_rsh_args=${OMPI_MCA_plm_rsh_args:--o ConnectTimeout=5 -o BatchMode=yes}
fi
if [ -t 2 ] && [ -z "${STALESGD_LIVE_LINE:-}" ]; then
  columns=$(stty size <&2 2>/dev/null | cut -d' ' -f2) || true
  export STALESGD_LIVE_LINE=${columns:-80}
fi
[ -z "${STALESGD_LIVE_LINE:-}" ] || extra+=(-x STALESGD_LIVE_LINE)
export STALESGD_MPIRUN_REPORTS_STOP=1
extra+=(-x STALESGD_MPIRUN_REPORTS_STOP)

pid=""      # mpirun's, once started
stopped=0   # 128 + the first signal passed on; 0 while none was
signal=USR1 # what it went to the ranks as
first=0     # $SECONDS at the first
trapped=0   # a signal arrived during the current wait
stop() {
  trapped=1
  if [ "$stopped" -eq 0 ]; then
    stopped=$1 signal=$2 first=$SECONDS
    [ -z "$pid" ] || kill -"$signal" "$pid" 2>/dev/null || true
  elif [ "$SECONDS" -gt "$first" ]; then
    # Not the first stop sent twice (`timeout` signals its child, then its process group).
    [ -z "$pid" ] || kill -TERM "$pid" 2>/dev/null || true
  fi
}
trap 'stop 130 USR1' INT
trap 'stop 143 USR1' TERM
trap 'stop 129 USR1' HUP
trap 'stop 138 USR1' USR1
trap 'stop 140 USR2' USR2
setsid "$mpirun" "${extra[@]}" "$@" </dev/null &
pid=$!
[ "$stopped" -eq 0 ] || kill -"$signal" "$pid" 2>/dev/null || true # a signal before the start
# wait returns early (> 128) when a trapped signal arrives; then wait again, for mpirun's status.
status=0
while :; do
  trapped=0
  last=$status
  wait "$pid" && status=0 || status=$?
  # 127: the wait before got mpirun's status just as a signal arrived.
  [ "$status" -ne 127 ] || { status=$last; break; }
  [ "$trapped" -eq 1 ] || break
done
# The ranks exit 0 after a stop (STALESGD_MPIRUN_REPORTS_STOP); a failure keeps its status.
[ "$stopped" -ne 0 ] && [ "$status" -eq 0 ] && exit "$stopped"
exit "$status"
