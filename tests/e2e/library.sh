#!/bin/sh
# One scenario of the library: it runs to completion with all its expectations
# met (exit 0). A scenario with a sweep prints one table with a row per swept
# value. Any other is run with a capture (--pcap, and the captures the scenario
# lists), which lints clean and decodes in plain tshark, and with --out, from which rnicsim plot renders PNG figures of
# more than 10 KB. With "nopcap" the run has no --pcap (for a scenario whose
# capture another test checks).
# usage: library.sh RNICSIM SCENARIO WORKDIR TSHARK TSHARK_CHECK [nopcap]
set -u
rnicsim=$1; scenario=$2; dir=$3; tshark=$4; check=$5; mode=${6:-}
rm -rf "$dir"; mkdir -p "$dir"
status=0
fail() { echo "FAIL: $*"; status=1; }
for f in "$scenario"; do
  name=$(basename "$f" .yaml); d="$dir"
  grep -q '^expect:' "$f" || fail "$name has no expect: block"
  if grep -q '^sweep:' "$f"; then
    "$rnicsim" run "$f" > "$d/run.txt" 2> "$d/run.err"; rc=$?
    [ $rc -eq 0 ] || { cat "$d/run.txt" "$d/run.err"; fail "$name: exit $rc"; continue; }
    cat "$d/run.txt"
    # One axis: the values listed under sweep:, each a row of the table, each ok.
    values=$(sed -n '/^sweep:/,/^[^ ]/s/^  [^:]*: *\[\(.*\)\].*/\1/p' "$f" | tr -d ' ' | tr ',' ' ')
    n=0
    for v in $values; do
      n=$((n + 1))
      grep -q "^$v .* ok\$" "$d/run.txt" || fail "$name: no ok row for $v"
    done
    [ $n -ge 3 ] || fail "$name: sweeps fewer than 3 values"
    [ "$(grep -c ' ok$' "$d/run.txt")" -eq $n ] || fail "$name: expected $n rows"
    [ "$(grep -c -- '^-----' "$d/run.txt")" -eq 1 ] || fail "$name: expected one table"
    [ $status -eq 0 ] && echo "$name: one table, an ok row per value ($n)"
    exit $status
  fi
  pcap="--pcap $d/c.pcap"; [ "$mode" = nopcap ] && pcap=""
  "$rnicsim" run "$f" $pcap --out "$d/out" --sample 10us > "$d/run.txt" 2> "$d/run.err"; rc=$?
  grep -E '^expect|^result' "$d/run.txt"
  [ $rc -eq 0 ] || { cat "$d/run.txt" "$d/run.err"; fail "$name: exit $rc"; continue; }
  grep -q 'result: completed' "$d/run.txt" || fail "$name: did not complete"
  grep -q 'expectations: [0-9]* ok, 0 failed' "$d/run.txt" || fail "$name: expectations not all met"
  if grep -q ' BAD$' "$d/run.txt"; then fail "$name: data mismatch"; fi
  # Captures: the --pcap file and any the scenario lists (written beside it or in --out).
  [ "$mode" = nopcap ] || [ -s "$d/c.pcap" ] || fail "$name: no capture"
  for p in $(find "$d" -name c.pcap) $(find "$d" -name '*.pcap' ! -name c.pcap); do
    "$rnicsim" lint "$p" > "$p.lint" || { cat "$p.lint"; fail "$name: lint errors in $(basename "$p")"; }
    grep -q 'result: 0 errors, 0 warnings' "$p.lint" || { cat "$p.lint"; fail "$name: lint warnings in $(basename "$p")"; }
    "$check" "$tshark" "$p" || fail "$name: tshark on $(basename "$p")"
  done
  "$rnicsim" plot "$d/out" > "$d/plot.txt" 2>&1 || { cat "$d/plot.txt"; fail "$name: plot exit $?"; continue; }
  pngs=0
  for png in "$d"/out/*.png; do
    [ -f "$png" ] || continue
    pngs=$((pngs + 1))
    [ "$(wc -c < "$png")" -gt 10000 ] || fail "$name: $(basename "$png") is too small to hold a plot"
    [ "$(head -c 4 "$png" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "$name: $(basename "$png") is not a PNG"
  done
  [ -f "$d/out/throughput.png" ] || fail "$name: no throughput.png"
  echo "$name: $pngs PNG figures"
done
[ $status -eq 0 ] && echo "$name: runs, meets its expectations; captures lint clean and decode; figures render"
exit $status
