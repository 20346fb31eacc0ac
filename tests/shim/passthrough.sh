#!/bin/bash
# Passthrough mode. With no RDMA hardware here, two checks:
# 1. passthrough to the system's real libibverbs: no devices, a clear message,
#    no crash (ibv_devices, ibv_devinfo, ib_write_bw);
# 2. passthrough to a second copy of the shim (in simulation mode) standing in
#    for the hardware: ibv_rc_pingpong -c completes between two processes, the
#    copy is what served it, and the RNICSIM_TRACE trace holds every verb called.
# usage: passthrough.sh RNICSIM LIBDIR OUTDIR PORT
set -u
rnicsim=$1 lib=$2 out=$3 port=$4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
fail=0
for p in "ibv_devices" "ibv_devinfo" "ib_write_bw"; do
  RNICSIM_MODE=passthrough LD_LIBRARY_PATH=$lib timeout 20 $p > "$out/$p.log" 2>&1
  rc=$?
  echo "$p (exit $rc): $(tr '\n' ' ' < "$out/$p.log")"
  if [ $rc -eq 124 ] || { [ $rc -gt 128 ] && [ $rc -lt 192 ]; }; then echo "FAIL: $p crashed or hung"; fail=1; fi
  grep -qi "no IB devices\|Failed to get IB devices\|Did not detect devices" "$out/$p.log" ||
    { echo "FAIL: $p did not say that there are no devices"; fail=1; }
done

cp "$lib/libibverbs.so.1" "$out/libibverbs-standin.so"
export RNICSIM_REAL_LIBIBVERBS=$out/libibverbs-standin.so
rm -f "$out/trace.jsonl"
RNICSIM_TRACE=$out/trace.jsonl LD_DEBUG=files "$here/run_pair.sh" "$rnicsim" "$out/chained" - "$port" --passthrough --expect "100 iters in" \
  -- ibv_rc_pingpong -p "$port" -g 0 -n 100 -c > "$out/chained.log" 2>&1 || { echo "FAIL: chained run"; fail=1; }
grep -E "iters in|PASS|FAIL" "$out/chained.log"
for side in server client; do
  grep -q "file=$RNICSIM_REAL_LIBIBVERBS .*dynamically loaded" "$out/chained/$side.log" ||
    { echo "FAIL: the $side did not load the stand-in library"; fail=1; }
done
/usr/bin/python3 "$here/trace_check.py" "$out/trace.jsonl" 2 --calls-only ibv_get_device_list ibv_open_device \
  ibv_alloc_pd ibv_reg_mr ibv_create_cq ibv_create_qp ibv_query_qp ibv_modify_qp ibv_query_gid ibv_destroy_qp \
  ibv_destroy_cq ibv_dereg_mr ibv_dealloc_pd ibv_close_device || { echo "FAIL: the trace"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
