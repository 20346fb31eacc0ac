#!/bin/bash
# The rdma-core Python suite's RDMA-CM tests (test_rdmacm.CMTestCase), on the
# shims, run as they are under plain `rnicsim exec` with no set-up of the
# test's own: with `serve --network namespaces` the host has what they look
# for, the device's network interface in sysfs
# (/sys/class/infiniband/DEV/device/net/eth0) holding the host's address
# (10.0.0.1, from `ip -j addr`). They fork a passive and an active process
# that connect to that address; both children share their parent's emulated
# host, so the connection loops back through the one simulated NIC. Fails on
# any error or failure, on a test not run, and on a skip for any reason but
# the port's lack of multicast.
# usage: pyverbs_rdmacm.sh RNICSIM LIBDIR OUTDIR
set -u
rnicsim=$1 out=$3
rm -rf "$out" && mkdir -p "$out"
cp -r /usr/share/doc/rdma-core/tests "$out/" || { echo "python3-pyverbs' tests are missing"; exit 1; }
gunzip -f "$out"/tests/*.gz
. "$(dirname "$(readlink -f "$0")")/../shim/daemon.sh"
start_daemon "$rnicsim" "$out/daemon.log" --network namespaces
(cd "$out" && timeout 300 "$rnicsim" exec --socket "$sock" -- /usr/bin/python3 tests/run_tests.py -v \
  -k tests.test_rdmacm.CMTestCase > results.txt 2>&1)
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
