#!/bin/bash
# Runs one verbs program built against the shim (tests/shim/*.c) on a daemon of
# its own; passes when the program and the daemon both exit 0.
# usage: program.sh RNICSIM OUTDIR PROGRAM [ARGS...]
set -u
rnicsim=$1 out=$2
shift 2
mkdir -p "$out"
. "$(dirname "$0")/daemon.sh"
start_daemon "$rnicsim" "$out/daemon.log"
timeout 300 "$rnicsim" exec --socket "$sock" -- "$@"
rc=$?
kill -INT "$daemon"
wait "$daemon"
daemon_rc=$?
cat "$out/daemon.log"
[ $rc -eq 0 ] || { echo "FAIL: the program exited with $rc"; exit 1; }
[ $daemon_rc -eq 0 ] || { echo "FAIL: the daemon exited with $daemon_rc"; exit 1; }
echo PASS
