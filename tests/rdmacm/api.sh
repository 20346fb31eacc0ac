#!/bin/bash
# tests/rdmacm/api.c on the CM shim, three ways:
# 1. basics, with RNICSIM_TRACE: the trace has each call and its return value
#    (rdma_get_src_port as a 16-bit value);
# 2. devices, through rnicsim exec on a daemon of its own;
# 3. passthrough (RNICSIM_MODE=passthrough): the system's librdmacm answers,
#    and the trace has its calls and the verbs calls it makes.
# usage: api.sh RNICSIM PROGRAM SYSTEM_LIBRDMACM OUTDIR
set -u
rnicsim=$1 program=$2 real=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out" && mkdir -p "$out"
fail=0

echo "--- basics"
RNICSIM_SOCKET=/nonexistent/rnicsim.sock RNICSIM_TRACE=$out/basics.jsonl timeout 60 "$program" basics || fail=1
for line in '"return":"rdma_event_str","value":"0x[0-9a-f]+"' '"return":"rdma_getaddrinfo","value":0,' \
            '"return":"rdma_getaddrinfo","value":-2,' "\"return\":\"rdma_get_src_port\",\"value\":$(( (40000 >> 8) | ((40000 & 255) << 8) ))," \
            '"return":"rdma_create_id","value":-1,"errno":19' '"return":"rdma_freeaddrinfo","errno"'; do
  grep -qE "$line" "$out/basics.jsonl" || { echo "FAIL: no trace line matching $line"; fail=1; }
done

echo "--- devices"
. "$here/../shim/daemon.sh"
start_daemon "$rnicsim" "$out/daemon.log"
timeout 60 "$rnicsim" exec --socket "$sock" -- "$program" devices || fail=1

echo "--- passthrough"
RNICSIM_MODE=passthrough RNICSIM_TRACE=$out/passthrough.jsonl timeout 60 "$program" passthrough "$real" || fail=1
for call in rdma_event_str rdma_getaddrinfo; do
  grep -q "\"call\":\"$call\"" "$out/passthrough.jsonl" || { echo "FAIL: $call is not in the passthrough trace"; fail=1; }
done
# The system's rdma_getaddrinfo opens the kernel's CM first (verbs calls,
# traced by the verbs shim, between its call and its return); the shim's own
# makes no verbs call.
awk '/"call":"rdma_getaddrinfo"/ {in_call = 1} /"return":"rdma_getaddrinfo"/ {in_call = 0}
     in_call && /"call":"ibv_/ {nested = 1} END {exit !nested}' "$out/passthrough.jsonl" ||
  { echo "FAIL: no verbs call inside rdma_getaddrinfo: the system library did not answer it"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
