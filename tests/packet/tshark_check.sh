#!/bin/sh
# Decode each pcap with plain tshark (no option); fail on any malformed packet
# or expert error, on any packet tshark does not decode as InfiniBand/RoCE or as
# a PFC frame (MAC Control, opcode 0x0101, which tshark calls CBFC), or on an
# empty file. Native IB captures are ERF records of type InfiniBand, which
# tshark 4.0 decodes as they are.
#
# usage: tshark_check.sh TSHARK FILE...
set -u
tshark="$1"
shift
status=0
for f in "$@"; do
  total=$("$tshark" -n -r "$f" -T fields -e frame.number 2>/dev/null | wc -l)
  ib=$("$tshark" -n -r "$f" -Y infiniband -T fields -e frame.number 2>/dev/null | wc -l)
  pfc=$("$tshark" -n -r "$f" -Y 'macc.opcode == 0x0101' -T fields -e frame.number 2>/dev/null | wc -l)
  bad=$("$tshark" -n -r "$f" -Y '_ws.malformed || _ws.expert.severity >= 8388608' 2>/dev/null)
  echo "$f: $total packets, $ib decoded as InfiniBand, $pfc as PFC"
  if [ "$total" -eq 0 ] || [ $((ib + pfc)) -ne "$total" ]; then
    echo "  FAIL: not every packet decoded as InfiniBand or PFC"
    status=1
  fi
  if [ -n "$bad" ]; then
    echo "  FAIL: malformed or expert errors:"
    echo "$bad"
    status=1
  fi
done
exit $status
