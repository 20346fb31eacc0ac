// What an emulated device and its port say about themselves, computed from the
// DeviceInfo the daemon gives a host. The verbs (ibv_query_device, _port, _gid)
// and the host's sysfs view (emulation/host_view) both read these, so a program
// that asks the verbs and one that reads sysfs see the same device.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "nic_model/queue_format.hpp"
#include "verbs_shim/protocol.hpp"

namespace rnicsim::verbs_proto {

inline constexpr uint32_t kVendorId = 0xFFFFFF;  // no vendor's: programs take no vendor-specific path
inline constexpr uint32_t kVendorPartId = 0x5253;
inline constexpr uint32_t kHwVersion = 1;
inline constexpr const char* kFwVersion = "rnicsim 0.1.0";
inline constexpr int kMaxQp = 65536, kMaxWr = 32768, kMaxCqe = 32767;
inline constexpr uint8_t kPortNum = 1;
inline constexpr uint16_t kDefaultPkey = 0xFFFF;
inline constexpr uint8_t kLocalCaAckDelay = 15;

// A RoCE port's GID table, in mlx5's order: the link-local GID as RoCE v1 and
// v2, then the port's IP address (IPv4-mapped) as RoCE v1 and v2.
inline constexpr uint32_t kRoceGids = 4;
inline constexpr uint8_t kGidIndexIpv4RoceV2 = 3;

inline bool is_ib(const DeviceInfo& info) { return info.link_layer == kLinkLayerIb; }

inline ibv_mtu mtu_enum(uint32_t bytes) {
  switch (bytes) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 1024: return IBV_MTU_1024;
    case 2048: return IBV_MTU_2048;
    default: return IBV_MTU_4096;
  }
}

// IB speed per lane of a 4x port carrying `bps` (ibv_port_attr.active_speed).
inline uint8_t active_speed(uint64_t bps) {
  const uint64_t lane = bps / 4;
  if (lane <= 2'500'000'000ull) return 1;    // SDR
  if (lane <= 5'000'000'000ull) return 2;    // DDR
  if (lane <= 10'000'000'000ull) return 4;   // QDR
  if (lane <= 14'000'000'000ull) return 16;  // FDR
  if (lane <= 25'000'000'000ull) return 32;  // EDR
  if (lane <= 50'000'000'000ull) return 64;  // HDR
  return 128;                                // NDR
}
inline constexpr uint8_t kActiveWidth4x = 2;

inline uint32_t gid_count(const DeviceInfo& info) { return is_ib(info) ? 1 : kRoceGids; }

struct GidEntry {
  ibv_gid gid;
  ibv_gid_type type;
};

// InfiniBand: one entry, the port GID. RoCE: what mlx5 shows for a port with an
// address (kRoceGids). Every entry reaches the same port; the wire carries the
// scenario's link layer (RoCE v1 entries included).
inline GidEntry gid_entry(const DeviceInfo& info, uint32_t index) {
  GidEntry e{};
  if (is_ib(info)) {
    std::memcpy(e.gid.raw, info.gid, 16);
    e.type = IBV_GID_TYPE_IB;
    return e;
  }
  e.type = index % 2 == 0 ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_ROCE_V2;
  if (index >= 2) {
    std::memcpy(e.gid.raw, info.gid, 16);
    return e;
  }
  std::array<uint8_t, 6> mac;
  std::memcpy(mac.data(), info.mac, mac.size());
  const std::array<uint8_t, 16> gid = link_local_gid(mac);
  std::memcpy(e.gid.raw, gid.data(), gid.size());
  return e;
}

inline ibv_port_attr port_attr(const DeviceInfo& info) {
  ibv_port_attr a{};
  a.state = IBV_PORT_ACTIVE;
  a.max_mtu = IBV_MTU_4096;
  a.active_mtu = mtu_enum(info.mtu);
  a.gid_tbl_len = static_cast<int>(gid_count(info));
  // Both link layers take CM MADs; a RoCE port's GIDs come from its IP addresses (mlx5: 0x04010000).
  a.port_cap_flags = IBV_PORT_CM_SUP | (is_ib(info) ? 0 : IBV_PORT_IP_BASED_GIDS);
  a.max_msg_sz = 1u << 31;
  a.pkey_tbl_len = 1;
  a.lid = is_ib(info) ? info.lid : 0;
  a.sm_lid = is_ib(info) ? 1 : 0;
  a.max_vl_num = 1;
  a.subnet_timeout = 18;
  a.active_width = kActiveWidth4x;
  a.active_speed = active_speed(info.rate_bps);
  a.phys_state = 5;  // LinkUp
  a.link_layer = info.link_layer;
  return a;
}

inline ibv_device_attr device_attr(const DeviceInfo& info) {
  ibv_device_attr a{};
  std::snprintf(a.fw_ver, sizeof a.fw_ver, "%s", kFwVersion);
  a.node_guid = info.node_guid;
  a.sys_image_guid = info.node_guid;
  a.max_mr_size = uint64_t{1} << 40;
  a.page_size_cap = 4096;
  a.vendor_id = kVendorId;
  a.vendor_part_id = kVendorPartId;
  a.hw_ver = kHwVersion;
  a.max_qp = kMaxQp;
  a.max_qp_wr = kMaxWr;
  a.device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SRQ_RESIZE | IBV_DEVICE_PORT_ACTIVE_EVENT;
  a.max_sge = static_cast<int>(nic::kMaxSge);
  a.max_sge_rd = static_cast<int>(nic::kMaxSge);
  a.max_cq = kMaxQp;
  a.max_cqe = kMaxCqe;
  a.max_mr = kMaxQp;
  a.max_pd = kMaxQp;
  a.max_qp_rd_atom = 16;
  a.max_res_rd_atom = 16 * kMaxQp;
  a.max_qp_init_rd_atom = 16;
  a.atomic_cap = IBV_ATOMIC_HCA;
  a.max_ah = kMaxQp;
  a.max_srq = kMaxQp;
  a.max_srq_wr = kMaxWr;
  a.max_srq_sge = static_cast<int>(nic::kMaxSge);
  a.max_pkeys = 1;
  a.local_ca_ack_delay = kLocalCaAckDelay;
  a.phys_port_cnt = 1;
  return a;
}

}  // namespace rnicsim::verbs_proto
