#!/bin/sh
# The CM capture decodes in tshark as the seven CM messages in order, with the
# REQ's service ID and QPN as sent, on QP1 with the GSI Q_Key.
# usage: capture_cm_check.sh TSHARK FILE
set -u
tshark=$1 f=$2
got=$("$tshark" -n -r "$f" -T fields -e infiniband.bth.destqp -e infiniband.deth.q_key -e infiniband.mad.mgmtclass \
      -e infiniband.mad.attributeid 2>/dev/null | tr '\t' ' ')
want="0x000001 0x0000000080010000 0x07 0x0010
0x000001 0x0000000080010000 0x07 0x0013
0x000001 0x0000000080010000 0x07 0x0014
0x000001 0x0000000080010000 0x07 0x0015
0x000001 0x0000000080010000 0x07 0x0016
0x000001 0x0000000080010000 0x07 0x0010
0x000001 0x0000000080010000 0x07 0x0012"
if [ "$got" != "$want" ]; then
  echo "FAIL: CM messages"; echo "got:"; echo "$got"; echo "want:"; echo "$want"; exit 1
fi
sid=$("$tshark" -n -r "$f" -Y 'infiniband.mad.attributeid == 0x0010' -T fields -e infiniband.cm.req.serviceid 2>/dev/null | head -1)
case "$sid" in
  *1061c06*|*1061C06*) ;;
  *) echo "FAIL: REQ service ID $sid"; exit 1 ;;
esac
echo PASS
