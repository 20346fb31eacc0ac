#!/bin/bash
# Runs verbs_misuse.py on the shim, on a daemon of its own.
# usage: verbs_misuse.sh RNICSIM OUTDIR
set -u
rnicsim=$1 out=$2
mkdir -p "$out"
. "$(dirname "$0")/../shim/daemon.sh"
start_daemon "$rnicsim" "$out/daemon.log"
timeout 60 "$rnicsim" exec --socket "$sock" -- /usr/bin/python3 "$(dirname "$0")/verbs_misuse.py"
