#!/bin/sh
# What the README says of Wireshark's RPC-over-RDMA heuristic: plain tshark
# calls every small SEND of a clean capture "Malformed Packet: RPCoRDMA", and
# --disable-heuristic rpcrdma_infiniband leaves none malformed, every packet
# decoded as InfiniBand. rnicsim lint finds nothing wrong with them.
# usage: rpcordma_heuristic.sh RNICSIM SCENARIO WORKDIR TSHARK
set -u
rnicsim=$1 scenario=$2 dir=$3 tshark=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$dir"; mkdir -p "$dir"
"$rnicsim" run "$scenario" --pcap "$dir/c.pcap" > "$dir/run.txt" || { cat "$dir/run.txt"; fail "run"; }
"$rnicsim" lint "$dir/c.pcap" | grep -q 'result: 0 errors, 0 warnings' || fail "lint"
sends=$("$tshark" -n -r "$dir/c.pcap" -Y 'infiniband.bth.opcode == 4' 2>/dev/null | wc -l)
false_alarms=$("$tshark" -n -r "$dir/c.pcap" -V -Y _ws.malformed 2>/dev/null | grep -c '^\[Malformed Packet: RPCoRDMA\]')
echo "$sends SENDs, $false_alarms 'Malformed Packet: RPCoRDMA' from plain tshark"
[ "$sends" -gt 0 ] && [ "$false_alarms" -eq "$sends" ] || fail "expected every SEND flagged by the heuristic"
set -- --disable-heuristic rpcrdma_infiniband
total=$("$tshark" -n "$@" -r "$dir/c.pcap" 2>/dev/null | wc -l)
ib=$("$tshark" -n "$@" -r "$dir/c.pcap" -Y infiniband 2>/dev/null | wc -l)
bad=$("$tshark" -n "$@" -r "$dir/c.pcap" -Y '_ws.malformed || _ws.expert.severity >= 8388608' 2>/dev/null | wc -l)
echo "with $*: $total packets, $ib InfiniBand, $bad malformed"
[ "$total" -gt 0 ] && [ "$ib" -eq "$total" ] && [ "$bad" -eq 0 ] || fail "the heuristic's name no longer turns it off"
echo PASS
