#!/bin/bash
# The daemon is killed (SIGKILL) under running programs. First the verbs
# program tests/shim/daemon_death.c (events, flushed work, failed posts); then
# ib_write_bw and ibv_rc_pingpong pairs in the middle of their transfers: each
# of the four programs must exit with an error within five seconds.
# usage: daemon_death.sh RNICSIM PROGRAM SCENARIO OUTDIR PORT
set -u
rnicsim=$1 program=$2 scenario=$3 out=$4 port=$5
mkdir -p "$out"
. "$(dirname "$0")/daemon.sh"
start_daemon "$rnicsim" "$out/daemon1.log"
RNICSIM_TEST_DAEMON_PID=$daemon timeout 30 "$rnicsim" exec --socket "$sock" -- "$program" || { echo "FAIL: $program"; exit 1; }

start_daemon "$rnicsim" "$out/daemon2.log" "$scenario"
pids=()
run() {  # run NAME HOST ARGS...: a program on HOST, in the background
  local name=$1 host=$2
  shift 2
  rm -f "$out/$name.log"  # in_transfer reads it: nothing of an earlier run
  timeout 60 "$rnicsim" exec --socket "$sock" --host "$host" -- stdbuf -oL "$@" > "$out/$name.log" 2>&1 &
  pids+=($!)
}
# Waits until every pair is in its transfer: a program still setting up when
# the daemon dies may be blocked in a TCP exchange with its peer, where no
# verbs call can tell it (as on hardware). A slow machine takes seconds to
# get there.
in_transfer() {
  grep -q "remote address" "$out/pingpong_server.log" && grep -q "remote address" "$out/pingpong_client.log" &&
    grep -q "#bytes" "$out/write_bw_client.log" && grep -q "#bytes" "$out/write_bw_server.log"
}
run write_bw_server h0 ib_write_bw -p "$port" -n 2000000 -s 65536
wait_listen "$port"
run write_bw_client h1 ib_write_bw -p "$port" -n 2000000 -s 65536 localhost
run pingpong_server h2 ibv_rc_pingpong -p $((port + 1)) -g 0 -n 100000000
wait_listen $((port + 1))
run pingpong_client h3 ibv_rc_pingpong -p $((port + 1)) -g 0 -n 100000000 localhost
for _ in $(seq 600); do in_transfer && break; sleep 0.1; done
in_transfer || { echo "FAIL: the pairs did not start their transfers in 60 s"; tail "$out"/*.log; exit 1; }
sleep 1
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || { echo "FAIL: a program ended before the daemon died"; tail "$out"/*.log; exit 1; }; done
kill -9 "$daemon"
start=$(date +%s%N)
fail=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}"
  rc=$?
  took_ms=$((($(date +%s%N) - start) / 1000000))
  echo "program $i exited with $rc after $took_ms ms"
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || { echo "FAIL: program $i did not exit with an error"; fail=1; }
  [ "$took_ms" -lt 5000 ] || { echo "FAIL: program $i took more than 5 s"; fail=1; }
done
[ $fail -eq 0 ] || { tail -n 5 "$out"/*.log; exit 1; }
echo PASS
