// Communication Management MADs (IBTA vol. 1, chapter 12): the 256-byte
// management datagrams the CM agents of two ports exchange on QP1 to set up and
// tear down connections. A message is a typed struct; encode() lays it out
// big-endian at the spec's offsets (after the 24-byte common MAD header) and
// decode() reads it back, refusing anything that is not a well-formed CM MAD.
// The field names follow the spec; offsets are from the start of the MAD.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <variant>

#include "packet/numbers.hpp"
#include "packet/psn.hpp"

namespace rnicsim::cm {

inline constexpr size_t kMadBytes = 256;
inline constexpr size_t kMadHeaderBytes = 24;
using packet::kGsiQpn;
using packet::kGsiQkey;
inline constexpr uint16_t kDefaultPkey = 0xFFFF;
inline constexpr uint8_t kMgmtClassCm = 0x07;
inline constexpr uint8_t kCmClassVersion = 2;
inline constexpr uint8_t kMethodSend = 0x03;

enum class Attr : uint16_t {
  Req = 0x10, Mra = 0x11, Rej = 0x12, Rep = 0x13, Rtu = 0x14,
  Dreq = 0x15, Drep = 0x16, SidrReq = 0x17, SidrRep = 0x18,
};

// Private data each message carries (the bytes after its fields).
inline constexpr size_t kReqPrivate = 92, kMraPrivate = 222, kRejPrivate = 148, kRepPrivate = 196,
                        kRtuPrivate = 224, kDreqPrivate = 220, kDrepPrivate = 224, kSidrReqPrivate = 216,
                        kSidrRepPrivate = 136;
inline constexpr size_t kRejAriBytes = 72;

// Transport service types of a REQ (2 bits).
enum class Transport : uint8_t { Rc = 0, Uc = 1, Rd = 2 };

// A path as the REQ carries it (the primary; the alternate path is not used).
struct Path {
  uint16_t local_lid = 0xFFFF, remote_lid = 0xFFFF;  // permissive on RoCE
  std::array<uint8_t, 16> local_gid{}, remote_gid{};
  uint32_t flow_label = 0;  // 20 bits
  uint8_t rate = 0;         // 6 bits
  uint8_t traffic_class = 0;
  uint8_t hop_limit = 0;
  uint8_t sl = 0;             // 4 bits
  bool subnet_local = false;  // 1 bit
  uint8_t local_ack_timeout = 0;  // 5 bits
  bool operator==(const Path&) const = default;
};

struct Req {
  uint32_t local_comm_id = 0;
  uint64_t service_id = 0;
  uint64_t local_ca_guid = 0;
  packet::Qkey local_qkey{};
  packet::Qpn local_qpn{};
  uint8_t responder_resources = 0;
  uint32_t local_eecn = 0;  // 24 bits
  uint8_t initiator_depth = 0;
  uint32_t remote_eecn = 0;                 // 24 bits
  uint8_t remote_cm_response_timeout = 0;   // 5 bits
  Transport transport = Transport::Rc;      // 2 bits
  bool end_to_end_flow_control = false;     // 1 bit
  packet::Psn starting_psn{};
  uint8_t local_cm_response_timeout = 0;    // 5 bits
  uint8_t retry_count = 0;                  // 3 bits
  uint16_t pkey = kDefaultPkey;
  uint8_t path_mtu = 0;         // 4 bits, enum ibv_mtu
  bool rdc_exists = false;      // 1 bit
  uint8_t rnr_retry_count = 0;  // 3 bits
  uint8_t max_cm_retries = 0;   // 4 bits
  bool srq = false;             // 1 bit
  uint8_t extended_transport = 0;  // 3 bits
  Path primary;
  std::array<uint8_t, kReqPrivate> private_data{};
  bool operator==(const Req&) const = default;
};

struct Mra {
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  uint8_t message_mraed = 0;    // 2 bits: 0 REQ, 1 REP, 2 LAP
  uint8_t service_timeout = 0;  // 5 bits
  std::array<uint8_t, kMraPrivate> private_data{};
  bool operator==(const Mra&) const = default;
};

struct Rej {
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  uint8_t message_rejected = 0;  // 2 bits: 0 REQ, 1 REP, 2 other
  uint8_t ari_length = 0;        // 7 bits
  uint16_t reason = 0;
  std::array<uint8_t, kRejAriBytes> ari{};
  std::array<uint8_t, kRejPrivate> private_data{};
  bool operator==(const Rej&) const = default;
};

struct Rep {
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  packet::Qkey local_qkey{};
  packet::Qpn local_qpn{};
  uint32_t local_eecn = 0;  // 24 bits
  packet::Psn starting_psn{};
  uint8_t responder_resources = 0;
  uint8_t initiator_depth = 0;
  uint8_t target_ack_delay = 0;  // 5 bits
  uint8_t failover_accepted = 0;  // 2 bits
  bool end_to_end_flow_control = false;
  uint8_t rnr_retry_count = 0;  // 3 bits
  bool srq = false;
  uint64_t local_ca_guid = 0;
  std::array<uint8_t, kRepPrivate> private_data{};
  bool operator==(const Rep&) const = default;
};

struct Rtu {
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  std::array<uint8_t, kRtuPrivate> private_data{};
  bool operator==(const Rtu&) const = default;
};

struct Dreq {
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  packet::Qpn remote_qpn{};
  std::array<uint8_t, kDreqPrivate> private_data{};
  bool operator==(const Dreq&) const = default;
};

struct Drep {
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  std::array<uint8_t, kDrepPrivate> private_data{};
  bool operator==(const Drep&) const = default;
};

struct SidrReq {
  uint32_t request_id = 0;
  uint16_t pkey = kDefaultPkey;
  uint64_t service_id = 0;
  std::array<uint8_t, kSidrReqPrivate> private_data{};
  bool operator==(const SidrReq&) const = default;
};

struct SidrRep {
  uint32_t request_id = 0;
  uint8_t status = 0;
  uint8_t add_info_length = 0;
  packet::Qpn qpn{};
  uint64_t service_id = 0;
  packet::Qkey qkey{};
  std::array<uint8_t, 72> class_port_info{};
  std::array<uint8_t, kSidrRepPrivate> private_data{};
  bool operator==(const SidrRep&) const = default;
};

using Message = std::variant<Req, Mra, Rej, Rep, Rtu, Dreq, Drep, SidrReq, SidrRep>;

struct Mad {
  uint64_t transaction_id = 0;
  uint16_t status = 0;
  Message message;
  bool operator==(const Mad&) const = default;
};

Attr attribute_of(const Message& m);

// The 256 bytes of `m`: common MAD header (base version 1, class 0x07, class
// version 2, method Send, the message's attribute ID), then its fields.
std::array<std::byte, kMadBytes> encode(const Mad& m);

// The MAD in `bytes` (at least kMadBytes of them), or nullopt if it is not a CM
// MAD this agent handles (wrong base version, class, class version, method or
// attribute, or too short): the caller counts and drops it.
std::optional<Mad> decode(std::span<const std::byte> bytes);

// REJ reasons the RDMA CM uses (IBTA vol. 1 ch. 12 "Rejection Reason"; 1 is
// "no QP available", 4 "timeout").
inline constexpr uint16_t kRejInvalidServiceId = 8;
inline constexpr uint16_t kRejStaleConnection = 10;
inline constexpr uint16_t kRejTimeout = 4;
inline constexpr uint16_t kRejConsumerReject = 28;
inline constexpr uint16_t kRejVendorOptionNotSupported = 35;

// The RDMA CM's header at the start of a REQ's (or SIDR REQ's) private data
// for IP port spaces: version 0, IP version 4 or 6 in the high nibble, the
// source port, then the source and destination addresses (an IPv4 address in
// the last 4 of its 16 bytes). The user's private data follows it.
inline constexpr size_t kIpHeaderBytes = 36;
struct IpHeader {
  uint8_t ip_version = 4;
  uint16_t src_port = 0;
  std::array<uint8_t, 16> src_addr{}, dst_addr{};
  bool operator==(const IpHeader&) const = default;
};
void encode_ip_header(const IpHeader& h, std::span<uint8_t, kIpHeaderBytes> out);
std::optional<IpHeader> decode_ip_header(std::span<const uint8_t, kIpHeaderBytes> in);

// A path MTU of `bytes` (256 to 4096, a power of two) as the REQ's 4-bit code,
// which is enum ibv_mtu: 1 for 256 B ... 5 for 4096 B.
constexpr uint8_t mtu_code(uint32_t bytes) {
  uint8_t code = 1;
  for (uint32_t b = 256; b < bytes && code < 5; b <<= 1) ++code;
  return code;
}

// The RDMA CM's service ID: the port space (RDMA_PS_TCP 0x0106, RDMA_PS_UDP
// 0x0111, RDMA_PS_IB 0x013F) and the port.
constexpr uint64_t service_id(uint16_t port_space, uint16_t port) {
  return (uint64_t{port_space} << 16) | port;
}

}  // namespace rnicsim::cm
