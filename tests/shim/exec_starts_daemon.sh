#!/bin/bash
# rnicsim exec with no daemon answering starts one (the built-in two-host
# scenario) and runs the program on it.
# usage: exec_starts_daemon.sh RNICSIM
set -u
rnicsim=$1
tmp=$(mktemp -d /tmp/rnicsim-test.XXXXXX)
sock=$tmp/daemon.sock
out=$("$rnicsim" exec --socket "$sock" -- ibv_devinfo 2>&1)
rc=$?
echo "$out"
# The daemon exec started (it would leave by itself 10 s after its last program).
pid=$(pgrep -f "serve --socket $sock")
[ -n "$pid" ] && kill -INT $pid
sleep 0.2
cat "$sock.log" 2>/dev/null
rm -rf "$tmp"
[ $rc -eq 0 ] && echo "$out" | grep -q "hca_id:.*rnicsim0" && [ -n "$pid" ] && echo PASS && exit 0
echo "FAIL"
exit 1
