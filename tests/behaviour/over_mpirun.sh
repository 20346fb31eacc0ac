#!/bin/bash
# rnicsim as one job of several ranks: behaviour.sh runs this in its place, so
# that every scenario's outputs under mpirun are checked against the recorded
# fingerprints of one process. The environment names the job:
# MPIRUN, RANKS and RNICSIM (the program each rank runs).
# mpirun refuses root unless told: CI runs as root.
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# mpirun forwards its stdin to rank 0: not the caller's list of scenarios.
exec "${MPIRUN:?}" -np "${RANKS:?}" --oversubscribe "${RNICSIM:?}" "$@" < /dev/null
