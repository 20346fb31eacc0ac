#!/bin/bash
# UCX (Debian's ucx-utils, unmodified) on two emulated hosts, each on a
# network of its own. ucx_info lists the device with its IB transports;
# ucx_perftest runs tag_lat, tag_bw and ucp_put_bw over RC and over UD, its
# out-of-band socket to the server's host address. UCX wires RC up through UD
# on any device, so the RC runs name ud_verbs as auxiliary only (UCX's "rc_v"):
# the capture shows their data on RC. Every packet decodes in tshark.
# usage: ucx.sh RNICSIM OUTDIR PORT ITERATIONS
set -u
rnicsim=$1 out=$2 port=$3 iters=$4
mkdir -p "$out"
. "$(dirname "$0")/daemon.sh"
start_daemon "$rnicsim" "$out/daemon.log" --network namespaces --pcap "$out/ucx.pcap"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
ex() { "$rnicsim" exec --socket "$sock" "$@"; }

ex --host host0 -- ucx_info -d > "$out/ucx_info.txt" 2>&1 || bad "ucx_info -d: exit $?"
grep -q "Memory domain: rnicsim0" "$out/ucx_info.txt" || bad "no rnicsim0 memory domain"
for tl in rc_verbs ud_verbs; do
  grep -A1 "Transport: $tl" "$out/ucx_info.txt" | grep -q "Device: rnicsim0:1" || bad "no $tl on rnicsim0:1"
done

# run_perftest TLS TEST: server on host0, client on host1 by address.
run_perftest() {
  local tls=$1 test=$2 name="$out/${2}_${1%%,*}" before=$fail
  fail=0
  local env=(env UCX_TLS="$tls" UCX_NET_DEVICES=rnicsim0:1)
  # The wait below reads the server's output: none may be left from an earlier
  # run (the background job truncates the file only once it starts).
  rm -f "$name.server" "$name.client"
  ex --host host0 -- "${env[@]}" stdbuf -oL timeout 120 ucx_perftest -p "$port" -t "$test" -n "$iters" > "$name.server" 2>&1 &
  local server=$!
  # It listens before it says so (line-buffered; one program per host, so no ss).
  for _ in $(seq 200); do grep -q "Waiting for connection" "$name.server" && break; sleep 0.1; done
  ex --host host1 -- "${env[@]}" timeout 120 ucx_perftest -p "$port" -t "$test" -n "$iters" 10.0.0.1 \
    > "$name.client" 2>&1 || bad "$test over $tls: client exit $?"
  wait $server || bad "$test over $tls: server exit $?"
  [ $fail -eq 0 ] || tail -n 25 "$name.client" "$name.server"
  fail=$((fail | before))
  grep -qE "^Final: +$iters " "$name.client" || bad "$test over $tls did not finish: $(tail -2 "$name.client")"
}
for tls in rc_verbs,ud_verbs:aux ud_verbs; do
  for test in tag_lat tag_bw ucp_put_bw; do run_perftest "$tls" "$test"; done
done

kill -INT $daemon; wait $daemon
tshark=(tshark -n "${payload_as_data[@]}" -r "$out/ucx.pcap")
"${tshark[@]}" -q -z io,phs > "$out/phs.txt" 2>/dev/null
total=$("${tshark[@]}" 2>/dev/null | wc -l)
ib=$("${tshark[@]}" -Y infiniband 2>/dev/null | wc -l)
broken=$("${tshark[@]}" -Y '_ws.malformed || _ws.expert.severity >= 8388608' 2>/dev/null | wc -l)
rc_data=$("${tshark[@]}" -Y 'infiniband.bth.opcode == 4 || infiniband.bth.opcode == 10' 2>/dev/null | wc -l)
ud_data=$("${tshark[@]}" -Y 'infiniband.bth.opcode == 100' 2>/dev/null | wc -l)
echo "capture: $total packets, $ib InfiniBand, $broken malformed; $rc_data RC SEND/WRITE ONLY, $ud_data UD SEND"
[ "$total" -gt 0 ] && [ "$ib" -eq "$total" ] && [ "$broken" -eq 0 ] || bad "the capture does not decode cleanly"
[ "$rc_data" -gt "$iters" ] || bad "the RC runs' data is not on RC"
[ "$ud_data" -gt "$iters" ] || bad "the UD runs' data is not on UD"
tail -1 "$out/daemon.log"
[ $fail -eq 0 ] && echo PASS
exit $fail
