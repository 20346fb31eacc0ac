#!/bin/bash
# SIGKILL of one program mid-transfer: the daemon keeps serving, the peer's QP
# gets an error completion (its RDMA WRITE retries go unanswered), and the dead program's
# host and resources are released: a new pair of programs runs on the same daemon.
# usage: sigkill.sh RNICSIM OUTDIR PORT
set -u
rnicsim=$1 out=$2 port=$3
mkdir -p "$out"
. "$(dirname "$0")/daemon.sh"
# The capture shows when the transfer is under way (a fixed delay does not: in
# the sanitizer build the set-up alone can take longer than it).
rm -f "$out/capture.pcap"
start_daemon "$rnicsim" "$out/daemon.log" --pcap "$out/capture.pcap"

# ib_write_bw: the client keeps RDMA WRITEs in flight; the server is killed.
"$rnicsim" exec --socket "$sock" -- ib_write_bw -p "$port" -D 60 > "$out/victim.log" 2>&1 &
victim=$!
wait_listen "$port"
"$rnicsim" exec --socket "$sock" -- ib_write_bw -p "$port" -D 60 localhost > "$out/survivor.log" 2>&1 &
survivor=$!
for _ in $(seq 600); do
  [ "$(stat -c %s "$out/capture.pcap" 2>/dev/null || echo 0)" -gt 1000000 ] && break
  sleep 0.1
done
kill -KILL $victim
wait $victim 2>/dev/null
timeout 60 tail --pid=$survivor -f /dev/null
wait $survivor
survivor_rc=$?
fail=0
echo "--- survivor (exit $survivor_rc)"; cat "$out/survivor.log"
grep -qi "completion with error\|Failed status" "$out/survivor.log" || { echo "FAIL: the survivor saw no error completion"; fail=1; }
kill -0 $daemon 2>/dev/null || { echo "FAIL: the daemon died"; fail=1; }

# The daemon still serves, with both hosts free again.
port2=$((port + 1))
"$rnicsim" exec --socket "$sock" -- ibv_rc_pingpong -p $port2 -g 0 -n 100 -c > "$out/after_server.log" 2>&1 &
s2=$!
wait_listen $port2
"$rnicsim" exec --socket "$sock" -- ibv_rc_pingpong -p $port2 -g 0 -n 100 -c localhost > "$out/after_client.log" 2>&1
c2=$?
wait $s2
s2rc=$?
cat "$out/after_client.log"
[ $c2 -eq 0 ] && [ $s2rc -eq 0 ] || { echo "FAIL: a new pair did not run after the kill"; fail=1; }
kill -INT $daemon; wait $daemon
echo "--- daemon"; cat "$out/daemon.log"
rm -f "$out/capture.pcap"
[ $fail -eq 0 ] && echo PASS
exit $fail
