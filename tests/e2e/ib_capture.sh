#!/bin/sh
# A native InfiniBand run and its capture: the run completes with verified data,
# the capture is LINKTYPE_INFINIBAND (247), rnicsim lint finds no error or
# warning, tshark decodes every packet as InfiniBand with no malformed packet or
# expert error (from a USER0 copy, as tshark 4.0 does not map 247), and every
# packet's LRH/GRH fields (LNH VL SL SLID DLID [SGID DGID]) are one of the
# scenario's "# expect-headers:" lines. With "lossy": the link dropped packets,
# go-back-N retransmitted, and lint lists the retransmissions as observations.
# usage: ib_capture.sh RNICSIM SCENARIO WORKDIR TSHARK TSHARK_CHECK [lossy]
set -eu
rnicsim=$1; scenario=$2; dir=$3; tshark=$4; check=$5; lossy=${6:-}
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$dir"; mkdir -p "$dir"
"$rnicsim" run "$scenario" --pcap "$dir/c.pcap" --out "$dir/out" > "$dir/run.txt"
cat "$dir/run.txt"
grep -q 'result: completed' "$dir/run.txt" || fail "run did not complete"
if grep -q ' BAD$' "$dir/run.txt"; then fail "data mismatch"; fi
if grep -q '"data_verified": false' "$dir/out/summary.json"; then fail "a workload's data was not verified"; fi

# pcap header: magic (nanosecond, written in host order), link type at byte 20.
[ "$(od -An -tu4 -N4 "$dir/c.pcap" | tr -d ' ')" = 2712812621 ] || fail "not a little-endian nanosecond pcap"
linktype=$(od -An -tu4 -j20 -N4 "$dir/c.pcap" | tr -d ' ')
[ "$linktype" = 247 ] || fail "link type $linktype, expected 247 (LINKTYPE_INFINIBAND)"

"$rnicsim" lint "$dir/c.pcap" > "$dir/lint.txt" || { cat "$dir/lint.txt"; fail "lint found errors"; }
grep -q 'result: 0 errors, 0 warnings' "$dir/lint.txt" || { cat "$dir/lint.txt"; fail "lint warnings"; }
if [ "$lossy" = lossy ]; then
  retx=$(sed -n 's/.*retransmissions \([0-9]*\).*/\1/p' "$dir/run.txt")
  drops=$(sed -n 's/.*drops \([0-9]*\).*/\1/p' "$dir/run.txt")
  [ "$drops" -gt 0 ] || fail "the lossy link dropped nothing"
  [ "$retx" -gt 0 ] || fail "no retransmission after $drops drops"
  grep -q 'observation: retransmission' "$dir/lint.txt" || fail "lint saw no retransmission"
fi

# The same capture as LINKTYPE_USER0 (147, octal 223) for tshark.
cp "$dir/c.pcap" "$dir/user0.pcap"
printf '\223\000\000\000' | dd of="$dir/user0.pcap" bs=1 seek=20 conv=notrunc 2>/dev/null
"$check" "$tshark" --ib-user0 "$dir/user0.pcap"

user0='uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'
"$tshark" -n -o "$user0" -r "$dir/user0.pcap" -T fields -e infiniband.lrh.lnh -e infiniband.lrh.vl \
    -e infiniband.lrh.sl -e infiniband.lrh.slid -e infiniband.lrh.dlid -e infiniband.grh.sgid \
    -e infiniband.grh.dgid 2>/dev/null | awk -F '\t' '
      function dec(h,  v, i) { if (h !~ /^0x/) return h; v = 0
        for (i = 3; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", tolower(substr(h, i, 1))) - 1
        return v }
      { line = dec($1) " " dec($2) " " dec($3) " " $4 " " $5; if ($6 != "") line = line " " $6 " " $7; print line }' |
    sort -u > "$dir/headers.txt"
sed -n 's/^# expect-headers: //p' "$scenario" | sort -u > "$dir/expected.txt"
[ -s "$dir/expected.txt" ] || fail "the scenario has no '# expect-headers:' lines"
diff "$dir/expected.txt" "$dir/headers.txt" || fail "LRH/GRH fields differ from the scenario's expect-headers lines"
echo "IB capture: $(wc -l < "$dir/headers.txt") header patterns as expected, lints clean, decodes in tshark"
