#include "packet/packet.hpp"

#include <algorithm>
#include <cstring>

#include "packet/icrc.hpp"

namespace rnicsim::packet {
namespace {

constexpr std::uint32_t k24 = 0xFFFFFF;

std::size_t l3_header_length(const PacketFields& f) noexcept {
  switch (f.link) {
    case LinkKind::RoceV2Ipv4: return Ipv4::kSize;
    case LinkKind::RoceV2Ipv6: return Ipv6::kSize;
    case LinkKind::IbLocal: return Lrh::kSize;
    case LinkKind::IbGlobal: return Lrh::kSize + Grh::kSize;
  }
  return 0;
}

std::size_t l3_offset(const PacketFields& f) noexcept {
  if (is_ib(f.link)) return 0;
  return Ethernet::kSize + (f.vlan ? VlanTag::kSize : 0);
}

/// Bytes from the BTH to the end of the ICRC.
std::size_t transport_length(const PacketFields& f) noexcept {
  return opcode_info(f.opcode).header_length + std::size_t{f.payload_length} + pad_for(f.payload_length) + kIcrcSize;
}

// One's-complement sum over bytes (big-endian 16-bit words), not folded.
std::uint64_t ones_sum(const std::byte* p, std::size_t n, std::uint64_t acc) noexcept {
  while (n >= 8) {
    acc += load_be16(p) + load_be16(p + 2) + load_be16(p + 4) + std::uint64_t{load_be16(p + 6)};
    p += 8;
    n -= 8;
  }
  while (n >= 2) {
    acc += load_be16(p);
    p += 2;
    n -= 2;
  }
  if (n) acc += static_cast<std::uint64_t>(std::to_integer<unsigned>(*p)) << 8;
  return acc;
}
std::uint16_t fold(std::uint64_t acc) noexcept {
  while (acc >> 16) acc = (acc & 0xFFFF) + (acc >> 16);
  return static_cast<std::uint16_t>(acc);
}

std::uint16_t ipv4_header_checksum(const std::byte* ip, std::size_t len) noexcept {
  // Sum with the checksum field counted as zero.
  std::uint64_t acc = ones_sum(ip, len, 0) - load_be16(ip + 10);
  return static_cast<std::uint16_t>(~fold(acc));
}

std::uint16_t udp6_checksum(const std::byte* ip6, const std::byte* udp, std::size_t udp_len) noexcept {
  std::uint64_t acc = ones_sum(ip6 + 8, 32, 0);  // source + destination address
  acc += udp_len;
  acc += kIpProtoUdp;
  acc = ones_sum(udp, udp_len, acc) - load_be16(udp + 6);
  std::uint16_t c = static_cast<std::uint16_t>(~fold(acc));
  return c == 0 ? 0xFFFF : c;
}

BuildError validate(const PacketFields& f) noexcept {
  const OpcodeInfo& info = opcode_info(f.opcode);
  if (!info.valid) return BuildError::InvalidOpcode;
  const auto check = [&](Hdr h, bool present) -> std::optional<BuildError> {
    if (info.has(h) && !present) return BuildError::MissingHeader;
    if (!info.has(h) && present) return BuildError::UnexpectedHeader;
    return std::nullopt;
  };
  // Fast path: the present extension headers are exactly the opcode's.
  const auto bit = [](Hdr h, bool present) -> std::uint16_t { return present ? static_cast<std::uint16_t>(h) : 0; };
  const std::uint16_t present =
      bit(Hdr::Deth, f.deth.has_value()) | bit(Hdr::Reth, f.reth.has_value()) |
      bit(Hdr::AtomicEth, f.atomic_eth.has_value()) | bit(Hdr::Aeth, f.aeth.has_value()) |
      bit(Hdr::AtomicAckEth, f.atomic_ack_eth.has_value()) | bit(Hdr::ImmDt, f.imm.has_value()) |
      bit(Hdr::Ieth, f.ieth.has_value());
  constexpr std::uint16_t kChecked =
      static_cast<std::uint16_t>(Hdr::Deth) | static_cast<std::uint16_t>(Hdr::Reth) |
      static_cast<std::uint16_t>(Hdr::AtomicEth) | static_cast<std::uint16_t>(Hdr::Aeth) |
      static_cast<std::uint16_t>(Hdr::AtomicAckEth) | static_cast<std::uint16_t>(Hdr::ImmDt) |
      static_cast<std::uint16_t>(Hdr::Ieth);
  if (present != (info.mask.bits() & kChecked)) {
    for (auto r : {check(Hdr::Deth, f.deth.has_value()), check(Hdr::Reth, f.reth.has_value()),
                   check(Hdr::AtomicEth, f.atomic_eth.has_value()), check(Hdr::Aeth, f.aeth.has_value()),
                   check(Hdr::AtomicAckEth, f.atomic_ack_eth.has_value()), check(Hdr::ImmDt, f.imm.has_value()),
                   check(Hdr::Ieth, f.ieth.has_value())})
      if (r) return *r;
  }
  if (!info.has(Hdr::Payload) && f.payload_length != 0) return BuildError::UnexpectedPayload;
  if (f.pad_count != pad_for(f.payload_length)) return BuildError::PadCountMismatch;
  // QPNs and PSNs are 24 bits by their types.
  if (f.tver > 15) return BuildError::FieldOutOfRange;
  if (f.aeth && f.aeth->msn > k24) return BuildError::FieldOutOfRange;
  const std::size_t tl = transport_length(f);
  if (is_roce(f.link)) {
    if (f.vlan && (f.vlan->pcp > 7 || f.vlan->vid > 0xFFF)) return BuildError::FieldOutOfRange;
    if (f.dscp > 63 || f.ecn > 3) return BuildError::FieldOutOfRange;
    if (f.link == LinkKind::RoceV2Ipv6 && f.ipv6_flow_label > 0xFFFFF) return BuildError::FieldOutOfRange;
    const std::size_t ip_len = (f.link == LinkKind::RoceV2Ipv4 ? Ipv4::kSize : 0) + Udp::kSize + tl;
    if (ip_len > 0xFFFF) return BuildError::PacketTooLong;
  } else {
    if (f.lrh_lnh != lnh_for(f.link)) return BuildError::LnhMismatch;
    if (f.lrh_vl > 15 || f.lrh_lver > 15 || f.lrh_sl > 15) return BuildError::FieldOutOfRange;
    if (f.link == LinkKind::IbGlobal && (f.grh_flow_label > 0xFFFFF || f.grh_next_header != kGrhNextHeaderIba))
      return BuildError::FieldOutOfRange;
    if ((l3_header_length(f) + tl) / 4 > 0x7FF) return BuildError::PacketTooLong;
  }
  return BuildError::BufferTooSmall;  // sentinel for "no error" (see caller)
}

void write_transport(const PacketFields& f, std::byte* bth_p) noexcept {
  const OpcodeInfo& info = opcode_info(f.opcode);
  std::memset(bth_p, 0, info.header_length);
  const std::span<std::byte> t(bth_p, info.header_length);
  Bth bth(t);
  bth.set_opcode(static_cast<std::uint8_t>(f.opcode));
  bth.set_se(f.solicited);
  bth.set_mig_req(f.mig_req);
  bth.set_pad_count(f.pad_count);
  bth.set_tver(f.tver);
  bth.set_pkey(f.pkey);
  bth.set_fecn(f.fecn);
  bth.set_becn(f.becn);
  bth.set_dest_qp(f.dest_qp);
  bth.set_ack_req(f.ack_req);
  bth.set_psn(f.psn);
  if (f.deth) {
    Deth h(t.subspan(info.offset(Hdr::Deth)));
    h.set_qkey(f.deth->qkey);
    h.set_src_qp(f.deth->src_qp);
  }
  if (f.reth) {
    Reth h(t.subspan(info.offset(Hdr::Reth)));
    h.set_va(f.reth->va);
    h.set_rkey(f.reth->rkey);
    h.set_dma_length(f.reth->dma_length);
  }
  if (f.atomic_eth) {
    AtomicEth h(t.subspan(info.offset(Hdr::AtomicEth)));
    h.set_va(f.atomic_eth->va);
    h.set_rkey(f.atomic_eth->rkey);
    h.set_swap_add(f.atomic_eth->swap_add);
    h.set_compare(f.atomic_eth->compare);
  }
  if (f.aeth) {
    Aeth h(t.subspan(info.offset(Hdr::Aeth)));
    h.set_syndrome(f.aeth->syndrome.raw());
    h.set_msn(f.aeth->msn);
  }
  if (f.atomic_ack_eth) AtomicAckEth(t.subspan(info.offset(Hdr::AtomicAckEth))).set_orig_remote_data(f.atomic_ack_eth->orig_remote_data);
  if (f.imm) ImmDt(t.subspan(info.offset(Hdr::ImmDt))).set_imm(*f.imm);
  if (f.ieth) Ieth(t.subspan(info.offset(Hdr::Ieth))).set_rkey(f.ieth->rkey);
  // CnpReserved: already zero.
}

/// Where write_headers() puts each part of a frame of `flen` bytes.
FrameLayout layout_of(const PacketFields& f, std::size_t flen) noexcept {
  FrameLayout l;
  l.link = f.link;
  l.l3_offset = static_cast<std::uint16_t>(l3_offset(f));
  l.l3_header_length = static_cast<std::uint16_t>(l3_header_length(f));
  l.bth_offset = static_cast<std::uint16_t>(l.l3_offset + l.l3_header_length + (is_roce(f.link) ? Udp::kSize : 0));
  l.payload_offset = static_cast<std::uint16_t>(l.bth_offset + opcode_info(f.opcode).header_length);
  l.payload_length = f.payload_length;
  l.pad_count = f.pad_count;
  l.icrc_offset = static_cast<std::uint32_t>(l.payload_offset + f.payload_length + f.pad_count);
  l.frame_length = static_cast<std::uint32_t>(flen);
  return l;
}

void write_ethernet(const PacketFields& f, std::span<std::byte> out) noexcept {
  Ethernet eth(out);
  eth.set_dst(f.eth_dst);
  eth.set_src(f.eth_src);
  const std::uint16_t l3_type = f.link == LinkKind::RoceV2Ipv4 ? kEtherTypeIpv4 : kEtherTypeIpv6;
  if (f.vlan) {
    eth.set_ether_type(kEtherTypeVlan);
    VlanTag tag(out.subspan(Ethernet::kSize));
    tag.set_pcp(f.vlan->pcp);
    tag.set_dei(f.vlan->dei);
    tag.set_vid(f.vlan->vid);
    tag.set_ether_type(l3_type);
  } else {
    eth.set_ether_type(l3_type);
  }
}

void write_ipv4(const PacketFields& f, std::span<std::byte> l3, std::size_t udp_len) noexcept {
  Ipv4 ip(l3);
  ip.set_version(4);
  ip.set_ihl(5);
  ip.set_dscp(f.dscp);
  ip.set_ecn(f.ecn);
  ip.set_total_length(static_cast<std::uint16_t>(Ipv4::kSize + udp_len));
  ip.set_identification(f.ipv4_id);
  ip.set_flags(f.ipv4_dont_fragment ? 0x2 : 0x0);
  ip.set_ttl(f.ttl);
  ip.set_protocol(kIpProtoUdp);
  ip.set_src(ipv4_of(f.ip_src));
  ip.set_dst(ipv4_of(f.ip_dst));
}

void write_ipv6(const PacketFields& f, std::span<std::byte> l3, std::size_t udp_len) noexcept {
  Ipv6 ip(l3);
  ip.set_version(6);
  ip.set_traffic_class(static_cast<std::uint8_t>((f.dscp << 2) | f.ecn));
  ip.set_flow_label(f.ipv6_flow_label);
  ip.set_payload_length(static_cast<std::uint16_t>(udp_len));
  ip.set_next_header(kIpProtoUdp);
  ip.set_hop_limit(f.ttl);
  ip.set_src(f.ip_src);
  ip.set_dst(f.ip_dst);
}

/// Ethernet (and VLAN tag), IP and UDP headers of a RoCEv2 frame.
void write_roce_headers(const PacketFields& f, std::span<std::byte> out, const FrameLayout& l) noexcept {
  write_ethernet(f, out);
  const std::span<std::byte> l3 = out.subspan(l.l3_offset);
  const std::size_t udp_len = Udp::kSize + transport_length(f);
  if (f.link == LinkKind::RoceV2Ipv4) {
    write_ipv4(f, l3, udp_len);
  } else {
    write_ipv6(f, l3, udp_len);
  }
  Udp udp(l3.subspan(l.l3_header_length));
  udp.set_src_port(f.udp_src_port);
  udp.set_dst_port(kRoceV2Port);
  udp.set_length(static_cast<std::uint16_t>(udp_len));
}

/// LRH (and GRH) of a native InfiniBand frame.
void write_ib_headers(const PacketFields& f, std::span<std::byte> out, const FrameLayout& l) noexcept {
  const std::size_t tl = transport_length(f);
  Lrh lrh(out);
  lrh.set_vl(f.lrh_vl);
  lrh.set_lver(f.lrh_lver);
  lrh.set_sl(f.lrh_sl);
  lrh.set_lnh(f.lrh_lnh);
  lrh.set_dlid(f.dlid);
  lrh.set_pkt_len(static_cast<std::uint16_t>((l.l3_header_length + tl) / 4));
  lrh.set_slid(f.slid);
  if (f.link != LinkKind::IbGlobal) return;
  Grh grh(out.subspan(Lrh::kSize));
  grh.set_ipver(6);
  grh.set_tclass(f.grh_tclass);
  grh.set_flow_label(f.grh_flow_label);
  grh.set_paylen(static_cast<std::uint16_t>(tl));
  grh.set_nxthdr(f.grh_next_header);
  grh.set_hoplmt(f.grh_hop_limit);
  grh.set_sgid(f.sgid);
  grh.set_dgid(f.dgid);
}

}  // namespace

std::size_t frame_length(const PacketFields& f) noexcept {
  const std::size_t n = l3_offset(f) + l3_header_length(f) + transport_length(f);
  if (is_ib(f.link)) return n + kVcrcSize;
  return std::max(n + Udp::kSize, kEthernetMinFrame);
}

BuildResult<FrameLayout> write_headers(const PacketFields& f, std::span<std::byte> out) noexcept {
  if (const BuildError e = validate(f); e != BuildError::BufferTooSmall) return e;
  const std::size_t flen = frame_length(f);
  if (out.size() < flen) return BuildError::BufferTooSmall;
  const FrameLayout l = layout_of(f, flen);
  std::memset(out.data(), 0, l.bth_offset);  // every header before the BTH
  if (is_roce(f.link)) {
    write_roce_headers(f, out, l);
  } else {
    write_ib_headers(f, out, l);
  }
  write_transport(f, out.data() + l.bth_offset);
  return l;
}

void patch_headers(std::span<std::byte> headers, const FrameLayout& l, const PerPacketFields& p) noexcept {
  const Bth bth(headers.subspan(l.bth_offset));
  bth.set_psn(p.psn);
  bth.set_ack_req(p.ack_req);
  bth.set_se(p.solicited);
  if (l.link == LinkKind::RoceV2Ipv4) Ipv4(headers.subspan(l.l3_offset)).set_identification(p.ipv4_id);
}

void seal(std::span<std::byte> frame, const FrameLayout& l) noexcept {
  seal_without_crc(frame, l);
  std::byte* p = frame.data();
  store_le32(p + l.icrc_offset, compute_icrc(frame, l));
  if (is_roce(l.link)) {
    // The UDP checksum over IPv6 covers the ICRC, so it comes last.
    if (l.link == LinkKind::RoceV2Ipv6) {
      std::byte* ip = p + l.l3_offset;
      std::byte* udp = ip + l.l3_header_length;
      store_be16(udp + 6, udp6_checksum(ip, udp, load_be16(udp + 4)));
    }
  } else {
    store_le16(p + l.icrc_offset + kIcrcSize, compute_vcrc(frame, l));
  }
}

bool seal(std::span<std::byte> frame, LinkKind link) noexcept {
  auto r = parse(frame, is_roce(link) ? LinkType::Ethernet : LinkType::Infiniband);
  if (!r || r->layout.link != link) return false;
  seal(frame, r->layout);
  return true;
}

void seal_without_crc(std::span<std::byte> frame, const FrameLayout& l) noexcept {
  std::byte* p = frame.data();
  std::memset(p + l.icrc_offset - l.pad_count, 0, l.pad_count);
  if (is_roce(l.link)) {
    const std::size_t end = l.icrc_offset + kIcrcSize;
    if (l.frame_length > end) std::memset(p + end, 0, l.frame_length - end);
  }
  seal_headers(frame, l);
}

void seal_headers(std::span<std::byte> frame, const FrameLayout& l) noexcept {
  if (!is_roce(l.link)) return;
  std::byte* ip = frame.data() + l.l3_offset;
  std::byte* udp = ip + l.l3_header_length;
  store_be16(udp + 6, 0);
  if (l.link == LinkKind::RoceV2Ipv4) store_be16(ip + 10, ipv4_header_checksum(ip, l.l3_header_length));
}

bool complete_seal(std::span<std::byte> frame, LinkType link_type) noexcept {
  auto r = parse(frame, link_type);
  if (!r) return false;
  seal(frame, r->layout);
  return true;
}

void complete_seal_ethernet(std::span<std::byte> frame) noexcept { complete_seal(frame, LinkType::Ethernet); }
void complete_seal_infiniband(std::span<std::byte> frame) noexcept { complete_seal(frame, LinkType::Infiniband); }

BuildResult<std::size_t> build(const PacketFields& f, std::span<const std::byte> payload,
                               std::span<std::byte> out) noexcept {
  if (payload.size() != f.payload_length) return BuildError::PayloadSizeMismatch;
  auto l = write_headers(f, out);
  if (!l) return l.error();
  if (!payload.empty()) std::memcpy(out.data() + l->payload_offset, payload.data(), payload.size());
  seal(out, *l);
  return std::size_t{l->frame_length};
}

namespace {

ParseError truncated_at(Hdr h) noexcept {
  switch (h) {
    case Hdr::Deth: return ParseError::TruncatedDeth;
    case Hdr::Reth: return ParseError::TruncatedReth;
    case Hdr::AtomicEth: return ParseError::TruncatedAtomicEth;
    case Hdr::Aeth: return ParseError::TruncatedAeth;
    case Hdr::AtomicAckEth: return ParseError::TruncatedAtomicAckEth;
    case Hdr::ImmDt: return ParseError::TruncatedImmDt;
    case Hdr::Ieth: return ParseError::TruncatedIeth;
    default: return ParseError::TruncatedCnpReserved;
  }
}

constexpr bool is_valid_pmtu(std::size_t n) noexcept {
  return n == 256 || n == 512 || n == 1024 || n == 2048 || n == 4096;
}

/// The BTH's fields.
void read_bth(const ConstBth& bth, PacketFields& f) noexcept {
  f.opcode = static_cast<Opcode>(bth.opcode());
  f.solicited = bth.se();
  f.mig_req = bth.mig_req();
  f.pad_count = bth.pad_count();
  f.tver = bth.tver();
  f.pkey = bth.pkey();
  f.fecn = bth.fecn();
  f.becn = bth.becn();
  f.dest_qp = bth.dest_qp();
  f.ack_req = bth.ack_req();
  f.psn = bth.psn();
}

/// The extension headers the opcode has, in `t` (BTH onwards), all present.
void read_extension_headers(const OpcodeInfo& info, std::span<const std::byte> t, PacketFields& f) noexcept {
  if (info.has(Hdr::Deth)) {
    const ConstDeth h(t.subspan(info.offset(Hdr::Deth)));
    f.deth = DethFields{h.qkey(), h.src_qp()};
  }
  if (info.has(Hdr::Reth)) {
    const ConstReth h(t.subspan(info.offset(Hdr::Reth)));
    f.reth = RethFields{h.va(), h.rkey(), h.dma_length()};
  }
  if (info.has(Hdr::AtomicEth)) {
    const ConstAtomicEth h(t.subspan(info.offset(Hdr::AtomicEth)));
    f.atomic_eth = AtomicEthFields{h.va(), h.rkey(), h.swap_add(), h.compare()};
  }
  if (info.has(Hdr::Aeth)) {
    const ConstAeth h(t.subspan(info.offset(Hdr::Aeth)));
    f.aeth = AethFields{Syndrome(h.syndrome()), h.msn()};
  }
  if (info.has(Hdr::AtomicAckEth))
    f.atomic_ack_eth = AtomicAckEthFields{ConstAtomicAckEth(t.subspan(info.offset(Hdr::AtomicAckEth))).orig_remote_data()};
  if (info.has(Hdr::ImmDt)) f.imm = ConstImmDt(t.subspan(info.offset(Hdr::ImmDt))).imm();
  if (info.has(Hdr::Ieth)) f.ieth = IethFields{ConstIeth(t.subspan(info.offset(Hdr::Ieth))).rkey()};
}

/// The payload length from the `bytes` between the headers and the ICRC (payload
/// and pad): a FIRST or MIDDLE carries a whole PMTU, no packet more than 4096.
std::optional<ParseError> read_payload_length(const OpcodeInfo& info, std::size_t bytes, PacketFields& f) noexcept {
  if (!info.has(Hdr::Payload) && bytes != 0) return ParseError::UnexpectedPayload;
  if (f.pad_count > bytes) return ParseError::PadExceedsPayload;
  if (bytes % 4 != 0) return ParseError::PayloadNotAligned;
  if (info.position == Position::First || info.position == Position::Middle) {
    if (!is_valid_pmtu(bytes) || f.pad_count != 0) return ParseError::BadMtuPayload;
  } else if (bytes > 4096) {
    return ParseError::PayloadTooLong;
  }
  f.payload_length = static_cast<std::uint32_t>(bytes - f.pad_count);
  return std::nullopt;
}

/// Decodes BTH..ICRC in frame[l.bth_offset, end), end = one past the ICRC, of
/// which the bytes from frame.size() on may be missing (see parse()).
std::optional<ParseError> parse_transport(std::span<const std::byte> frame, std::size_t end, ParsedPacket& out,
                                          bool read_crcs) noexcept {
  FrameLayout& l = out.layout;
  PacketFields& f = out.fields;
  const std::size_t avail = end - l.bth_offset;
  const std::size_t present = frame.size() > l.bth_offset ? std::min(avail, frame.size() - l.bth_offset) : 0;
  if (present < kBthSize) return ParseError::TruncatedBth;
  const std::span<const std::byte> t = frame.subspan(l.bth_offset, present);
  const ConstBth bth(t);
  const OpcodeInfo& info = opcode_info(bth.opcode());
  if (!info.valid) return ParseError::InvalidOpcode;
  if (bth.tver() != 0) return ParseError::BadTver;
  if (std::size_t{info.header_length} + kIcrcSize > avail || info.header_length > present) {  // else every header fits
    for (Hdr h : kHeaderOrder)
      if (info.has(h) && info.offset(h) + header_size(h) > present) return truncated_at(h);
    return ParseError::TruncatedIcrc;
  }
  read_bth(bth, f);
  read_extension_headers(info, t, f);
  if (auto e = read_payload_length(info, avail - info.header_length - kIcrcSize, f)) return e;

  l.payload_offset = static_cast<std::uint16_t>(l.bth_offset + info.header_length);
  l.payload_length = f.payload_length;
  l.pad_count = f.pad_count;
  l.icrc_offset = static_cast<std::uint32_t>(end - kIcrcSize);
  out.payload = frame.subspan(l.payload_offset, std::min<std::size_t>(f.payload_length, frame.size() - l.payload_offset));
  if (read_crcs && l.icrc_offset + kIcrcSize <= frame.size()) out.icrc = load_le32(frame.data() + l.icrc_offset);
  return std::nullopt;
}

/// Where an IP datagram's parts lie in the frame.
struct IpExtent {
  std::size_t udp_off = 0;
  std::size_t end = 0;      // one past the IP datagram
  std::size_t payload = 0;  // bytes after the IP header(s)
};

/// The IP header of EtherType `type` at `off`, up to where its UDP header lies;
/// `size` is the frame's length on the wire.
std::optional<ParseError> parse_ip(std::span<const std::byte> frame, std::uint16_t type, std::size_t off,
                                   std::size_t size, ParsedPacket& out, IpExtent& x) noexcept;

// `size` is the frame's length on the wire, at least frame.size() (see parse()).
std::optional<ParseError> parse_ethernet(std::span<const std::byte> frame, std::size_t size, ParsedPacket& out,
                                         bool read_crcs) noexcept {
  PacketFields& f = out.fields;
  FrameLayout& l = out.layout;
  const auto eth = try_view<ConstEthernet>(frame);
  if (!eth) return ParseError::TruncatedEthernet;
  f.eth_dst = eth->dst();
  f.eth_src = eth->src();
  std::uint16_t type = eth->ether_type();
  std::size_t off = Ethernet::kSize;
  if (type == kEtherTypeVlan) {
    const auto tag = try_view<ConstVlanTag>(frame, off);
    if (!tag) return ParseError::TruncatedVlan;
    f.vlan = VlanFields{tag->pcp(), tag->dei(), tag->vid()};
    type = tag->ether_type();
    off += VlanTag::kSize;
  }
  l.l3_offset = static_cast<std::uint16_t>(off);
  IpExtent ip;
  if (auto e = parse_ip(frame, type, off, size, out, ip)) return e;
  // ip.end <= size and ip.udp_off + 8 <= ip.end hold here.
  const auto udp = try_view<ConstUdp>(frame, ip.udp_off);
  if (!udp) return ParseError::TruncatedUdp;
  if (udp->length() != ip.payload) return ParseError::UdpLengthMismatch;
  f.udp_src_port = udp->src_port();
  out.udp_checksum = udp->checksum();
  l.bth_offset = static_cast<std::uint16_t>(ip.udp_off + Udp::kSize);
  if (auto e = parse_transport(frame, ip.end, out, read_crcs)) return *e;
  l.frame_length = static_cast<std::uint32_t>(size);
  if (frame.size() >= ip.end) out.trailer_length = static_cast<std::uint32_t>(frame.size() - ip.end);
  return std::nullopt;
}

std::optional<ParseError> parse_ip(std::span<const std::byte> frame, std::uint16_t type, std::size_t off,
                                   std::size_t size, ParsedPacket& out, IpExtent& x) noexcept {
  PacketFields& f = out.fields;
  FrameLayout& l = out.layout;
  if (type == kEtherTypeIpv4) {
    f.link = LinkKind::RoceV2Ipv4;
    const auto ip = try_view<ConstIpv4>(frame, off);
    if (!ip) return ParseError::TruncatedIpv4;
    if (ip->version() != 4) return ParseError::BadIpVersion;
    if (ip->ihl() < 5) return ParseError::BadIhl;
    const std::size_t hl = std::size_t{ip->ihl()} * 4;
    if (frame.size() - off < hl) return ParseError::TruncatedIpv4;  // the headers must be there
    if (ip->protocol() != kIpProtoUdp) return ParseError::NotUdp;
    if (ip->more_fragments() || ip->fragment_offset() != 0) return ParseError::IpFragment;
    x.udp_off = off + hl;
    if (const auto udp = try_view<ConstUdp>(frame, x.udp_off); udp && udp->dst_port() != kRoceV2Port)
      return ParseError::NotRoceV2Port;
    if (ip->total_length() < hl + Udp::kSize || ip->total_length() > size - off) return ParseError::IpLengthMismatch;
    x.end = off + ip->total_length();
    x.payload = ip->total_length() - hl;
    l.l3_header_length = static_cast<std::uint16_t>(hl);
    f.dscp = ip->dscp();
    f.ecn = ip->ecn();
    f.ttl = ip->ttl();
    f.ipv4_id = ip->identification();
    f.ipv4_dont_fragment = ip->dont_fragment();
    f.ip_src = ipv4_mapped(ip->src());
    f.ip_dst = ipv4_mapped(ip->dst());
  } else if (type == kEtherTypeIpv6) {
    f.link = LinkKind::RoceV2Ipv6;
    const auto ip = try_view<ConstIpv6>(frame, off);
    if (!ip) return ParseError::TruncatedIpv6;
    if (ip->version() != 6) return ParseError::BadIpVersion;
    if (ip->next_header() != kIpProtoUdp) return ParseError::NotUdp;
    x.udp_off = off + Ipv6::kSize;
    if (const auto udp = try_view<ConstUdp>(frame, x.udp_off); udp && udp->dst_port() != kRoceV2Port)
      return ParseError::NotRoceV2Port;
    if (ip->payload_length() < Udp::kSize || ip->payload_length() > size - x.udp_off)
      return ParseError::IpLengthMismatch;
    x.end = x.udp_off + ip->payload_length();
    x.payload = ip->payload_length();
    l.l3_header_length = Ipv6::kSize;
    f.dscp = ip->dscp();
    f.ecn = ip->ecn();
    f.ttl = ip->hop_limit();
    f.ipv6_flow_label = ip->flow_label();
    f.ip_src = ip->src();
    f.ip_dst = ip->dst();
  } else {
    return ParseError::NotIp;
  }
  return std::nullopt;
}

std::optional<ParseError> parse_ib(std::span<const std::byte> frame, std::size_t size, ParsedPacket& out,
                                   bool read_crcs) noexcept {
  PacketFields& f = out.fields;
  FrameLayout& l = out.layout;
  const auto lrh = try_view<ConstLrh>(frame);
  if (!lrh) return ParseError::TruncatedLrh;
  if (lrh->lver() != 0) return ParseError::BadLver;
  if (lrh->lnh() < 2) return ParseError::NotIbaTransport;
  f.link = lrh->lnh() == 3 ? LinkKind::IbGlobal : LinkKind::IbLocal;
  f.lrh_vl = lrh->vl();
  f.lrh_lver = lrh->lver();
  f.lrh_sl = lrh->sl();
  f.lrh_lnh = lrh->lnh();
  f.dlid = lrh->dlid();
  f.slid = lrh->slid();
  const std::size_t pkt_bytes = std::size_t{lrh->pkt_len()} * 4;  // LRH..ICRC
  std::size_t hl = Lrh::kSize;
  if (f.link == LinkKind::IbGlobal) {
    const auto grh = try_view<ConstGrh>(frame, Lrh::kSize);
    if (!grh) return ParseError::TruncatedGrh;
    if (grh->ipver() != 6 || grh->nxthdr() != kGrhNextHeaderIba) return ParseError::BadGrh;
    f.grh_tclass = grh->tclass();
    f.grh_flow_label = grh->flow_label();
    f.grh_hop_limit = grh->hoplmt();
    f.grh_next_header = grh->nxthdr();
    f.sgid = grh->sgid();
    f.dgid = grh->dgid();
    hl += Grh::kSize;
    if (pkt_bytes >= hl && grh->paylen() != pkt_bytes - hl) return ParseError::GrhLengthMismatch;
  }
  if (pkt_bytes < hl + kBthSize + kIcrcSize) return ParseError::LrhLengthMismatch;
  if (pkt_bytes > size) return ParseError::LrhLengthMismatch;
  if (pkt_bytes + kVcrcSize > size) return ParseError::TruncatedVcrc;
  l.link = f.link;
  l.l3_offset = 0;
  l.l3_header_length = static_cast<std::uint16_t>(hl);
  l.bth_offset = static_cast<std::uint16_t>(hl);
  if (auto e = parse_transport(frame, pkt_bytes, out, read_crcs)) return *e;
  l.frame_length = static_cast<std::uint32_t>(pkt_bytes + kVcrcSize);
  if (frame.size() >= l.frame_length) {
    if (read_crcs) out.vcrc = load_le16(frame.data() + pkt_bytes);
    out.trailer_length = static_cast<std::uint32_t>(frame.size() - l.frame_length);
  }
  return std::nullopt;
}

}  // namespace

std::optional<ConstBth> bth_of(std::span<const std::byte> frame, LinkType link_type) noexcept {
  std::size_t bth = 0;
  if (link_type == LinkType::Infiniband) {
    const auto lrh = try_view<ConstLrh>(frame);
    if (!lrh || lrh->lnh() < 2) return std::nullopt;
    bth = Lrh::kSize + (lrh->lnh() == 3 ? Grh::kSize : 0);
  } else {
    const auto eth = try_view<ConstEthernet>(frame);
    if (!eth) return std::nullopt;
    std::uint16_t type = eth->ether_type();
    std::size_t off = Ethernet::kSize;
    if (type == kEtherTypeVlan) {
      const auto tag = try_view<ConstVlanTag>(frame, off);
      if (!tag) return std::nullopt;
      type = tag->ether_type();
      off += VlanTag::kSize;
    }
    if (type == kEtherTypeIpv4) {
      const auto ip = try_view<ConstIpv4>(frame, off);
      if (!ip) return std::nullopt;
      bth = off + std::size_t{ip->ihl()} * 4 + Udp::kSize;
    } else if (type == kEtherTypeIpv6) {
      bth = off + Ipv6::kSize + Udp::kSize;
    } else {
      return std::nullopt;
    }
  }
  return try_view<ConstBth>(frame, bth);
}

std::optional<Qpn> dest_qp_of(std::span<const std::byte> frame, LinkType link_type) noexcept {
  const auto b = bth_of(frame, link_type);
  if (!b) return std::nullopt;
  return b->dest_qp();
}

void parse(std::span<const std::byte> frame, LinkType link_type, std::size_t wire_length, bool read_crcs,
           ParseResult<ParsedPacket>& r) noexcept {
  const std::size_t size = std::max(wire_length, frame.size());
  // Decoded in place: a ParsedPacket is a few hundred bytes, and this runs per packet.
  r.emplace();
  ParsedPacket& out = *r;
  const std::optional<ParseError> e =
      link_type == LinkType::Ethernet ? parse_ethernet(frame, size, out, read_crcs) : parse_ib(frame, size, out, read_crcs);
  if (e) {
    r = *e;
  } else {
    out.layout.link = out.fields.link;
    out.missing = static_cast<std::uint32_t>(size - frame.size());
  }
}

ParseResult<ParsedPacket> parse(std::span<const std::byte> frame, LinkType link_type, std::size_t wire_length,
                                bool read_crcs) noexcept {
  ParseResult<ParsedPacket> r(std::in_place);
  parse(frame, link_type, wire_length, read_crcs, r);
  return r;
}

bool icrc_ok(std::span<const std::byte> frame, const ParsedPacket& p) noexcept {
  if (frame.size() < p.layout.icrc_offset + kIcrcSize) return false;
  return compute_icrc(frame, p.layout) == p.icrc;
}

bool vcrc_ok(std::span<const std::byte> frame, const ParsedPacket& p) noexcept {
  if (is_roce(p.layout.link)) return true;
  if (frame.size() < p.layout.icrc_offset + kIcrcSize + kVcrcSize) return false;
  return compute_vcrc(frame, p.layout) == p.vcrc;
}

bool mark_congestion_experienced(std::span<std::byte> frame) noexcept {
  if (frame.size() < 14) return false;
  std::size_t l3 = 14;
  std::uint16_t type = load_be16(frame.data() + 12);
  if (type == kEtherTypeVlan) {
    if (frame.size() < 18) return false;
    type = load_be16(frame.data() + 16);
    l3 = 18;
  }
  if (type != kEtherTypeIpv4 && type != kEtherTypeIpv6) return false;
  return mark_ecn_ce(frame, l3);
}

bool mark_ecn_ce(std::span<std::byte> frame, std::size_t ip_offset) noexcept {
  if (frame.size() < ip_offset + Ipv4::kSize) return false;
  std::byte* ip = frame.data() + ip_offset;
  const unsigned version = std::to_integer<unsigned>(ip[0]) >> 4;
  if (version == 4) {
    const unsigned ecn = std::to_integer<unsigned>(ip[1]) & 0x3;
    if (ecn == 0) return false;
    if (ecn == 3) return true;
    const std::size_t ihl = (std::to_integer<unsigned>(ip[0]) & 0x0F) * 4u;
    if (ihl < Ipv4::kSize || frame.size() < ip_offset + ihl) return false;
    // Incremental update (RFC 1624, eqn. 3), as a switch does it: a header whose
    // checksum was wrong stays wrong instead of being repaired by the marking.
    const std::uint16_t old_word = load_be16(ip);
    ip[1] |= std::byte{0x03};
    const std::uint16_t new_word = load_be16(ip);
    const std::uint64_t acc = std::uint16_t(~load_be16(ip + 10)) + std::uint64_t{std::uint16_t(~old_word)} + new_word;
    store_be16(ip + 10, static_cast<std::uint16_t>(~fold(acc)));
    return true;
  }
  if (version == 6 && frame.size() >= ip_offset + Ipv6::kSize) {
    // Traffic class: bits 4..11; its ECN bits are bits 10..11, in byte 1 (0x30).
    const unsigned ecn = (std::to_integer<unsigned>(ip[1]) >> 4) & 0x3;
    if (ecn == 0) return false;
    ip[1] |= std::byte{0x30};
    return true;
  }
  return false;
}

bool ipv4_checksum_ok(std::span<const std::byte> frame, const ParsedPacket& p) noexcept {
  if (p.layout.link != LinkKind::RoceV2Ipv4) return true;
  const std::byte* ip = frame.data() + p.layout.l3_offset;
  return fold(ones_sum(ip, p.layout.l3_header_length, 0)) == 0xFFFF;
}

bool udp_checksum_ok(std::span<const std::byte> frame, const ParsedPacket& p) noexcept {
  if (is_ib(p.layout.link) || p.udp_checksum == 0) return true;
  const std::byte* ip = frame.data() + p.layout.l3_offset;
  const std::byte* udp = ip + p.layout.l3_header_length;
  const std::size_t udp_len = load_be16(udp + 4);
  if (p.layout.link == LinkKind::RoceV2Ipv6) return udp6_checksum(ip, udp, udp_len) == p.udp_checksum;
  // IPv4 pseudo header: source, destination, protocol, UDP length.
  std::uint64_t acc = ones_sum(ip + 12, 8, 0) + kIpProtoUdp + udp_len;
  acc = ones_sum(udp, udp_len, acc);
  return fold(acc) == 0xFFFF;
}

}  // namespace rnicsim::packet
