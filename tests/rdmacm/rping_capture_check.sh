#!/bin/sh
# rping's capture: every frame decodes in tshark with no malformed packet or
# expert error; the first three are the CM's REQ, REP and RTU on QP1, then RC
# traffic between the connected QPs, and the connection ends with DREQ and
# DREP; rnicsim lint is clean on it.
# usage: rping_capture_check.sh TSHARK RNICSIM FILE
set -u
tshark=$1 rnicsim=$2 f=$3
"$(dirname "$0")/../packet/tshark_check.sh" "$tshark" "$f" || exit 1
cm=$("$tshark" -n -r "$f" -Y 'infiniband.mad.mgmtclass == 0x07' -T fields -e infiniband.mad.attributeid 2>/dev/null | tr '\n' ' ')
[ "$cm" = "0x0010 0x0013 0x0014 0x0015 0x0016 " ] || { echo "FAIL: CM messages $cm (want REQ REP RTU DREQ DREP)"; exit 1; }
first=$("$tshark" -n -r "$f" -c 4 -T fields -e infiniband.bth.opcode 2>/dev/null | tr '\n' ' ')
case "$first" in
  "100 100 100 "*) ;;
  *) echo "FAIL: the capture does not start with three UD SENDs (CM MADs): $first"; exit 1 ;;
esac
rc=$("$tshark" -n -r "$f" -Y 'infiniband.bth.opcode < 32' -T fields -e frame.number 2>/dev/null | wc -l)
[ "$rc" -gt 20 ] || { echo "FAIL: only $rc RC packets"; exit 1; }
"$rnicsim" lint "$f" || { echo "FAIL: rnicsim lint"; exit 1; }
echo "PASS: CM REQ/REP/RTU, $rc RC packets, DREQ/DREP"
