#!/bin/bash
# A rank that fails ends the whole job: mpirun exits non-zero within seconds,
# with the failing rank's message, while the other ranks wait in an exchange.
# usage: mpi_rank_failure.sh MPIRUN MPI_RANKS_TEST
set -u
mpirun=$1 program=$2
# mpirun refuses root unless told: CI runs as root.
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
started=$SECONDS
out=$(timeout 60 "$mpirun" -np 3 --oversubscribe "$program" --abort-on-rank 1 2>&1)
rc=$?
took=$((SECONDS - started))
fail=0
bad() { echo "FAIL: $*"; fail=1; }
[ $rc -ne 0 ] || bad "mpirun exited 0"
[ $rc -ne 124 ] || bad "the job hung (killed after 60 s)"
[ $took -lt 20 ] || bad "the job took $took s to end"
grep -q "rnicsim: rank 1 of 3: asked to fail" <<< "$out" || bad "no message naming rank 1"
[ $fail -eq 0 ] && echo "PASS (mpirun exit $rc after $took s)" || echo "$out" | tail -20
exit $fail
