#!/bin/sh
# Writes a capture of every CM MAD (cm_pcap) and checks it:
# - tshark decodes every frame as a CM MAD in a RoCEv2 UD SEND-only to QP1
#   (P_Key 0xFFFF, Q_Key 0x80010000, source QP 1), in cm_pcap's order, with
#   no malformed frame and no expert info at all;
# - the fields tshark 4.0 decodes (REQ, REP, REJ, DREQ) hold what cm_pcap put
#   there, the REQ's IP CM private-data header included;
# - MRA and SIDR, which tshark 4.0 names but does not decode, hold their
#   values at the spec's offsets (MAD data = the MAD from byte 24);
# - rnicsim lint accepts the capture.
# Wireshark 4.0 reads a REQ's primary flow label, packet rate and the reserved
# bits between them from the wrong bytes (flow label from three bytes, rate from
# the first byte of the word), so those fields are not checked here; the unit
# test checks their bytes.
#
# usage: cm_tshark_check.sh CM_PCAP TSHARK RNICSIM OUT.pcap
set -u
cm_pcap="$1" tshark="$2" rnicsim="$3" pcap="$4"
status=0
fail() { echo "FAIL: $*"; status=1; }

"$cm_pcap" "$pcap" || { echo "FAIL: cm_pcap"; exit 1; }

# Frames matching a display filter; -1 (which no check expects) if tshark refuses it.
count() {
  out=$("$tshark" -n -r "$pcap" -Y "$1" -T fields -e frame.number 2>&1) || { echo "tshark: $out" >&2; echo -1; return; }
  printf '%s\n' "$out" | grep -c '^[0-9]'
}
expect() {  # FILTER N WHAT
  n=$(count "$1")
  if [ "$n" -ne "$2" ]; then fail "$3: $n frames match '$1', expected $2"; else echo "ok: $3"; fi
}

total=$(count frame)
[ "$total" -eq 9 ] || fail "$total frames, expected 9"

expect 'udp.dstport == 4791 && infiniband.bth.opcode == 100 && infiniband.bth.destqp == 1 && infiniband.bth.p_key == 0xffff
        && infiniband.deth.q_key == 0x80010000 && infiniband.deth.srcqp == 1' 9 "UD SEND-only to QP1 on RoCEv2"
expect 'infiniband.mad.baseversion == 1 && infiniband.mad.mgmtclass == 0x07 && infiniband.mad.classversion == 2
        && infiniband.mad.method == 0x03 && infiniband.mad.classspecific == 0 && infiniband.mad.attributemodifier == 0' 9 \
       "CM MAD header"
expect '_ws.malformed || _ws.expert' 0 "no malformed frame, no expert info"

names=$("$tshark" -n -r "$pcap" -T fields -e _ws.col.Info 2>/dev/null | tr '\n' ',')
want='CM: ConnectRequest,CM: MsgRcptAck,CM: ConnectReply,CM: ReadyToUse,CM: DisconnectRequest,CM: DisconnectReply,CM: ConnectReject,CM: ServiceIDResReq,CM: ServiceIDResReqResp,'
if [ "$names" = "$want" ]; then echo "ok: message names"; else fail "message names: $names"; fi

# REQ: service ID (RDMA_PS_TCP, port 7174) and local QPN as encoded, path, IP CM header.
expect 'infiniband.cm.req.serviceid == 0x0000000001061c06 && infiniband.cm.req.serviceid.protocol == 0x06
        && infiniband.cm.req.serviceid.dport == 7174 && infiniband.cm.req.localqpn == 0x3f2a1b' 1 "REQ service ID, local QPN"
