#!/bin/bash
# run_pair.sh on a link that goes down for 5 ms every 25 ms (the daemon's
# simulated time runs with the wall clock) for 60 s; the pair must complete
# and the outages must have cost retransmissions.
# usage: flap_pair.sh RNICSIM OUTDIR PORT [run_pair.sh options] -- PROGRAM ARGS...
set -u
rnicsim=$1 out=$2 port=$3
shift 3
mkdir -p "$out"
/usr/bin/python3 - "$out/flaps.yaml" <<'PY'
import sys
downs = ", ".join("{from: %dms, to: %dms}" % (t, t + 5) for t in range(20, 60000, 25))
open(sys.argv[1], "w").write("""name: flaps
seed: 7
link_layer: roce_v2
hosts: [{name: a, ip: 10.0.0.1}, {name: b, ip: 10.0.0.2}]
links: [{between: [a, b], rate: 100Gbps, delay: 1us, down: [%s]}]
nic: {mtu: 4096}
workloads: []
""" % downs)
PY
"$(dirname "$0")/../shim/run_pair.sh" "$rnicsim" "$out" "$out/flaps.yaml" "$port" "$@" || exit 1
retx=$(sed -n 's/.* \([0-9]*\) retransmitted.*/\1/p' "$out/daemon.log")
[ "${retx:-0}" -gt 0 ] || { echo "FAIL: no outage hit the transfer"; exit 1; }
echo "outages cost $retx retransmitted packets"
