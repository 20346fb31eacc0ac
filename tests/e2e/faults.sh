#!/bin/sh
# Deterministic faults from a scenario's `faults:`.
# usage: faults.sh RNICSIM SCENARIO_DIR WORKDIR TSHARK TSHARK_CHECK
set -eu
rnicsim=$1; scen=$2; dir=$3; tshark=$4; check=$5
rm -rf "$dir"; mkdir -p "$dir"
field() { sed -n "s/.*$1 \([0-9]*\).*/\1/p" "$2"; }

# One chosen packet dropped: one NAK, one go-back-N episode, data intact.
"$rnicsim" run "$scen/fault_one_drop.yaml" --pcap "$dir/one.pcap" > "$dir/one.txt"
grep -q 'result: completed' "$dir/one.txt" || { cat "$dir/one.txt"; echo "FAIL: one_drop did not complete"; exit 1; }
if grep -q ' BAD$' "$dir/one.txt"; then echo "FAIL: one_drop data mismatch"; exit 1; fi
[ "$(field drops "$dir/one.txt")" -eq 1 ] || { cat "$dir/one.txt"; echo "FAIL: expected exactly one drop"; exit 1; }
"$rnicsim" lint "$dir/one.pcap" > "$dir/one.lint" || { cat "$dir/one.lint"; echo "FAIL: lint errors"; exit 1; }
episodes=$(grep -c 'observation: retransmission: PSN back from 0x0000[0-9a-f][0-9a-f] to 0x000028' "$dir/one.lint" || true)
naks=$(grep -c 'observation: NAK (PSN sequence error), PSN 0x000028' "$dir/one.lint" || true)
all=$(grep -c 'observation: retransmission' "$dir/one.lint" || true)
[ "$episodes" -eq 1 ] && [ "$all" -eq 1 ] && [ "$naks" -eq 1 ] ||
  { cat "$dir/one.lint"; echo "FAIL: expected one NAK and one go-back-N episode from PSN 0x28"; exit 1; }
"$check" "$tshark" "$dir/one.pcap"

# A corrupted packet and a link outage: the receiver's ICRC check drops the one,
# the timeout recovers the other; every byte arrives.
"$rnicsim" run "$scen/fault_corrupt_flap.yaml" --pcap "$dir/cf.pcap" > "$dir/cf.txt"
grep -q 'result: completed' "$dir/cf.txt" || { cat "$dir/cf.txt"; echo "FAIL: corrupt/flap did not complete"; exit 1; }
if grep -q ' BAD$' "$dir/cf.txt"; then echo "FAIL: corrupt/flap data mismatch"; exit 1; fi
[ "$(field 'rx errors' "$dir/cf.txt")" -eq 1 ] || { cat "$dir/cf.txt"; echo "FAIL: expected one ICRC error"; exit 1; }
[ "$(field drops "$dir/cf.txt")" -gt 0 ] || { cat "$dir/cf.txt"; echo "FAIL: the outage dropped nothing"; exit 1; }
"$rnicsim" lint "$dir/cf.pcap" > "$dir/cf.lint" || { cat "$dir/cf.lint"; echo "FAIL: lint errors"; exit 1; }
"$check" "$tshark" "$dir/cf.pcap"
echo "one drop: 1 NAK, 1 go-back-N episode; corruption: 1 ICRC error; outage: $(field drops "$dir/cf.txt") drops; data verified"
