#!/bin/bash
# The rdma-core Python test suite that python3-pyverbs ships, on the shim: the
# test programs make traffic between two sets of resources of one process (the
# NIC's loopback carries it). Prints the summary and every skip reason; fails
# on any error, and on any failure but the known ones listed below.
# usage: pyverbs_suite.sh RNICSIM LIBDIR OUTDIR
set -u
rnicsim=$1 lib=$2 out=$3
# Known failures, each with its reason (test names separated by spaces).
known=""
rm -rf "$out" && mkdir -p "$out"
cp -r /usr/share/doc/rdma-core/tests "$out/" || { echo "python3-pyverbs' tests are missing"; exit 1; }
gunzip -f "$out"/tests/*.gz
# The shim's own test in the suite's framework: async events (SRQ limit).
cp "$(dirname "$0")/test_rnicsim_async.py" "$out/tests/"
. "$(dirname "$0")/daemon.sh"
start_daemon "$rnicsim" "$out/daemon.log"
(cd "$out" && RNICSIM_SOCKET=$sock LD_LIBRARY_PATH=$lib timeout 900 /usr/bin/python3 tests/run_tests.py -v > results.txt 2>&1)
echo "--- skips by reason"
grep -oE "skipped '.*'" "$out/results.txt" | sort | uniq -c | sort -rn
echo "--- failures and errors"
grep -E "^(FAIL|ERROR): " "$out/results.txt"
grep -E "^Ran |^OK|^FAILED" "$out/results.txt"
fail=0
grep -q "^Ran " "$out/results.txt" || { echo "FAIL: the suite did not finish"; tail -20 "$out/results.txt"; fail=1; }
if grep -q "^ERROR: " "$out/results.txt"; then echo "FAIL: errors"; fail=1; fi
for t in $(grep -E "^FAIL: " "$out/results.txt" | awk '{print $2}'); do
  case " $known " in *" $t "*) echo "known failure: $t" ;; *) echo "FAIL: $t"; fail=1 ;; esac
done
# A skip for want of a QP type the device has is a spurious error, not a missing feature.
if grep -qE "skipped 'Create (RC|UC|UD) QP .*is not supported'" "$out/results.txt"; then
  echo "FAIL: RC, UC or UD QP creation skipped as not supported"; fail=1
fi
grep -q "test_srq_limit_reached .* ok$" "$out/results.txt" || { echo "FAIL: the shim's async event test did not pass"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
