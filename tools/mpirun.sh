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
# - odls_base_sigkill_timeout 3: after mpirun's SIGTERM (Ctrl-C, or a rank that died) rank 0
#   has 3 s, not 1, to write everything before SIGKILL (a rank stopped by SIGSTOP holds an
#   abort about twice that long).
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
exec "$mpirun" "${extra[@]}" "$@"
