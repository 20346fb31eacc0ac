#!/bin/sh
# expect:, --set and sweep: from the command line.
# usage: scenario_language.sh RNICSIM SCENARIO_DIR WORKDIR
set -u
rnicsim=$1; scen=$2; dir=$3
rm -rf "$dir"; mkdir -p "$dir"
fail() { echo "FAIL: $*"; exit 1; }

# A sweep over three values prints one table with a row per value, and sweep.csv.
"$rnicsim" run "$scen/sweep_expect.yaml" --out "$dir/sweep" > "$dir/sweep.txt" 2> "$dir/sweep.err" || fail "sweep exit $?"
cat "$dir/sweep.txt"
head -1 "$dir/sweep.txt" | grep -q '^links.0.loss  *w Gb/s' || fail "no table header"
[ "$(grep -c '^0\.0' "$dir/sweep.txt")" -eq 3 ] || fail "expected 3 rows"
for v in 0.00001 0.001 0.01; do grep -q "^$v .* ok$" "$dir/sweep.txt" || fail "no ok row for $v"; done
[ "$(wc -l < "$dir/sweep/sweep.csv")" -eq 4 ] || fail "sweep.csv should have a header and 3 rows"
# Goodput falls as loss rises (column 2).
awk 'NR > 2 { if (NR > 3 && $2 > prev) bad = 1; prev = $2 } END { exit bad }' "$dir/sweep.txt" || fail "goodput rose with loss"

# --set replaces a value (here the sweep itself, by one value) and an expectation
# that does not hold fails the run with exit 1, naming the measured value.
"$rnicsim" run "$scen/sweep_expect.yaml" --set 'sweep={links.0.loss: [0.01]}' --set 'expect=[w.throughput > 90Gbps]' \
  > "$dir/fail.txt" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "a failed expectation should exit 1, got $rc"
grep -q 'EXPECT FAILED' "$dir/fail.txt" || fail "the table should say EXPECT FAILED"
"$rnicsim" run "$scen/lossy.yaml" --set 'expect=[writes.throughput > 500Gbps, drops >= 1]' > "$dir/one.txt"; rc=$?
[ $rc -eq 1 ] || fail "expected exit 1, got $rc"
grep -q 'expect FAILED  writes.throughput > 500Gbps  (measured [0-9.]* Gb/s)' "$dir/one.txt" || fail "no FAILED line with the measured value"
grep -q 'expect ok      drops >= 1' "$dir/one.txt" || fail "no ok line"
"$rnicsim" run "$scen/lossy.yaml" --set links.0.loss=0 --set 'expect=[drops == 0, retransmissions == 0]' > "$dir/set.txt" ||
  fail "--set links.0.loss=0 should give a clean run"

# Bad overrides: exit 2 with a message.
"$rnicsim" run "$scen/lossy.yaml" --set workloads.nosuch.size=1 2> "$dir/bad.err"; rc=$?
[ $rc -eq 2 ] && grep -q "no 'nosuch' in the list" "$dir/bad.err" || fail "bad --set path: exit $rc"
"$rnicsim" validate "$scen/lossy.yaml" --set nic.mtu=1000 2> "$dir/bad2.err"; rc=$?
[ $rc -eq 2 ] && grep -q "must be an IB MTU" "$dir/bad2.err" || fail "bad --set value: exit $rc"
echo "sweep table, expect ok/FAILED with measured values, --set: all as expected"
