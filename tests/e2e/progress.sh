#!/bin/sh
# rnicsim run's progress when stderr is not a terminal: plain lines, one every
# --progress-interval, each with the simulated time against the scenario's end
# (its duration, or "~" an estimate from the bytes delivered), events/s and the
# time left, the simulated time growing; none with --progress never nor, by
# default, for a run shorter than a second. On a terminal (through script(1),
# when installed) one line rewritten in place and cleared at the end.
# usage: progress.sh RNICSIM SCENARIO WORKDIR
set -u
rnicsim=$1 scenario=$2 dir=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$dir"; mkdir -p "$dir"
left='[0-9.]+ s|[0-9]+ s|[0-9]+ min [0-9]{2} s|[0-9]+ h [0-9]{2} min'

# check FILE END: every line a progress line of that end, simulated time growing.
check() {
  n=$(wc -l < "$1")
  [ "$n" -ge 3 ] || fail "$n progress lines in $1: $(cat "$1")"
  bad=$(grep -Ev "^simulated [0-9]+\.[0-9]{3} of $2 ms \([0-9]+%\), [0-9.]+ M events/s, ($left) left\$" "$1")
  [ -z "$bad" ] || fail "not a progress line: $bad"
  if tr -d '\n' < "$1" | grep -q "$(printf '[\r\033]')"; then fail "terminal control characters in $1"; fi
  sed 's/^simulated \([0-9.]*\) .*/\1/' "$1" | sort -c -n || fail "simulated time goes back in $1"
}

"$rnicsim" run "$scenario" --progress always --progress-interval 0.02 > "$dir/run.txt" 2> "$dir/estimated.err" ||
  fail "run exits $?"
check "$dir/estimated.err" '~[0-9]+\.[0-9]{3}'
# The run's own end, 67.108 ms, estimated to within 1% by the last line.
last=$(tail -1 "$dir/estimated.err" | sed 's/.* of ~\([0-9.]*\) ms.*/\1/')
end=$(sed -n 's/^simulated \([0-9.]*\) ms .*/\1/p' "$dir/run.txt")
awk -v a="$last" -v b="$end" 'BEGIN { exit !(a > 0.99 * b && a < 1.01 * b) }' || fail "estimated end $last ms, ran to $end"

"$rnicsim" run "$scenario" --set duration=50ms --progress always --progress-interval 0.02 > /dev/null 2> "$dir/duration.err"
check "$dir/duration.err" '50\.000'

"$rnicsim" run "$scenario" --progress never > /dev/null 2> "$dir/never.err"
[ ! -s "$dir/never.err" ] || fail "--progress never: $(cat "$dir/never.err")"
"$rnicsim" run "$scenario" --set workloads.stream.iterations=1000 > /dev/null 2> "$dir/short.err"
[ ! -s "$dir/short.err" ] || fail "a short run shows progress by default: $(cat "$dir/short.err")"

if command -v script > /dev/null; then
  script -qec "$rnicsim run $scenario --progress always" /dev/null > "$dir/tty.txt" < /dev/null
  grep -q "$(printf '\r')simulated .* left$(printf '\033')\[K" "$dir/tty.txt" || fail "no line rewritten in place on a terminal"
  grep -q "^simulated .* left" "$dir/tty.txt" && fail "a progress line of its own on a terminal"
fi
echo "PASS: $(wc -l < "$dir/estimated.err") progress lines, last: $(tail -1 "$dir/estimated.err")"
