#!/bin/sh
# Go-back-N goodput against random loss: near line rate at 1e-5, collapsing at a
# few percent with the default local ACK timeout.
# usage: gbn_goodput.sh RNICSIM SCENARIO WORKDIR
set -eu
rnicsim=$1; scenario=$2; dir=$3
rm -rf "$dir"; mkdir -p "$dir"
printf 'loss      Gb/s     retransmitted\n'
for loss in 0.00001 0.001 0.01 0.03; do
  sed "s/LOSS/$loss/" "$scenario" > "$dir/l$loss.yaml"
  "$rnicsim" run "$dir/l$loss.yaml" > "$dir/l$loss.txt" || true
  gbps=$(awk '$1 == "w" { print $6 }' "$dir/l$loss.txt")
  retx=$(sed -n 's/.*retransmissions \([0-9]*\).*/\1/p' "$dir/l$loss.txt")
  printf '%-9s %-8s %s\n' "$loss" "$gbps" "$retx"
  echo "$loss $gbps" >> "$dir/table"
done
awk '
  $1 == "0.00001" && $2 < 90 { print "FAIL: " $2 " Gb/s at 1e-5 loss, expected near line rate"; bad = 1 }
  $1 == "0.03" && $2 > 1 { print "FAIL: " $2 " Gb/s at 3% loss, expected a collapse"; bad = 1 }
  { if (NR > 1 && $2 > prev + 0.01) { print "FAIL: goodput rose with more loss"; bad = 1 } prev = $2 }
  END { exit bad }' "$dir/table"
