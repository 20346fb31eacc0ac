#!/bin/bash
# A rank that fails ends the whole job: mpirun exits non-zero within seconds,
# with the failing rank's message, while the other ranks wait in an exchange
# (--abort-on-rank) or run the windowed engine (--throw-on-rank: an event
# throws).
# usage: mpi_rank_failure.sh MPIRUN MPI_RANKS_TEST
set -u
mpirun=$1 program=$2
# mpirun refuses root unless told: CI runs as root.
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# fails RANK MODE MESSAGE: rank RANK of 3 fails in MODE; the job ends with MESSAGE.
fails() {
  local started=$SECONDS out rc took
  out=$(timeout 60 "$mpirun" -np 3 --oversubscribe "$program" "$2" "$1" 2>&1)
  rc=$?
  took=$((SECONDS - started))
  [ $rc -ne 0 ] || bad "$2: mpirun exited 0"
  [ $rc -ne 124 ] || bad "$2: the job hung (killed after 60 s)"
  [ $took -lt 20 ] || bad "$2: the job took $took s to end"
  grep -q "rnicsim: rank $1 of 3: $3" <<< "$out" || { bad "$2: no message naming rank $1"; echo "$out" | tail -20; }
  echo "$2 $1: mpirun exit $rc after $took s"
}
fails 1 --abort-on-rank "asked to fail"
fails 2 --throw-on-rank "broken model"
[ $fail -eq 0 ] && echo PASS
exit $fail
