#!/bin/bash
# Open MPI (Debian's openmpi-bin, unmodified) across emulated hosts, each a
# machine on the hosts' network. mpirun runs on the first host and starts the
# other hosts' ranks through `rnicsim rsh`, its rsh launch agent, as it would
# through ssh on a cluster; the ranks talk through UCX (pml ucx) on rc_verbs,
# ud_verbs only as its auxiliary transport for wire-up. A two-rank ping-pong on
# the default two hosts and a four-rank allreduce on four (lossless RoCE) check
# every byte; their RDMA traffic is in the daemon's capture, decodes in tshark
# and lints clean, with no retransmission.
# usage: mpi.sh RNICSIM PINGPONG ALLREDUCE FOUR_HOSTS.yaml OUTDIR
set -u
rnicsim=$1 pingpong=$2 allreduce=$3 four=$4 out=$5
mkdir -p "$out"
. "$(dirname "$0")/daemon.sh"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# mpirun refuses root unless told: CI runs as root.
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# run_mpi NAME SCENARIO|- HOSTS PROGRAM: a daemon of its own, mpirun on the
# first of HOSTS (comma-separated), one rank on each.
run_mpi() {
  local name=$1 scenario=$2 hosts=$3 program=$4 args=()
  [ "$scenario" != "-" ] && args+=("$scenario")
  start_daemon "$rnicsim" "$out/$name.daemon.log" "${args[@]}" --network namespaces --pcap "$out/$name.pcap"
  local n
  n=$(tr , '\n' <<< "$hosts" | wc -l)
  timeout 300 "$rnicsim" exec --socket "$sock" --host "${hosts%%,*}" -- \
    mpirun --mca plm_rsh_agent "$rnicsim rsh" -H "$hosts" -np "$n" --mca pml ucx \
      -x UCX_TLS=rc_verbs,ud_verbs:aux -x UCX_NET_DEVICES=rnicsim0:1 "$program" > "$out/$name.txt" 2>&1 ||
    bad "$name: mpirun exit $?: $(tail -5 "$out/$name.txt")"
  kill -INT "$daemon"
  wait "$daemon"
  rm -rf "$tmp"
  for h in $(tr , ' ' <<< "$hosts"); do
    grep -q " of $n on $h\$" "$out/$name.txt" || bad "$name: no rank ran on $h"
  done
  check_capture "$name" "$out/$name.pcap"
  tail -1 "$out/$name.daemon.log"
}

# check_capture NAME PCAP: every packet decodes as InfiniBand, the ranks' data
# is on RC (SENDs, WRITEs, READ responses), and the lint finds no error and no
# retransmission (the fabric is lossless). PFC's pauses (MAC control frames)
# are the fabric's, not packets.
check_capture() {
  local t=(tshark -n "${payload_as_data[@]}" -r "$2")
  local total ib broken rc_data
  total=$("${t[@]}" -Y '!macc' 2>/dev/null | wc -l)
  ib=$("${t[@]}" -Y infiniband 2>/dev/null | wc -l)
  broken=$("${t[@]}" -Y '_ws.malformed || _ws.expert.severity >= 8388608' 2>/dev/null | wc -l)
  rc_data=$("${t[@]}" -Y 'infiniband.bth.opcode <= 16 && infiniband.bth.opcode != 12' 2>/dev/null | wc -l)
  echo "$1 capture: $total packets, $ib InfiniBand, $broken malformed, $rc_data RC data"
  [ "$total" -gt 0 ] && [ "$ib" -eq "$total" ] && [ "$broken" -eq 0 ] || bad "$1: the capture does not decode cleanly"
  [ "$rc_data" -gt 1000 ] || bad "$1: the ranks' data is not on RC"
  "$rnicsim" lint "$2" > "$out/$1.lint.txt" 2>&1 || bad "$1: the capture lints with errors: $(tail -1 "$out/$1.lint.txt")"
  grep -q "observation: retransmission" "$out/$1.lint.txt" && bad "$1: retransmissions on a lossless fabric"
}

run_mpi pingpong - host0,host1 "$pingpong"
grep -q "pingpong: every byte checked" "$out/pingpong.txt" || bad "the ping-pong did not check its data"
grep -qE "^pingpong +1048576 bytes" "$out/pingpong.txt" || bad "the ping-pong did not reach 1 MiB"
run_mpi allreduce "$four" node0,node1,node2,node3 "$allreduce"
grep -q "allreduce: every sum checked on 4 ranks" "$out/allreduce.txt" || bad "the allreduce's sums are not all right"
grep -E "^(pingpong|allreduce) " "$out/pingpong.txt" "$out/allreduce.txt"
[ $fail -eq 0 ] && echo PASS
exit $fail
