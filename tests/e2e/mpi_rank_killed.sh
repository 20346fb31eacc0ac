#!/bin/bash
# A rank of `mpirun rnicsim run` killed mid-run ends the whole job: mpirun
# exits non-zero within seconds and names the rank, while the other rank
# waits for it in the window's exchange.
# usage: mpi_rank_killed.sh MPIRUN RNICSIM SOURCE_DIR
set -u
mpirun=$1 rnicsim=$2 src=$3
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp)
dir=$(mktemp -d)  # its path on the command line tells this job's processes from any other's
trap 'rm -rf "$out" "$dir"; [ -n "${job:-}" ] && kill -9 "$job" 2>/dev/null' EXIT
# A run of minutes: the fat-tree with a second of arrivals.
"$mpirun" -np 2 --oversubscribe "$rnicsim" run "$src/scenarios/scale/fat_tree_128.yaml" \
  --set workloads.0.flows.duration=1s --partitions 2 --threads 1 --progress never --out "$dir/out" \
  < /dev/null > "$out" 2>&1 &
job=$!
# Rank 1: the process of the job whose environment says so.
rank1=
for _ in $(seq 300); do
  for p in $(pgrep -f -- "--out $dir/out"); do
    tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1 && rank1=$p
  done
  [ -n "$rank1" ] && break
  sleep 0.1
done
fail=0
bad() { echo "FAIL: $*"; fail=1; }
[ -n "$rank1" ] || { bad "no process of rank 1 found"; exit 1; }
sleep 2  # well into the run: the world built, windows going
kill -0 "$job" 2>/dev/null || bad "the job ended before rank 1 was killed"
kill -9 "$rank1"
started=$SECONDS
for _ in $(seq 300); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
took=$((SECONDS - started))
if kill -0 "$job" 2>/dev/null; then bad "mpirun still running ${took} s after rank 1 was killed"; fi
wait "$job"
rc=$?
job=
[ $rc -ne 0 ] || bad "mpirun exited 0"
grep -Eq "rank 1 .*(signal 9|Killed)" "$out" || bad "no message naming rank 1"
[ $fail -eq 0 ] && echo "PASS (mpirun exit $rc ${took} s after rank 1 was killed)"
grep -E "rank 1" "$out"
[ $fail -eq 0 ] || tail -20 "$out"
exit $fail
