#!/bin/bash
# Runs one hostile program (tests/shim/hostile/*.c) on a daemon of its own, then
# checks that it hurt only itself: the daemon is still there and serves a
# second pair of programs (ibv_rc_pingpong on PORT), and exits cleanly.
# The program finds the daemon's pid in RNICSIM_TEST_DAEMON_PID.
# usage: run.sh RNICSIM OUTDIR PORT PROGRAM ARGS...
set -u
rnicsim=$1 out=$2 port=$3
shift 3
mkdir -p "$out"
. "$(dirname "$0")/../daemon.sh"
start_daemon "$rnicsim" "$out/daemon.log"
RNICSIM_TEST_DAEMON_PID=$daemon timeout 300 "$rnicsim" exec --socket "$sock" -- "$@"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: the program exited with $rc"; cat "$out/daemon.log"; exit 1; }
kill -0 "$daemon" 2>/dev/null || { echo "FAIL: the daemon is gone"; cat "$out/daemon.log"; exit 1; }
timeout 60 "$rnicsim" exec --socket "$sock" -- ibv_rc_pingpong -p "$port" -g 0 -n 50 > "$out/server.log" 2>&1 &
server=$!
wait_listen "$port"
timeout 60 "$rnicsim" exec --socket "$sock" -- ibv_rc_pingpong -p "$port" -g 0 -n 50 localhost > "$out/client.log" 2>&1
client_rc=$?
wait $server
server_rc=$?
kill -INT "$daemon"
wait "$daemon"
daemon_rc=$?
cat "$out/daemon.log"
[ $client_rc -eq 0 ] && [ $server_rc -eq 0 ] || { echo "FAIL: a second pair did not complete"; cat "$out"/*.log; exit 1; }
[ $daemon_rc -eq 0 ] || { echo "FAIL: the daemon exited with $daemon_rc"; exit 1; }
echo PASS
