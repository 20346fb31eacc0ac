#!/bin/bash
# Runs one program through `rnicsim exec` on a daemon of its own and prints
# what it and the daemon said (the test's regular expression judges).
# usage: alone.sh RNICSIM OUTDIR PROGRAM ARGS...
set -u
rnicsim=$1 out=$2
shift 2
mkdir -p "$out"
. "$(dirname "$0")/../shim/daemon.sh"
start_daemon "$rnicsim" "$out/daemon.log"
timeout 60 "$rnicsim" exec --socket "$sock" -- "$@" 2>&1
echo "--- exit $?"
kill -INT "$daemon"
wait "$daemon"
cat "$out/daemon.log"
