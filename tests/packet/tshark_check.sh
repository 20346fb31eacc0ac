#!/bin/sh
# Decode each pcap with tshark; fail on any malformed packet or expert error,
# on any packet tshark does not decode as InfiniBand/RoCE or as a PFC frame
# (MAC Control, opcode 0x0101, which tshark calls CBFC), or on an empty file.
#
# Wireshark's pcap reader does not map LINKTYPE_INFINIBAND (247), so native IB
# captures are checked from a copy whose link type is USER0 (147), decoded with
# the "infiniband" dissector through the user_dlts table: put --ib-user0 before
# such files.
#
# usage: tshark_check.sh TSHARK [--ib-user0] FILE... [--ethernet FILE...]
set -u
tshark="$1"
shift
status=0
opts=""
for f in "$@"; do
  case "$f" in
    --ib-user0) opts='uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'; continue ;;
    --ethernet) opts=""; continue ;;
  esac
  if [ -n "$opts" ]; then set -- -o "$opts"; else set --; fi
  total=$("$tshark" -n "$@" -r "$f" -T fields -e frame.number 2>/dev/null | wc -l)
  ib=$("$tshark" -n "$@" -r "$f" -Y infiniband -T fields -e frame.number 2>/dev/null | wc -l)
  pfc=$("$tshark" -n "$@" -r "$f" -Y 'macc.opcode == 0x0101' -T fields -e frame.number 2>/dev/null | wc -l)
  bad=$("$tshark" -n "$@" -r "$f" -Y '_ws.malformed || _ws.expert.severity >= 8388608' 2>/dev/null)
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
