#!/usr/bin/env bash
# Runs mpirun with what this kind of machine needs, passing every argument through.
# usage: tools/mpirun.sh -np N build/stalesgd train --engine mpi [train flags...]
#        tools/mpirun.sh --hostfile hosts -np N build/stalesgd train --engine mpi ...
# Rank 0 is the parameter server, ranks 1..N-1 the workers (docs/distributed.md).
# - As root, Open MPI refuses to start unless told (--allow-run-as-root and its two variables).
# - --oversubscribe: more ranks than cores is the normal case here (workers sleep out delays).
# - --quiet: stalesgd reports its own failures in one line (rank 0); without it mpirun adds a
#   ten-line banner for every non-zero exit. MPIRUN_QUIET=0 shows Open MPI's messages, e.g.
#   after a crash.
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
exec "$mpirun" "${extra[@]}" "$@"
