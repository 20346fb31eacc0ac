#!/bin/bash
# Runs an unmodified RDMA program as a server and a client, each through
# `rnicsim exec` on its own host of a daemon started here, and checks that both
# complete. The program's own TCP exchange (of QP numbers) uses PORT, which must
# be among its arguments, so tests can run side by side.
# usage: run_pair.sh RNICSIM OUTDIR SCENARIO|- PORT [--pcap] [--expect REGEX] -- PROGRAM ARGS...
#   SCENARIO "-": the daemon's default (two hosts, lossless 100 Gb/s).
#   --pcap: the daemon captures the first host's port into OUTDIR/capture.pcap.
#   --timeline: the daemon writes its WQE timeline into OUTDIR/timeline.json.
#   --passthrough: the programs run with `rnicsim exec --passthrough`.
#   --expect: the client's output must match REGEX (grep -E), and the server's
#     too unless the program reports on the client only (perftest's READ and
#     atomic latency tests).
#   --expect-daemon: a line of the daemon's log (its exit summary, say) must
#     match REGEX (the option may be repeated).
#   --daemon-without-ptrace: the daemon runs without CAP_SYS_PTRACE (setpriv),
#     the programs keep every capability: as root, process_vm_readv of the
#     programs fails (EPERM) and the daemon has to use shared memory. Skipped
#     (exit 77) when not run as root.
#   --last-ack-may-be-lost: on a lossy link, the server may fail its last SEND
#     with "transport retry counter exceeded" once the client has received
#     every message and left: the ACK of that SEND was lost and the client's
#     QP, destroyed when it exits, no longer answers the retransmissions (the
#     same happens on hardware; rc_pingpong has no closing handshake). Accepted
#     only when the client completed and its output matches --expect, which
#     shows every server message arrived.
set -u
all_args=("$@")
rnicsim=$1 out=$2 scenario=$3 port=$4
shift 4
pcap="" expect="" expect_daemon=() exec_opts="" last_ack=0 daemon_prefix=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    --pcap) pcap="--pcap $out/capture.pcap" ;;
    --timeline) pcap="$pcap --timeline $out/timeline.json" ;;
    --expect) expect=$2; shift ;;
    --expect-daemon) expect_daemon+=("$2"); shift ;;
    --daemon-without-ptrace)
      [ "$(id -u)" -eq 0 ] || { echo "SKIP: only root's programs have capabilities the daemon can lack"; exit 77; }
      daemon_prefix="setpriv --bounding-set=-sys_ptrace --inh-caps=-sys_ptrace" ;;
    --passthrough) exec_opts="--passthrough" ;;
    --last-ack-may-be-lost) last_ack=1 ;;
    *) echo "run_pair.sh: unknown option $1"; exit 2 ;;
  esac
  shift
done
shift
mkdir -p "$out"
rm -f "$out/capture.pcap"
args=()
[ "$scenario" != "-" ] && args+=("$scenario")
. "$(dirname "$0")/daemon.sh"
# shellcheck disable=SC2086
start_daemon "$rnicsim" "$out/daemon.log" "${args[@]}" $pcap

# shellcheck disable=SC2086
timeout 120 "$rnicsim" exec $exec_opts --socket "$sock" -- "$@" > "$out/server.log" 2>&1 &
server=$!
wait_listen "$port"
# shellcheck disable=SC2086
timeout 120 "$rnicsim" exec $exec_opts --socket "$sock" -- "$@" localhost > "$out/client.log" 2>&1
client_rc=$?
wait $server
server_rc=$?
kill -INT "$daemon"
wait "$daemon"
echo "--- server (exit $server_rc)"; cat "$out/server.log"
echo "--- client (exit $client_rc)"; cat "$out/client.log"
echo "--- daemon"; cat "$out/daemon.log"
if [ $server_rc -ne 0 ] && [ $last_ack -eq 1 ] && [ $client_rc -eq 0 ] && [ -n "$expect" ] &&
   grep -Eq "$expect" "$out/client.log" && grep -q "transport retry counter exceeded" "$out/server.log"; then
  echo "PASS (the client received every message and left; the ACK of the server's last SEND was lost)"
  exit 0
fi
# perftest times its report by fitting its cycle counter to gettimeofday over
# 200 short spins; one spin preempted between its two reads (a loaded machine,
# a VM's stolen time) spoils the fit, and perftest gives up ("Correlation
# coefficient r^2 ... < 0.9", "Can't produce a report") after the transfer
# itself went through. That is perftest's clock, not the run: the pair runs
# again, three times at most.
attempt=${RUN_PAIR_ATTEMPT:-1}
if { [ $server_rc -ne 0 ] || [ $client_rc -ne 0 ]; } && [ "$attempt" -lt 3 ] &&
   grep -q "Can't produce a report" "$out/server.log" "$out/client.log"; then
  echo "perftest could not fit its own clock (r^2 < 0.9): attempt $((attempt + 1))"
  rm -rf "$tmp"
  RUN_PAIR_ATTEMPT=$((attempt + 1)) exec "$0" "${all_args[@]}"
fi
[ $server_rc -eq 0 ] && [ $client_rc -eq 0 ] || { echo "FAIL: a side did not complete"; exit 1; }
if [ -n "$expect" ]; then
  grep -Eq "$expect" "$out/client.log" || { echo "FAIL: the client's output does not match '$expect'"; exit 1; }
  case "$1" in ib_read_lat|ib_atomic_lat) ;; *)
    grep -Eq "$expect" "$out/server.log" || { echo "FAIL: the server's output does not match '$expect'"; exit 1; } ;;
  esac
fi
for e in "${expect_daemon[@]}"; do
  grep -Eq "$e" "$out/daemon.log" || { echo "FAIL: the daemon's log does not match '$e'"; exit 1; }
done
echo "PASS"
