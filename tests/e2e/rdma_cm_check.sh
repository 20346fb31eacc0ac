#!/bin/sh
# A scenario whose workloads connect through the RDMA CM (connect: rdma_cm):
# it completes with every byte verified; its capture decodes in tshark with
# no malformed packet, holds the CM messages given (attribute IDs in order)
# and no data before the first REP (the RTU and the first data may pass each
# other, as on a real port); rnicsim lint is clean on it.
# (RoCEv2, or native IB in ERF records).
# usage: rdma_cm_check.sh RNICSIM TSHARK SCENARIO WORKDIR ATTRIBUTES...
set -u
rnicsim=$1 tshark=$2 scenario=$3 dir=$4
shift 4
want="$*"
rm -rf "$dir"; mkdir -p "$dir"
"$rnicsim" run "$scenario" --pcap "$dir/run.pcap" > "$dir/run.txt" 2>&1
cat "$dir/run.txt"
grep -q "result: completed" "$dir/run.txt" || { echo "FAIL: the run did not complete"; exit 1; }
if grep -q " BAD" "$dir/run.txt"; then echo "FAIL: data not verified"; exit 1; fi
pcap="$dir/run.pcap"
# Every frame decodes as InfiniBand, none malformed. RPC-over-RDMA's heuristic
# takes some of perftest's SENDs for RPC and calls them malformed: off.
set -- --disable-heuristic rpcrdma_infiniband
total=$("$tshark" -n "$@" -r "$pcap" -T fields -e frame.number 2>/dev/null | wc -l)
ib=$("$tshark" -n "$@" -r "$pcap" -Y infiniband -T fields -e frame.number 2>/dev/null | wc -l)
bad=$("$tshark" -n "$@" -r "$pcap" -Y '_ws.malformed || _ws.expert.severity >= 8388608' 2>/dev/null)
echo "$pcap: $total frames, $ib decoded as InfiniBand"
[ "$total" -gt 0 ] && [ "$ib" -eq "$total" ] || { echo "FAIL: not every frame decoded as InfiniBand"; exit 1; }
[ -z "$bad" ] || { echo "FAIL: malformed or expert errors:"; echo "$bad"; exit 1; }
got=$("$tshark" -n "$@" -r "$pcap" -Y 'infiniband.mad.mgmtclass == 0x07' -T fields -e infiniband.mad.attributeid 2>/dev/null | tr '\n' ' ')
[ "$got" = "$want " ] || { echo "FAIL: CM messages '$got', want '$want '"; exit 1; }
first_data=$("$tshark" -n "$@" -r "$pcap" -Y 'infiniband.bth.opcode < 64' -T fields -e frame.number 2>/dev/null | head -1)
first_rep=$("$tshark" -n "$@" -r "$pcap" -Y 'infiniband.mad.attributeid == 0x0013' -T fields -e frame.number 2>/dev/null | head -1)
[ -n "$first_data" ] && [ -n "$first_rep" ] && [ "$first_data" -gt "$first_rep" ] ||
  { echo "FAIL: RC traffic (frame $first_data) before the first REP (frame $first_rep)"; exit 1; }
"$rnicsim" lint "$dir/run.pcap" | tail -1
echo "PASS"
