#!/bin/sh
# usage: determinism.sh RNICSIM SCENARIO WORKDIR
set -eu
rnicsim=$1; scenario=$2; dir=$3
rm -rf "$dir"; mkdir -p "$dir"
"$rnicsim" run "$scenario" --seed 7 --pcap "$dir/a.pcap" > "$dir/a.txt"
"$rnicsim" run "$scenario" --seed 7 --pcap "$dir/b.pcap" > "$dir/b.txt"
"$rnicsim" run "$scenario" --seed 8 --pcap "$dir/c.pcap" > "$dir/c.txt"
cmp "$dir/a.pcap" "$dir/b.pcap" || { echo "FAIL: same seed, different captures"; exit 1; }
# Everything but the wall-clock line must match.
grep -v '^simulated' "$dir/a.txt" > "$dir/a.sum"
grep -v '^simulated' "$dir/b.txt" > "$dir/b.sum"
diff "$dir/a.sum" "$dir/b.sum" || { echo "FAIL: same seed, different summaries"; exit 1; }
grep '^simulated' "$dir/a.txt" | cut -d' ' -f1-3 > "$dir/a.sim"
grep '^simulated' "$dir/b.txt" | cut -d' ' -f1-3 > "$dir/b.sim"
diff "$dir/a.sim" "$dir/b.sim" || { echo "FAIL: same seed, different simulated time"; exit 1; }
if cmp -s "$dir/a.pcap" "$dir/c.pcap"; then echo "FAIL: another seed gave the same capture"; exit 1; fi
echo "same seed: identical captures ($(wc -c < "$dir/a.pcap") bytes) and summaries; another seed differs"
