#!/bin/sh
# Every Debian RDMA program loads against the shim with BIND_NOW: each symbol it
# (or libmlx5/libefa/librdmacm, which perftest links) imports from
# libibverbs.so.1 exists at its version. A missing one stops the dynamic loader
# before main with "symbol lookup error" and exit status 127.
# usage: bind_now.sh LIBDIR
set -u
lib=$1
fail=0
n=0
for p in ibv_devices ibv_devinfo ibv_asyncwatch ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong \
         ibv_srq_pingpong ibv_xsrq_pingpong ib_write_bw ib_write_lat ib_read_bw ib_read_lat \
         ib_send_bw ib_send_lat ib_atomic_bw ib_atomic_lat raw_ethernet_bw raw_ethernet_lat; do
  path=$(command -v "$p") || { echo "missing program $p (packages ibverbs-utils, perftest)"; fail=1; continue; }
  LD_LIBRARY_PATH=$lib ldd "$path" | grep -q "libibverbs.so.1 => $lib" || { echo "$p: does not resolve libibverbs.so.1 to $lib"; fail=1; continue; }
  out=$(RNICSIM_SOCKET=/nonexistent/rnicsim.sock LD_BIND_NOW=1 LD_LIBRARY_PATH=$lib timeout 10 "$path" --help 2>&1 </dev/null)
  rc=$?
  if [ $rc -eq 127 ] || echo "$out" | grep -q "symbol lookup error\|undefined symbol\|version .* not found"; then
    echo "$p: does not load (status $rc): $(echo "$out" | head -3)"
    fail=1
  else
    n=$((n + 1))
  fi
done
# pyverbs, with its vendor modules (they pull in libmlx5 and libefa).
out=$(RNICSIM_SOCKET=/nonexistent/rnicsim.sock LD_LIBRARY_PATH=$lib /usr/bin/python3 -c "
import pyverbs.device, pyverbs.qp, pyverbs.cq, pyverbs.mr, pyverbs.pd, pyverbs.srq, pyverbs.addr
import pyverbs.providers.mlx5.mlx5dv, pyverbs.providers.efa.efadv
print('devices', len(pyverbs.device.get_device_list()))" 2>&1)
if echo "$out" | grep -q "devices 0"; then n=$((n + 1)); else echo "pyverbs: $out"; fail=1; fi
echo "$n programs and pyverbs load with BIND_NOW against $lib"
exit $fail
