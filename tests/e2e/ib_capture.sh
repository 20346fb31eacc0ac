#!/bin/sh
# A native InfiniBand run and its capture: the run completes with verified data,
# the capture is ERF (LINKTYPE_ERF, 197), rnicsim lint finds no error or
# warning, plain tshark decodes every packet as InfiniBand with no malformed
# packet or expert error, and every packet's LRH/GRH fields (LNH VL SL SLID DLID
# [SGID DGID]) are one of the scenario's "# expect-headers:" lines. The same run
# with --ib-capture infiniband writes LINKTYPE_INFINIBAND (247): the same
# packets, which lint reads too. With "lossy": the link dropped packets,
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
linktype() { od -An -tu4 -j20 -N4 "$1" | tr -d ' '; }
[ "$(od -An -tu4 -N4 "$dir/c.pcap" | tr -d ' ')" = 2712812621 ] || fail "not a little-endian nanosecond pcap"
[ "$(linktype "$dir/c.pcap")" = 197 ] || fail "link type $(linktype "$dir/c.pcap"), expected 197 (LINKTYPE_ERF)"
"$rnicsim" run "$scenario" --ib-capture infiniband --pcap "$dir/native.pcap" > "$dir/native.txt"
[ "$(linktype "$dir/native.pcap")" = 247 ] || fail "--ib-capture infiniband: link type $(linktype "$dir/native.pcap")"
"$rnicsim" lint "$dir/native.pcap" > "$dir/native_lint.txt" || { cat "$dir/native_lint.txt"; fail "lint of 247"; }
# Every stream, count and finding alike (the first line names the file).
[ "$(tail -n +2 "$dir/native_lint.txt")" = "$("$rnicsim" lint "$dir/c.pcap" | tail -n +2)" ] ||
  fail "lint reads the 247 capture otherwise than the ERF one"

"$rnicsim" lint "$dir/c.pcap" > "$dir/lint.txt" || { cat "$dir/lint.txt"; fail "lint found errors"; }
grep -q 'result: 0 errors, 0 warnings' "$dir/lint.txt" || { cat "$dir/lint.txt"; fail "lint warnings"; }
if [ "$lossy" = lossy ]; then
  retx=$(sed -n 's/.*retransmissions \([0-9]*\).*/\1/p' "$dir/run.txt")
  drops=$(sed -n 's/.*drops \([0-9]*\).*/\1/p' "$dir/run.txt")
  [ "$drops" -gt 0 ] || fail "the lossy link dropped nothing"
  [ "$retx" -gt 0 ] || fail "no retransmission after $drops drops"
  grep -q 'observation: retransmission' "$dir/lint.txt" || fail "lint saw no retransmission"
fi

"$check" "$tshark" "$dir/c.pcap"

"$tshark" -n -r "$dir/c.pcap" -T fields -e infiniband.lrh.lnh -e infiniband.lrh.vl \
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
