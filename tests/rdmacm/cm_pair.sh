#!/bin/bash
# Runs an unmodified RDMA-CM program pair through `rnicsim exec` on a daemon of
# its own: the server on the first host (10.0.0.1 in the default scenario),
# started first, and, once the daemon says the server listens on PORT, the
# client on the second. Both must complete.
# usage: cm_pair.sh RNICSIM OUTDIR SCENARIO|- PORT [options] -- SERVER ARGS... -- CLIENT ARGS...
#   --pcap: the daemon captures the first host's port into OUTDIR/capture.pcap.
#   --clock virtual: the daemon runs the virtual clock, the programs run with
#     fixed addresses (a reproducible run).
#   --expect REGEX: the client's output must match it.
#   --expect-server REGEX: the server's output must match it.
#   --expect-daemon REGEX: a line of the daemon's log must match it (repeatable).
#   --client-fails: the client must fail (exit non-zero), the server is stopped.
#   --no-listener: nobody listens (the server is a program that waits); the
#     client starts at once.
#   --retry-if-raced: perftest -R's own race (its client connects its data QPs
#     as soon as the exchange is done, and may reach the server before the
#     server listens again: REJECTED, reason 8, as it can on hardware) runs
#     the pair again, at most twice more; any other failure fails.
#   --server-stays: the server serves until stopped (cmtime's does): it is
#     stopped once the client is done, and only the client must complete.
#   --rping: Debian's rping (rdma-core 44) has an exit race of its own: its
#     event thread, back from the last event, may call rdma_get_cm_event on
#     the channel the main thread has just destroyed, and exits 255 with
#     "rdma_get_cm_event: Bad file descriptor" (on hardware too; rdma-core
#     fixed it later with "rping: terminate CM event thread before
#     exiting"). A side that exits so after it took its own DISCONNECTED
#     event and printed all its pings completed.
set -u
all_args=("$@")
rnicsim=$1 out=$2 scenario=$3 port=$4
shift 4
pcap="" clock="" network="" expect="" expect_server="" expect_daemon=() client_fails=0 server_stays=0 no_listener=0 retry_if_raced=0 rping=0
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    --pcap) pcap="--pcap $out/capture.pcap" ;;
    --clock) clock="--clock $2"; shift ;;
    --network) network="--network $2"; shift ;;
    --expect) expect=$2; shift ;;
    --expect-server) expect_server=$2; shift ;;
    --expect-daemon) expect_daemon+=("$2"); shift ;;
    --client-fails) client_fails=1 ;;
    --server-stays) server_stays=1 ;;
    --no-listener) no_listener=1 ;;
    --retry-if-raced) retry_if_raced=1 ;;
    --rping) rping=1 ;;
    *) echo "cm_pair.sh: unknown option $1"; exit 2 ;;
  esac
  shift
done
shift
server_cmd=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do server_cmd+=("$1"); shift; done
shift
client_cmd=("$@")
mkdir -p "$out"
rm -f "$out/capture.pcap"
args=()
[ "$scenario" != "-" ] && args+=("$scenario")
. "$(dirname "$0")/../shim/daemon.sh"
# shellcheck disable=SC2086
start_daemon "$rnicsim" "$out/daemon.log" "${args[@]}" $pcap $clock $network

# shellcheck disable=SC2086
timeout 150 "$rnicsim" exec $clock --socket "$sock" -- "${server_cmd[@]}" > "$out/server.log" 2>&1 &
server=$!
for _ in $(seq 200); do
  [ $no_listener -eq 1 ] && break
  grep -q "listens on RDMA CM port $port " "$out/daemon.log" && break
  sleep 0.05
done
# shellcheck disable=SC2086
timeout 150 "$rnicsim" exec $clock --socket "$sock" -- "${client_cmd[@]}" > "$out/client.log" 2>&1
client_rc=$?
try=${RNICSIM_CM_PAIR_TRY:-1}
if [ $retry_if_raced -eq 1 ] && [ $client_rc -ne 0 ] && [ "$try" -lt 3 ] &&
   grep -q "Event: RDMA_CM_EVENT_REJECTED; error: 8\." "$out/client.log"; then
  kill "$server" 2>/dev/null
  wait $server
  kill -INT "$daemon"
  wait "$daemon"
  echo "--- try $try: the client's data connection reached the server before it listened again (REJECTED, 8):"
  cat "$out/client.log"
  rm -rf "$tmp"
  RNICSIM_CM_PAIR_TRY=$((try + 1)) exec "$0" "${all_args[@]}"
fi
if [ $client_fails -eq 1 ] || [ $server_stays -eq 1 ]; then
  kill "$server" 2>/dev/null
  wait $server
  server_rc=0
else
  wait $server
  server_rc=$?
fi
kill -INT "$daemon"
wait "$daemon"
echo "--- server (exit $server_rc)"; cat "$out/server.log"
echo "--- client (exit $client_rc)"; cat "$out/client.log"
echo "--- daemon"; cat "$out/daemon.log"
# rping's exit race (above): SIDE's log shows its own DISCONNECTED event, then
# the event thread's read of the destroyed channel.
rping_exit_race() {
  [ $rping -eq 1 ] && [ "$2" -eq 255 ] && grep -q "^$3 DISCONNECT EVENT" "$1" &&
    grep -q "^rdma_get_cm_event: Bad file descriptor" "$1" &&
    echo "--- $3: rping's own exit race (exit 255 after its DISCONNECTED event); counted as complete"
}
rping_exit_race "$out/client.log" $client_rc client && client_rc=0
rping_exit_race "$out/server.log" $server_rc server && server_rc=0
if [ $client_fails -eq 1 ]; then
  [ $client_rc -ne 0 ] || { echo "FAIL: the client should have failed"; exit 1; }
else
  [ $server_rc -eq 0 ] && [ $client_rc -eq 0 ] || { echo "FAIL: a side did not complete"; exit 1; }
fi
if [ -n "$expect" ]; then
  grep -Eq "$expect" "$out/client.log" || { echo "FAIL: the client's output does not match '$expect'"; exit 1; }
fi
if [ -n "$expect_server" ]; then
  grep -Eq "$expect_server" "$out/server.log" || { echo "FAIL: the server's output does not match '$expect_server'"; exit 1; }
fi
for e in "${expect_daemon[@]}"; do
  grep -Eq "$e" "$out/daemon.log" || { echo "FAIL: the daemon's log does not match '$e'"; exit 1; }
done
echo "PASS"
