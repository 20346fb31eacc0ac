#!/bin/bash
# The rdma-core Python suite's RDMA-CM tests (test_rdmacm.CMTestCase), on the
# shims. They look for the device's network interface in sysfs
# (/sys/class/infiniband/DEV/device/net/) and take its first address from
# `ip -j addr`, then fork a passive and an active process that connect to that
# address. Here, in mount and network namespaces of their own (user ones too
# when not root), the device is given what they look for: a tmpfs over
# /sys/class naming `lo` as its interface, and `lo` holding the host's address
# (10.0.0.1) alone. Both children share their parent's emulated host, so the
# connection loops back through the one simulated NIC. Fails on any error or
# failure, on a test not run, and on a skip for any reason but the port's lack
# of multicast.
# usage: pyverbs_rdmacm.sh RNICSIM LIBDIR OUTDIR
set -u
rnicsim=$1 lib=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
cp -r /usr/share/doc/rdma-core/tests "$out/" || { echo "python3-pyverbs' tests are missing"; exit 1; }
gunzip -f "$out"/tests/*.gz
ns="unshare --mount --net"
[ "$(id -u)" -eq 0 ] || ns="unshare --user --map-root-user --mount --net"
$ns true 2>/dev/null || { echo "SKIP: no mount and network namespaces here ($ns)"; exit 77; }
cat > "$out/inside.sh" <<INNER
set -e
ip link set lo up
ip addr add 10.0.0.1/8 dev lo
ip addr del 127.0.0.1/8 dev lo
mount -t tmpfs rnicsim-sysfs /sys/class
mkdir -p /sys/class/infiniband/rnicsim0/device/net/lo
. "$(dirname "$(readlink -f "$0")")/../shim/daemon.sh"
start_daemon "$rnicsim" "$out/daemon.log"
cd "$out"
RNICSIM_SOCKET=\$sock LD_LIBRARY_PATH="$lib" timeout 300 /usr/bin/python3 tests/run_tests.py -v -k tests.test_rdmacm.CMTestCase > results.txt 2>&1 || true
INNER
$ns bash "$out/inside.sh"
r=$out/results.txt
cat "$r"
fail=0
grep -q "^Ran 10 tests" "$r" || { echo "FAIL: not the 10 tests of CMTestCase"; fail=1; }
if grep -qE "^(FAIL|ERROR): " "$r"; then echo "FAIL: failures or errors"; fail=1; fi
for t in sync_traffic async_traffic async_reject_traffic async_traffic_external_qp async_udp_traffic async_read async_write; do
  grep -qE "^test_rdmacm_$t .* ok$" "$r" || { echo "FAIL: test_rdmacm_$t did not pass"; fail=1; }
done
if grep -oE "skipped '.*'" "$r" | grep -qv "skipped 'Multicast is not supported on this device'"; then
  echo "FAIL: a skip for another reason"; fail=1
fi
grep -q "also has process" "$out/daemon.log" || { echo "FAIL: the children were not on their parent's host"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
