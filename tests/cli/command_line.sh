#!/bin/sh
# The real binary's command line: every subcommand's --help exits 0, wrong
# values exit 2 naming the option, and exec hands what follows -- to the
# program untouched; --log-level reaches the simulation's logger.
set -u
rnicsim=$1 dir=$2 scenario=$3
rm -rf "$dir" && mkdir -p "$dir" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

for sub in run validate params lint plot serve exec; do
  "$rnicsim" "$sub" --help > "$dir/$sub.help" 2>&1 || fail "$sub --help exits $?"
  grep -q "^Usage: rnicsim $sub" "$dir/$sub.help" || fail "$sub --help: $(cat "$dir/$sub.help")"
done
"$rnicsim" --version | grep -qx 'rnicsim [0-9.]*' || fail "--version"

# lint --help is help even where a file of that name exists.
(cd "$dir" && : > ./--help && "$rnicsim" lint --help | grep -q FILE.pcap) || fail "lint --help opened a file"

# --idle-exit abc used to become 0.
"$rnicsim" serve --idle-exit abc > "$dir/idle.out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "serve --idle-exit abc exits $rc"
grep -q -- "--idle-exit: expects a whole number" "$dir/idle.out" || fail "$(cat "$dir/idle.out")"
"$rnicsim" run --seed 1x scenario.yaml 2> "$dir/seed.err"
[ $? -eq 2 ] && grep -q -- "--seed: expects a whole number, got '1x'" "$dir/seed.err" || fail "$(cat "$dir/seed.err")"
for sub in run serve; do
  "$rnicsim" $sub --ib-capture pcapng "$scenario" > "$dir/ibc.out" 2>&1
  rc=$?
  [ $rc -eq 2 ] || fail "$sub --ib-capture pcapng exits $rc"
  grep -q -- "--ib-capture: expects one of erf|infiniband, got 'pcapng'" "$dir/ibc.out" || fail "$(cat "$dir/ibc.out")"
  grep -q -- "--ib-capture erf|infiniband" "$dir/$sub.help" || fail "$sub --help has no --ib-capture"
  for o in "--timeline FILE" "--timeline-qps LIST" "--timeline-window WINDOW"; do
    grep -q -- "$o" "$dir/$sub.help" || fail "$sub --help has no $o"
  done
  "$rnicsim" $sub --timeline-window 2ms:1ms "$scenario" > "$dir/tlw.out" 2>&1
  [ $? -eq 2 ] && grep -q -- "--timeline-window: expects START:END" "$dir/tlw.out" || fail "$(cat "$dir/tlw.out")"
  "$rnicsim" $sub --timeline-qps a:b "$scenario" > "$dir/tlq.out" 2>&1
  [ $? -eq 2 ] && grep -q -- "--timeline-qps: expects QPNs" "$dir/tlq.out" || fail "$(cat "$dir/tlq.out")"
done
# serve --ib-capture chooses the link type of a native IB capture (ERF by default).
ib="$(dirname "$0")/../e2e/scenarios/ib_small_send.yaml"
for choice in "" erf infiniband; do
  "$rnicsim" serve "$ib" ${choice:+--ib-capture $choice} --pcap "$dir/serve.pcap" --idle-exit 1 \
    --socket "$dir/sock/s" > "$dir/serve.out" 2>&1 || fail "serve --ib-capture $choice: $(cat "$dir/serve.out")"
  want=197; [ "$choice" = infiniband ] && want=247
  [ "$(od -An -tu4 -j20 -N4 "$dir/serve.pcap" | tr -d ' ')" = $want ] || fail "serve --ib-capture $choice: not $want"
done

# exec: the program's own options, a second -- and all, reach it as written.
out=$("$rnicsim" exec --passthrough -- sh -c 'printf "[%s]" "$@"' sh --help -x -- --host h) || fail "exec exits $?"
[ "$out" = "[--help][-x][--][--host][h]" ] || fail "exec passed $out"
"$rnicsim" exec --passthrough sh -c true 2> "$dir/nodash.err"
[ $? -eq 2 ] || fail "exec without -- accepted"
"$rnicsim" run "$scenario" --log-level debug 2>&1 >/dev/null | grep -q "debug alice.nic: QP .* RESET -> INIT" ||
  fail "run --log-level debug logs no QP transition"
# (Without the progress line, which a run slow enough prints to stderr too.)
[ -z "$("$rnicsim" run "$scenario" --progress never 2>&1 >/dev/null)" ] || fail "run logs below warn by default"
echo "command line ok"
