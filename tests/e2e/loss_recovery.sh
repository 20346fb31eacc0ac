#!/bin/sh
# usage: loss_recovery.sh RNICSIM SCENARIO WORKDIR TSHARK TSHARK_CHECK
set -eu
rnicsim=$1; scenario=$2; dir=$3; tshark=$4; check=$5
rm -rf "$dir"; mkdir -p "$dir"
"$rnicsim" run "$scenario" --pcap "$dir/l.pcap" | tee "$dir/run.txt"
grep -q 'result: completed' "$dir/run.txt" || { echo "FAIL: run did not complete"; exit 1; }
if grep -q ' BAD$' "$dir/run.txt"; then echo "FAIL: data mismatch"; exit 1; fi
retx=$(sed -n 's/.*retransmissions \([0-9]*\).*/\1/p' "$dir/run.txt")
drops=$(sed -n 's/.*drops \([0-9]*\).*/\1/p' "$dir/run.txt")
[ "$drops" -gt 0 ] || { echo "FAIL: the lossy link dropped nothing"; exit 1; }
[ "$retx" -gt 0 ] || { echo "FAIL: no retransmission after $drops drops"; exit 1; }
"$rnicsim" lint "$dir/l.pcap" > "$dir/lint.txt" || { cat "$dir/lint.txt"; echo "FAIL: lint found errors"; exit 1; }
grep -q 'observation: retransmission' "$dir/lint.txt" || { echo "FAIL: lint saw no retransmission"; exit 1; }
"$check" "$tshark" "$dir/l.pcap"
echo "drops $drops, retransmitted packets $retx, data verified, capture lints clean"
