#!/bin/bash
# Runs the multi-threaded verbs program tests/shim/threads.c on the shim, on a
# daemon of its own.
# usage: threads.sh RNICSIM PROGRAM OUTDIR [MESSAGES]
set -u
rnicsim=$1 program=$2 out=$3 messages=${4:-2000}
mkdir -p "$out"
. "$(dirname "$0")/daemon.sh"
start_daemon "$rnicsim" "$out/daemon.log"
timeout 300 "$rnicsim" exec --socket "$sock" -- "$program" "$messages"
rc=$?
kill -INT "$daemon"
wait "$daemon"
daemon_rc=$?
cat "$out/daemon.log"
[ $rc -eq 0 ] || { echo "FAIL: the program exited with $rc"; exit 1; }
[ $daemon_rc -eq 0 ] || { echo "FAIL: the daemon exited with $daemon_rc"; exit 1; }
echo PASS
