#!/bin/sh
# rping twice on the virtual clock with the same seed: the two captures are
# byte-identical (CM MADs, RC traffic, timestamps), and the first passes the
# checks of rping_capture_check.sh (RoCEv2, or native IB in ERF records).
# A sixth argument, `namespaces`, runs the daemon with --network namespaces
# (each rping on its host's own network).
# usage: rping_repeat.sh TSHARK RNICSIM OUTDIR SCENARIO|- PORT [namespaces]
set -u
tshark=$1 rnicsim=$2 out=$3 scenario=$4 port=$5 network=${6:-shared}
here=$(dirname "$0")
mkdir -p "$out"
for run in 1 2; do
  "$here/cm_pair.sh" "$rnicsim" "$out/run$run" "$scenario" "$port" --pcap --clock virtual --network "$network" --rping \
    -- rping -s -a 10.0.0.1 -p "$port" -C 10 -v -- rping -c -a 10.0.0.1 -p "$port" -C 10 -v > "$out/run$run.log" 2>&1 ||
    { cat "$out/run$run.log"; echo "FAIL: run $run"; exit 1; }
done
"$here/rping_capture_check.sh" "$tshark" "$rnicsim" "$out/run1/capture.pcap" || exit 1
[ -s "$out/run1/capture.pcap" ] || { echo "FAIL: an empty capture"; exit 1; }
if ! cmp "$out/run1/capture.pcap" "$out/run2/capture.pcap"; then
  for run in 1 2; do
    "$tshark" -n -r "$out/run$run/capture.pcap" -T fields -e frame.time_relative -e frame.len -e infiniband.bth.opcode \
      -e infiniband.bth.psn > "$out/run$run.txt" 2>/dev/null
  done
  diff "$out/run1.txt" "$out/run2.txt" | head -20
  echo "FAIL: the two captures differ"
  exit 1
fi
echo "PASS: two runs, byte-identical captures ($(wc -c < "$out/run1/capture.pcap") bytes)"
