#!/bin/sh
# --out writes time series and per-QP CSV; rnicsim plot renders them as PNG.
# usage: plot.sh RNICSIM SCENARIO WORKDIR
set -u
rnicsim=$1; scenario=$2; dir=$3
rm -rf "$dir"; mkdir -p "$dir"
fail() { echo "FAIL: $*"; exit 1; }
"$rnicsim" run "$scenario" --out "$dir/out" --sample 20us > "$dir/run.txt" || fail "run: exit $?"
for f in throughput.csv queues.csv pauses.csv qps.csv summary.json stats.json; do
  [ -s "$dir/out/$f" ] || fail "no $f"
done
[ "$(wc -l < "$dir/out/throughput.csv")" -gt 20 ] || fail "throughput.csv has too few samples"
awk -F, 'NR > 1 && $2 > 50 { seen = 1 } END { exit !seen }' "$dir/out/throughput.csv" || fail "no sample above 50 Gb/s"
"$rnicsim" plot "$dir/out" > "$dir/plot.txt" || { cat "$dir/plot.txt"; fail "plot: exit $?"; }
for p in throughput queues pauses; do
  f="$dir/out/$p.png"
  [ -f "$f" ] || fail "no $p.png"
  [ "$(wc -c < "$f")" -gt 10000 ] || fail "$p.png is too small to hold a plot"
  [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "$p.png is not a PNG"
done
"$rnicsim" plot "$dir/nothing" 2> "$dir/err.txt"; rc=$?
[ $rc -ne 0 ] || fail "plot of a missing directory should fail"
echo "time series, per-QP CSV and three PNG plots written"
