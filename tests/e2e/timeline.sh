#!/bin/bash
# The WQE timeline of a lossy quickstart run: valid trace-event JSON with the
# retransmission on the sending QP's track; a capture byte-identical to that of
# the same run without a timeline; a QP filter and a window that bound it; PFC
# frames on the port tracks; bad filter values refused (exit 2, the option named).
# usage: timeline.sh RNICSIM QUICKSTART.yaml OUTDIR PYTHON3 CHECKER
set -u
rnicsim=$1 scenario=$2 out=$3 python=$4 check=$5
mkdir -p "$out"
lossy=(--set links.0.loss=0.002 --set workloads.write_stream.count=100 --set workloads.pingpong.count=100)
fail() { echo "FAIL: $*"; exit 1; }
# Loss breaks the quickstart's own expectations (no retransmission): exit 1 is
# a finished run too.
run() { "$rnicsim" run "$scenario" "${lossy[@]}" "$@"; [ $? -le 1 ]; }

run --pcap "$out/plain.pcap" > "$out/plain.txt" || fail "the run without a timeline"
run --pcap "$out/traced.pcap" --timeline "$out/all.json" > "$out/traced.txt" ||
  fail "the run with a timeline"
cmp "$out/plain.pcap" "$out/traced.pcap" || fail "the timeline changed the capture"
grep -E '^retransmissions' "$out/traced.txt"
diff <(grep -v -E 'wall|events/s' "$out/plain.txt") <(grep -v -E 'wall|events/s' "$out/traced.txt") ||
  fail "the timeline changed the run's results"
"$python" "$check" "$out/all.json" --retransmission --wrs --min-events 1000 || fail "the whole timeline"

run --timeline "$out/qp.json" --timeline-qps alice:0x11 > /dev/null ||
  fail "the run with a QP filter"
"$python" "$check" "$out/qp.json" --only-qp 0x11 --wrs || fail "the QP filter"
run --timeline "$out/window.json" --timeline-window 20us:40us > /dev/null ||
  fail "the run with a window"
"$python" "$check" "$out/window.json" --window 20:40 --min-events 10 || fail "the window"
[ "$(stat -c %s "$out/window.json")" -lt "$(stat -c %s "$out/all.json")" ] || fail "the window did not shrink the file"

# PFC: the NICs' pause frames, sent and received, on their port tracks.
"$rnicsim" run "$(dirname "$0")/scenarios/nic_pfc.yaml" --timeline "$out/pfc.json" > /dev/null || fail "the PFC run"
"$python" "$check" "$out/pfc.json" --expect "PFC pause sent@port (PFC)" --expect "PFC pause received@port (PFC)" \
  --expect "PFC XON sent@port (PFC)" || fail "the PFC timeline"

for bad in "--timeline-qps x" "--timeline-qps 0x11," "--timeline-qps :17" "--timeline-window 5us:1us" \
           "--timeline-window 10" "--timeline-window abc:1us"; do
  # shellcheck disable=SC2086
  "$rnicsim" run "$scenario" --timeline "$out/bad.json" $bad > "$out/bad.txt" 2>&1
  rc=$?
  [ $rc -eq 2 ] || fail "'$bad' exited $rc, not 2"
  grep -q -- "${bad%% *}" "$out/bad.txt" || fail "'$bad': the message does not name the option: $(cat "$out/bad.txt")"
done
echo PASS
