// Sample packets for tests: one representative PacketFields per opcode and link.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "packet/packet.hpp"

namespace rnicsim::packet::testing {

struct LinkVariant {
  LinkKind link;
  bool vlan;
  std::string name() const { return std::string(to_string(link)) + (vlan ? "+VLAN" : ""); }
};

inline const std::vector<LinkVariant>& all_link_variants() {
  static const std::vector<LinkVariant> v = {
      {LinkKind::RoceV2Ipv4, false}, {LinkKind::RoceV2Ipv4, true}, {LinkKind::RoceV2Ipv6, false},
      {LinkKind::RoceV2Ipv6, true},  {LinkKind::IbLocal, false},   {LinkKind::IbGlobal, false},
  };
  return v;
}

/// The link type a capture of frames of this link kind has.
inline LinkType link_type_of(LinkKind k) { return is_roce(k) ? LinkType::Ethernet : LinkType::Infiniband; }

inline std::vector<Opcode> all_valid_opcodes() {
  std::vector<Opcode> v;
  for (unsigned i = 0; i < 256; ++i)
    if (is_valid_opcode(static_cast<std::uint8_t>(i))) v.push_back(static_cast<Opcode>(i));
  return v;
}

/// Payload length used for an opcode in samples: a PMTU (256) for FIRST/MIDDLE,
/// 13 bytes (3 pad bytes) for other opcodes with payload, 0 otherwise.
inline std::uint32_t sample_payload_length(Opcode op) {
  const OpcodeInfo& i = opcode_info(op);
  if (!i.has(Hdr::Payload)) return 0;
  if (i.position == Position::First || i.position == Position::Middle) return 256;
  return 13;
}

inline std::vector<std::byte> sample_payload(std::uint32_t n, std::uint8_t seed = 0) {
  std::vector<std::byte> p(n);
  for (std::uint32_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>((i * 7 + seed) & 0xFF);
  return p;
}

inline PacketFields sample_fields(Opcode op, LinkVariant lv, std::uint32_t payload_length) {
  PacketFields f;
  f.link = lv.link;
  const OpcodeInfo& info = opcode_info(op);
  if (is_roce(lv.link)) {
    f.eth_dst = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
    f.eth_src = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
    if (lv.vlan) f.vlan = VlanFields{3, false, 100};
    if (lv.link == LinkKind::RoceV2Ipv4) {
      f.ip_src = ipv4_mapped(0x0A000001);
      f.ip_dst = ipv4_mapped(0x0A000002);
      f.ipv4_id = 0x1234;
    } else {
      f.ip_src = {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
      f.ip_dst = {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
      f.ipv6_flow_label = 0x12345;
    }
    f.dscp = 26;
    f.ecn = 2;
    f.ttl = 64;
    f.udp_src_port = 0xC123;
  } else {
    f.lrh_vl = 1;
    f.lrh_sl = 3;
    f.dlid = 2;
    f.slid = 1;
    if (lv.link == LinkKind::IbGlobal) {
      f.grh_tclass = 0x20;
      f.grh_flow_label = 0xABCDE;
      f.grh_hop_limit = 64;
      f.sgid = {0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
      f.dgid = {0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    }
  }
  f.opcode = op;
  f.pkey = 0xFFFF;
  f.dest_qp = Qpn(0x000123);
  f.psn = Psn(0x00ABCD);
  f.ack_req = info.position == Position::Last || info.position == Position::Only;
  f.solicited = info.has(Hdr::ImmDt);
  f.becn = op == Opcode::Cnp;
  f.payload_length = payload_length;
  if (info.has(Hdr::Deth)) f.deth = DethFields{Qkey(0x11111111), Qpn(0x000042)};
  if (info.has(Hdr::Reth)) {
    std::uint32_t dma = payload_length;
    if (info.position == Position::First) dma = 4096;
    if (info.operation == Operation::RdmaReadRequest) dma = 8192;
    f.reth = RethFields{0x00007F0000001000ull, Rkey(0x1234ABCD), dma};
  }
  if (info.has(Hdr::AtomicEth))
    f.atomic_eth = AtomicEthFields{0x00007F0000002008ull, Rkey(0x1234ABCD), 0x1111111111111111ull,
                                   op == Opcode::RcCompareSwap ? 0x2222222222222222ull : 0};
  if (info.has(Hdr::Aeth)) f.aeth = AethFields{Syndrome::ack(), 7};
  if (info.has(Hdr::AtomicAckEth)) f.atomic_ack_eth = AtomicAckEthFields{0x5555555555555555ull};
  if (info.has(Hdr::ImmDt)) f.imm = 0xDEADBEEF;
  if (info.has(Hdr::Ieth)) f.ieth = IethFields{Rkey(0x0BADCAFE)};
  derive_fields(f);
  return f;
}

inline PacketFields sample_fields(Opcode op, LinkVariant lv) { return sample_fields(op, lv, sample_payload_length(op)); }

/// A built frame (exact length) for the sample of an opcode/link.
inline std::vector<std::byte> sample_frame(const PacketFields& f, std::uint8_t seed = 0) {
  std::vector<std::byte> out(frame_length(f));
  const auto payload = sample_payload(f.payload_length, seed);
  auto r = build(f, payload, out);
  if (!r) return {};
  out.resize(*r);
  return out;
}

}  // namespace rnicsim::packet::testing
