# Sourced by the shim's test scripts: a daemon of their own on a private socket.
# start_daemon RNICSIM LOG [SERVE ARGS...]: sets $tmp, $sock and $daemon, and
# stops the daemon and removes $tmp when the script exits. $daemon_prefix, if
# set, is a command (with its options) the daemon runs under.
start_daemon() {
  local rnicsim=$1 log=$2
  shift 2
  tmp=$(mktemp -d /tmp/rnicsim-test.XXXXXX)
  sock=$tmp/daemon.sock
  # shellcheck disable=SC2086
  ${daemon_prefix:-} "$rnicsim" serve "$@" --socket "$sock" > "$log" 2>&1 &
  daemon=$!
  trap 'kill $daemon 2>/dev/null; rm -rf "$tmp"' EXIT
  for _ in $(seq 100); do [ -S "$sock" ] && return; sleep 0.05; done
  echo "start_daemon: no socket at $sock after 5 s" >&2
}
# wait_listen PORT: until a program listens on the TCP port (its QP exchange).
wait_listen() {
  for _ in $(seq 200); do ss -ltn "sport = :$1" | grep -q LISTEN && return; sleep 0.05; done
  echo "wait_listen: nothing listens on port $1 after 10 s" >&2
}
# tshark options that decode an InfiniBand payload as the program's own bytes:
# tshark 4.0's guesses at what it carries (RPC-over-RDMA, an EtherType, SMB
# Direct, iSER...) are off, or an application's data that happens to look like
# one decodes as a broken frame of that protocol.
payload_as_data=()
for _h in rpcrdma_infiniband smb_direct_infiniband iser_infiniband mellanox_eoib sdp_infiniband eth_over_ib \
          fc_infiniband smcr_infiniband nvme_rdma; do
  payload_as_data+=(--disable-heuristic "$_h")
done
