#!/bin/bash
# A program under `rnicsim exec` finds its host's device where rdma-core, UCX
# and libfabric look: /sys/class/infiniband (the same GUID, GIDs and port as
# the verbs), /sys/class/infiniband_verbs and /dev/infiniband/uverbs0, each
# host its own; outside, nothing changed. UCX's IB module opens the device.
# Where namespaces are refused the program still runs, and a daemon serves on
# the machine's network, with a message that says what to allow. The launcher passes signals on and ends as its program.
# usage: host_view.sh RNICSIM WITHOUT_NAMESPACES OUTDIR
set -u
rnicsim=$1 without=$2 out=$3
mkdir -p "$out"
. "$(dirname "$0")/daemon.sh"
start_daemon "$rnicsim" "$out/daemon.log"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
ex() { "$rnicsim" exec --socket "$sock" "$@"; }

sys=/sys/class/infiniband/rnicsim0
[ "$(ex -- cat $sys/ports/1/state)" = "4: ACTIVE" ] || bad "port state"
[ "$(ex --host host1 -- cat $sys/node_guid)" = "0200:00ff:fe00:0002" ] || bad "host1's node GUID"
[ "$(ex --host host0 -- cat $sys/node_guid)" = "0200:00ff:fe00:0001" ] || bad "host0's node GUID"
[ "$(ex -- cat $sys/ports/1/gids/3)" = "0000:0000:0000:0000:0000:ffff:0a00:0001" ] || bad "GID 3 is not 10.0.0.1"
[ "$(ex -- cat $sys/ports/1/gid_attrs/types/3)" = "RoCE v2" ] || bad "GID 3's type"
[ "$(ex -- cat /sys/class/infiniband_verbs/uverbs0/ibdev)" = "rnicsim0" ] || bad "uverbs0's ibdev"
[ "$(ex -- stat -L -c %F /dev/infiniband/uverbs0)" = "character special file" ] || bad "/dev/infiniband/uverbs0"
ex -- ls /sys/class/net | grep -qx lo || bad "/sys/class/net lost its entries"
[ -e /sys/class/infiniband/rnicsim0 ] && bad "the view leaked out of the program's namespace"
# Two programs started at once get a host each: the launcher claims its host
# before the program starts. Each holds its host until the other has run too:
# either may reach the daemon first, and one that ended before the other
# began would leave its host free for it.
rm -f "$out/ran_first" "$out/ran_second"
hold() {  # MINE OTHER: prints the host's GUID, then waits for the other program
  ex -- sh -c "cat $sys/node_guid; touch $out/$1; for _ in \$(seq 400); do [ -e $out/$2 ] && break; sleep 0.05; done"
}
hold ran_first ran_second > "$out/first.txt" 2>&1 &
first=$!
hold ran_second ran_first > "$out/second.txt" 2>&1 &
second=$!
wait $first $second
[ "$(sort "$out/first.txt" "$out/second.txt" | tr '\n' ' ')" = "0200:00ff:fe00:0001 0200:00ff:fe00:0002 " ] ||
  bad "two programs started at once: $(cat "$out/first.txt" "$out/second.txt")"

# ibv_devinfo's board_id comes from sysfs (ibv_read_sysfs_file), the rest from the verbs.
ex -- ibv_devinfo -v > "$out/devinfo.txt" 2>&1
grep -q "board_id:.*RNICSIM_0001" "$out/devinfo.txt" || bad "ibv_devinfo read no board_id from sysfs"

# UCX's IB module takes the device: a memory domain with the verbs transports.
ex -- ucx_info -d > "$out/ucx_info.txt" 2>&1
grep -q "Memory domain: rnicsim0" "$out/ucx_info.txt" || bad "ucx_info -d has no rnicsim0 memory domain"
grep -q "Transport: rc_verbs" "$out/ucx_info.txt" || bad "ucx_info -d has no rc_verbs"
grep -q "Transport: ud_verbs" "$out/ucx_info.txt" || bad "ucx_info -d has no ud_verbs"

# Namespaces refused: the message says what to allow, and the program runs.
"$without" "$rnicsim" exec --socket "$sock" -- ibv_devices > "$out/refused.txt" 2>&1 || bad "refused: exit $?"
grep -q "runs without host host0's view" "$out/refused.txt" || bad "refused: no message"
grep -q "allow" "$out/refused.txt" || bad "refused: the message says nothing to allow"
grep -q "rnicsim0" "$out/refused.txt" || bad "refused: the program did not run"

# A daemon asked for a network of the hosts' own where namespaces are refused
# serves on the machine's network, and says why and what to allow.
timeout 30 "$without" "$rnicsim" serve --network namespaces --socket "$tmp/refused.sock" --idle-exit 1 \
  > "$out/refused_serve.txt" 2>&1 || bad "refused serve: exit $?"
grep -q "share this machine's network.*allow" "$out/refused_serve.txt" || bad "refused serve: no message"

# Signals reach the program, and the launcher ends as it did.
"$rnicsim" exec --socket "$sock" -- sleep 30 &
launcher=$!
program=""
for _ in $(seq 100); do program=$(pgrep -P $launcher -x sleep) && break; sleep 0.05; done
started=$SECONDS
kill -TERM $launcher
wait $launcher
rc=$?
[ $rc -eq 143 ] || bad "SIGTERM: exit $rc, not 143"
[ $((SECONDS - started)) -lt 10 ] || bad "SIGTERM did not end the program"
[ -n "$program" ] || bad "no program under the launcher"
[ -n "$program" ] && kill -0 "$program" 2> /dev/null && bad "the program outlived its launcher"
ex -- sh -c 'exit 7'
rc=$?
[ $rc -eq 7 ] || bad "exit status $rc, not 7"

cat "$out/refused.txt"
[ $fail -eq 0 ] && echo PASS
# On a failure, the daemon's account of which process went on which host.
[ $fail -eq 0 ] || { kill -INT "$daemon"; wait "$daemon"; echo "--- daemon"; cat "$out/daemon.log"; }
exit $fail
