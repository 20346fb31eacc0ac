#!/bin/bash
# ibv_devices and ibv_devinfo -v, unmodified, show the daemon's device through
# the shim: an active port with the scenario's MTU and link layer, a RoCEv2 GID
# from the host's address (or a LID on InfiniBand), and no vendor's identity.
# usage: devinfo.sh RNICSIM OUTDIR
set -u
rnicsim=$1 out=$2
mkdir -p "$out"
tmp=$(mktemp -d /tmp/rnicsim-test.XXXXXX)
sock=$tmp/daemon.sock
cat > "$tmp/ib.yaml" <<YAML
name: ib_devinfo
link_layer: ib
hosts: [{name: a, lid: 7}, {name: b}]
links: [{between: [a, b], rate: 100Gbps, delay: 1us}]
nic: {mtu: 2048}
workloads: []
YAML
fail=0
serve_opts=()
check() {  # file regex what
  grep -Eq "$2" "$1" || { echo "FAIL: $3 (no match for '$2' in $1)"; fail=1; }
}
run() {  # scenario|- name
  local args=()
  [ "$1" != "-" ] && args+=("$1")
  "$rnicsim" serve "${args[@]}" "${serve_opts[@]}" --socket "$sock" > "$out/$2.daemon.log" 2>&1 &
  local d=$!
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
  "$rnicsim" exec --socket "$sock" -- ibv_devices > "$out/$2.devices" 2>&1 || { echo "FAIL: ibv_devices"; fail=1; }
  "$rnicsim" exec --socket "$sock" -- ibv_devinfo -v > "$out/$2.devinfo" 2>&1 || { echo "FAIL: ibv_devinfo"; fail=1; }
  kill -INT $d; wait $d
  cat "$out/$2.devices" "$out/$2.devinfo"
}
run - roce
check "$out/roce.devices" "rnicsim0[[:space:]]+020000fffe000001" "ibv_devices lists the device with its GUID"
check "$out/roce.devinfo" "state:[[:space:]]+PORT_ACTIVE" "port active"
check "$out/roce.devinfo" "active_mtu:[[:space:]]+4096" "the scenario's MTU"
check "$out/roce.devinfo" "link_layer:[[:space:]]+Ethernet" "Ethernet link layer"
# The GID table mlx5 shows: v1 and v2 of the link-local address, then of the IPv4 one.
check "$out/roce.devinfo" "gid_tbl_len:[[:space:]]+4" "four GIDs"
check "$out/roce.devinfo" "GID\[  0\]:[[:space:]]+fe80:0000:0000:0000:0000:00ff:fe00:0001, RoCE v1" "link-local RoCE v1 GID"
check "$out/roce.devinfo" "GID\[  1\]:[[:space:]]+fe80::ff:fe00:1, RoCE v2" "link-local RoCE v2 GID"
check "$out/roce.devinfo" "GID\[  2\]:[[:space:]]+0000:0000:0000:0000:0000:ffff:0a00:0001, RoCE v1" "IPv4 RoCE v1 GID"
check "$out/roce.devinfo" "GID\[  3\]:[[:space:]]+::ffff:10.0.0.1, RoCE v2" "RoCEv2 GID from the host's address"
check "$out/roce.devinfo" "vendor_id:[[:space:]]+0xffffff" "no vendor's ID"
check "$out/roce.devinfo" "max_qp_rd_atom:[[:space:]]+16" "reads and atomics"
run "$tmp/ib.yaml" ib
check "$out/ib.devinfo" "gid_tbl_len:[[:space:]]+1" "an IB port has one GID"
check "$out/ib.devinfo" "link_layer:[[:space:]]+InfiniBand" "InfiniBand link layer"
check "$out/ib.devinfo" "port_lid:[[:space:]]+7" "the scenario's LID"
check "$out/ib.devinfo" "active_mtu:[[:space:]]+2048" "the scenario's MTU"
serve_opts=(--device-name mlx5_3)
run - named
check "$out/named.devices" "mlx5_3[[:space:]]+020000fffe000001" "serve --device-name names the device"
serve_opts=()
run "$(dirname "$0")/scenarios/named.yaml" scenario_named
check "$out/scenario_named.devices" "mlx5_0[[:space:]]+" "a scenario host's device: names the device"
rm -rf "$tmp"
[ $fail -eq 0 ] && echo PASS
exit $fail