expect 'infiniband.cm.req == 0x1000a001 && infiniband.cm.req.responderres == 16 && infiniband.cm.req.initdepth == 16
        && infiniband.cm.req.startpsn == 0x5a5a5a && infiniband.cm.req.remoteresptout == 20 && infiniband.cm.req.localresptout == 20
        && infiniband.cm.req.retrcount == 7 && infiniband.cm.req.transpsvctype == 0 && infiniband.cm.req.pkey == 0xffff
        && infiniband.cm.req.pppmtu == 5 && infiniband.cm.req.rnrretrcount == 7 && infiniband.cm.req.maxcmretr == 15
        && infiniband.cm.req.prim_locallid == 0xffff && infiniband.cm.req.prim_remotelid == 0xffff
        && infiniband.cm.req.prim_localgid_ipv4 == 10.0.0.1 && infiniband.cm.req.prim_remotegid_ipv4 == 10.0.0.2
        && infiniband.cm.req.prim_hoplim == 64 && infiniband.cm.req.prim_localacktout == 18' 1 "REQ connection and path fields"
expect 'infiniband.cm.req.ip_cm.ipv == 4 && infiniband.cm.req.ip_cm.sport == 0xc123
        && infiniband.cm.req.ip_cm.sip4 == 10.0.0.1 && infiniband.cm.req.ip_cm.dip4 == 10.0.0.2
        && infiniband.cm.req.ip_cm.private[0] == 0x42' 1 "REQ IP CM private-data header"

expect 'infiniband.cm.rep == 0x2000b002 && infiniband.cm.rep.remotecommid == 0x1000a001 && infiniband.cm.rep.localqpn == 0x000777
        && infiniband.cm.rep.startpsn == 0x123456 && infiniband.cm.rep.respres == 16 && infiniband.cm.rep.initdepth == 16
        && infiniband.cm.rep.tgtackdelay == 15 && infiniband.cm.rep.rnrretrcount == 7
        && infiniband.cm.rep.localcaguid == 0x0200000000000002' 1 "REP fields"
expect 'infiniband.cm.rtu.localcommid == 0x1000a001 && infiniband.cm.rtu.remotecommid == 0x2000b002' 1 "RTU comm IDs"
expect 'infiniband.cm.dreq.localcommid == 0x1000a001 && infiniband.cm.req.remoteqpneecn == 0x000777' 1 "DREQ remote QPN"
expect 'infiniband.cm.drsp.localcommid == 0x2000b002 && infiniband.cm.drsp.remotecommid == 0x1000a001' 1 "DREP comm IDs"
expect 'infiniband.cm.rej.localcommid == 0x2000b002 && infiniband.cm.rej.reason == 28 && infiniband.cm.rej.msgrej == 0' 1 \
       "REJ reason 28 (consumer defined)"

# Not decoded by tshark 4.0: bytes at MAD offsets (data offset = MAD offset - 24).
expect 'infiniband.mad.attributeid == 0x11 && infiniband.mad.data[0:4] == 20:00:b0:02 && infiniband.mad.data[4:4] == 10:00:a0:01
        && infiniband.mad.data[8:2] == 00:90' 1 "MRA comm IDs, REQ MRAed, service timeout 18"
expect 'infiniband.mad.attributeid == 0x17 && infiniband.mad.data[0:4] == 00:00:c0:de && infiniband.mad.data[4:2] == ff:ff
        && infiniband.mad.data[8:8] == 00:00:00:00:01:11:1c:06' 1 "SIDR_REQ request ID, P_Key, service ID"
expect 'infiniband.mad.attributeid == 0x18 && infiniband.mad.data[0:4] == 00:00:c0:de && infiniband.mad.data[4:1] == 00
        && infiniband.mad.data[8:4] == 00:08:88:00 && infiniband.mad.data[12:8] == 00:00:00:00:01:11:1c:06
        && infiniband.mad.data[20:4] == 01:23:45:67' 1 "SIDR_REP QPN, service ID, Q_Key at 44"

if "$rnicsim" lint "$pcap" >"$pcap.lint" 2>&1; then echo "ok: rnicsim lint"; else cat "$pcap.lint"; fail "rnicsim lint"; fi
exit $status
