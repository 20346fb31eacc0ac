#!/bin/bash
# `serve --network namespaces`: each host is a machine on a network. A
# program's own sockets have its host's address on eth0 (the host's MAC, the
# netdev its GIDs name in sysfs), reach the other hosts at their scenario
# addresses, and "localhost" is the program's own host. A pingpong connects
# its TCP side channel to the server's host address, as on a cluster, and so
# does libfabric's fi_pingpong over its verbs provider. Outside
# the namespaces nothing changes.
# usage: host_network.sh RNICSIM OUTDIR PORT
set -u
rnicsim=$1 out=$2 port=$3
mkdir -p "$out"
. "$(dirname "$0")/daemon.sh"
links_before=$(ip -o link | wc -l)
start_daemon "$rnicsim" "$out/daemon.log" --network namespaces
fail=0
bad() { echo "FAIL: $*"; fail=1; }
ex() { "$rnicsim" exec --socket "$sock" "$@"; }

ex --host host1 -- ip -br addr show dev eth0 > "$out/addr.txt" 2>&1
grep -q "10.0.0.2/32" "$out/addr.txt" || bad "host1 has no 10.0.0.2 on eth0: $(cat "$out/addr.txt")"
[ "$(ex --host host1 -- cat /sys/class/net/eth0/address)" = "02:00:00:00:00:02" ] || bad "eth0 has not host1's MAC"
[ "$(ex --host host1 -- cat /sys/class/infiniband/rnicsim0/ports/1/gid_attrs/ndevs/3)" = "eth0" ] ||
  bad "GID 3's netdev is not eth0"
[ "$(ip -o link | wc -l)" -eq "$links_before" ] || bad "the machine's own interfaces changed"

# host0 listens on every address of its own; host1 reaches it at 10.0.0.1,
# and its own localhost is not host0.
server='import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(1); s.settimeout(20)
c, a = s.accept(); c.sendall(("hello " + a[0]).encode()); c.close()'
client='import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5); print(s.recv(64).decode())'
ex --host host0 -- python3 -c "$server" "$port" > "$out/server.txt" 2>&1 &
listener=$!
sleep 1
ex --host host1 -- python3 -c "$client" 127.0.0.1 "$port" > "$out/localhost.txt" 2>&1 &&
  bad "host1's localhost reached host0's listener"
[ "$(ex --host host1 -- python3 -c "$client" 10.0.0.1 "$port" 2>&1)" = "hello 10.0.0.2" ] ||
  bad "host1 did not reach host0 at 10.0.0.1 from 10.0.0.2"
wait $listener

port2=$((port + 1))
ex --host host0 -- ibv_rc_pingpong -g 3 -p $port2 -n 100 > "$out/pp_server.txt" 2>&1 &
pp=$!
sleep 1
timeout 60 "$rnicsim" exec --socket "$sock" --host host1 -- ibv_rc_pingpong -g 3 -p $port2 -n 100 10.0.0.1 \
  > "$out/pp_client.txt" 2>&1 || bad "the pingpong client: exit $?"
wait $pp || bad "the pingpong server: exit $?"
grep -q "100 iters in" "$out/pp_client.txt" || bad "the pingpong did not run: $(cat "$out/pp_client.txt")"

# libfabric's verbs provider (RDM endpoints over ofi_rxm, the default): its
# out-of-band socket and its RDMA CM connection both go to host0's address.
ex --host host0 -- fi_pingpong -p verbs -I 100 -B $((port + 2)) > "$out/fi_server.txt" 2>&1 &
fi=$!
sleep 1
timeout 60 "$rnicsim" exec --socket "$sock" --host host1 -- fi_pingpong -p verbs -I 100 -P $((port + 2)) 10.0.0.1 \
  > "$out/fi_client.txt" 2>&1 || bad "fi_pingpong client: exit $?"
wait $fi || bad "fi_pingpong server: exit $?"
grep -qE "^4k +100 +=100 " "$out/fi_client.txt" || bad "fi_pingpong did not run: $(tail -3 "$out/fi_client.txt")"

# rnicsim rsh, the launch agent cluster tools use in place of ssh: from host0
# a command runs on host1, named or by address, with host1's hostname and
# address; every host knows the others by name; the caller's own host runs it
# itself; a host the scenario lacks is refused.
[ "$(ex --host host0 -- "$rnicsim" rsh host1 'echo $(hostname) $(ip -br -4 addr show dev eth0)' 2>&1 |
  awk '{print $1, $4}')" = "host1 10.0.0.2/32" ] || bad "rsh host1 did not run on host1"
[ "$(ex --host host0 -- "$rnicsim" rsh 10.0.0.2 hostname 2>&1)" = host1 ] || bad "rsh 10.0.0.2 did not run on host1"
[ "$(ex --host host0 -- "$rnicsim" rsh host0 'echo $RNICSIM_HOST' 2>&1)" = host0 ] || bad "rsh to its own host"
[ "$(ex --host host1 -- getent hosts host0)" = "10.0.0.1        host0" ] || bad "host1 does not know host0 by name"
ex --host host0 -- "$rnicsim" rsh nosuch true > "$out/rsh_nosuch.txt" 2>&1 && bad "rsh to a host the scenario lacks ran"
grep -q nosuch "$out/rsh_nosuch.txt" || bad "rsh to an unknown host does not name it: $(cat "$out/rsh_nosuch.txt")"

kill -INT $daemon; wait $daemon
[ "$(ip -o link | wc -l)" -eq "$links_before" ] || bad "interfaces left behind"
cat "$out/daemon.log"
[ $fail -eq 0 ] && echo PASS
exit $fail
