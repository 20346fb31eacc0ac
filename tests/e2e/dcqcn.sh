#!/bin/sh
# DCQCN: the fairness scenario meets its expectations (each flow within 10% of
# its fair share, PFC hardly pausing); without congestion control the same
# traffic leans on PFC alone; the capture of the DCQCN run, with its CE marks and
# CNPs, lints clean and decodes in tshark.
# usage: dcqcn.sh RNICSIM SCENARIO WORKDIR TSHARK TSHARK_CHECK
set -u
rnicsim=$1; scenario=$2; dir=$3; tshark=$4; check=$5
rm -rf "$dir"; mkdir -p "$dir"
fail() { echo "FAIL: $*"; exit 1; }
"$rnicsim" run "$scenario" --pcap "$dir/dcqcn.pcap" > "$dir/dcqcn.txt" || { cat "$dir/dcqcn.txt"; fail "DCQCN run: exit $?"; }
grep -E '^expect|^ECN|^PFC' "$dir/dcqcn.txt"
"$rnicsim" run "$scenario" --set nic.congestion_control.algorithm=none \
  --set 'expect=[pfc_pauses > 1000, cnps == 0]' > "$dir/none.txt" || { cat "$dir/none.txt"; fail "PFC-only run"; }
grep -E '^expect' "$dir/none.txt"
"$rnicsim" lint "$dir/dcqcn.pcap" > "$dir/lint.txt" || { cat "$dir/lint.txt"; fail "lint errors"; }
grep -q 'CNPs \[CNP\]' "$dir/lint.txt" || fail "lint saw no CNPs in the capture"
"$check" "$tshark" "$dir/dcqcn.pcap" || fail "tshark"
cnps=$("$tshark" -r "$dir/dcqcn.pcap" -Y 'infiniband.bth.opcode == 0x81' 2>/dev/null | wc -l)
[ "$cnps" -gt 0 ] || fail "tshark decodes no CNP"
echo "DCQCN fair and pause-free, PFC alone pauses; $cnps CNPs in the capture decode in tshark"
