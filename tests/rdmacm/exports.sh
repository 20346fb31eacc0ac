#!/bin/bash
# The CM shim's librdmacm.so.1 against the system's: the same symbol@VERSION
# exports, NEEDED libibverbs.so.1 (found beside it), and Debian's CM programs
# load it, BIND_NOW, from LIBDIR (and through rnicsim exec) in place of the
# system's.
# usage: exports.sh RNICSIM LIBDIR SYSTEM_LIBRDMACM
set -u
rnicsim=$1 lib=$2 real=$3
fail=0
exports() { readelf --dyn-syms -W "$1" | awk '$7 != "UND" && $8 ~ /@/ {print $8}' | sort; }
diff <(exports "$real") <(exports "$lib/librdmacm.so.1") > /dev/null ||
  { echo "FAIL: exports differ (< system, > shim):"; diff <(exports "$real") <(exports "$lib/librdmacm.so.1"); fail=1; }
echo "$(exports "$lib/librdmacm.so.1" | wc -l) exports, as $real"
readelf -d "$lib/librdmacm.so.1" | grep -q 'NEEDED.*\[libibverbs.so.1\]' || { echo "FAIL: no NEEDED libibverbs.so.1"; fail=1; }
ldd "$lib/librdmacm.so.1" | grep -q "libibverbs.so.1 => $lib/libibverbs.so.1" ||
  { echo "FAIL: libibverbs.so.1 is not the one beside it:"; ldd "$lib/librdmacm.so.1"; fail=1; }
for p in rping ucmatose udaddy mckey cmtime rdma_server rdma_client rstream riostream ib_write_bw; do
  path=$(command -v "$p") || { echo "missing program $p (packages rdmacm-utils, perftest)"; fail=1; continue; }
  LD_LIBRARY_PATH=$lib ldd "$path" | grep -q "librdmacm.so.1 => $lib/librdmacm.so.1" ||
    { echo "FAIL: $p does not resolve librdmacm.so.1 to $lib"; fail=1; continue; }
  out=$(RNICSIM_SOCKET=/nonexistent/rnicsim.sock LD_BIND_NOW=1 LD_LIBRARY_PATH=$lib timeout 10 "$path" --help 2>&1 </dev/null)
  rc=$?
  if [ $rc -eq 127 ] || echo "$out" | grep -q "symbol lookup error\|undefined symbol\|version .* not found"; then
    echo "FAIL: $p does not load (status $rc): $(echo "$out" | head -3)"; fail=1
  fi
done
# rnicsim exec puts LIBDIR first on the library path (--passthrough: no daemon needed for ldd).
found=$("$rnicsim" exec --passthrough -- ldd "$(command -v rping)" | awk '$1 == "librdmacm.so.1" {print $3}')
[ -n "$found" ] && [ "$(realpath "$found")" = "$(realpath "$lib/librdmacm.so.1")" ] ||
  { echo "FAIL: under rnicsim exec rping finds librdmacm.so.1 at '$found', not in $lib"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
