// Header views: one small class per wire header over a byte span. A view owns
// byte order and bit layout and holds no data of its own: `Bth` (getters and
// setters) over std::byte, `ConstBth` (getters) over const std::byte. No
// bitfields: every field is a shift and mask on big-endian bytes. Field comments
// give the spec name, the bit width and the bit position from the header's first
// (most significant) bit, as DPDK's rte_ib.h does. Sources: IEEE 802.3 / 802.1Q,
// RFC 791, RFC 8200, RFC 768, IBA Vol. 1 (chapters 7-9) and its RoCEv2 annex A17.
#pragma once

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "packet/bytes.hpp"
#include "packet/numbers.hpp"
#include "packet/psn.hpp"

namespace rnicsim::packet {

using MacAddr = std::array<std::uint8_t, 6>;
/// 128-bit address: an IPv6 address, an IB GID, or an IPv4 address in its
/// IPv4-mapped form ::ffff:a.b.c.d (RFC 4291 2.5.5.2).
using Ipv6Addr = std::array<std::uint8_t, 16>;
using Gid = Ipv6Addr;

inline constexpr std::uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr std::uint16_t kEtherTypeIpv6 = 0x86DD;
inline constexpr std::uint16_t kEtherTypeVlan = 0x8100;
inline constexpr std::uint16_t kEtherTypeMacControl = 0x8808;  // PAUSE / PFC
inline constexpr std::uint16_t kEtherTypeRoceV1 = 0x8915;
inline constexpr std::uint8_t kIpProtoUdp = 17;
inline constexpr std::uint16_t kRoceV2Port = 4791;
/// GRH NxtHdr value announcing an IBA transport header (BTH).
inline constexpr std::uint8_t kGrhNextHeaderIba = 0x1B;

/// Common base: pointer + fixed size, typed field access helpers.
template <typename B, std::size_t N>
class HeaderView {
 public:
  static_assert(std::is_same_v<std::remove_const_t<B>, std::byte>);
  static constexpr std::size_t kSize = N;
  static constexpr bool kMutable = !std::is_const_v<B>;
  using byte_type = B;

  constexpr explicit HeaderView(std::span<B> s) noexcept : p_(s.data()) { assert(s.size() >= N); }
  constexpr std::span<B, N> bytes() const noexcept { return std::span<B, N>(p_, N); }
  constexpr B* data() const noexcept { return p_; }

 protected:
  constexpr std::uint8_t get8(std::size_t o) const noexcept { return load_u8(p_ + o); }
  constexpr std::uint16_t get16(std::size_t o) const noexcept { return load_be16(p_ + o); }
  constexpr std::uint32_t get24(std::size_t o) const noexcept { return load_be24(p_ + o); }
  constexpr std::uint32_t get32(std::size_t o) const noexcept { return load_be32(p_ + o); }
  constexpr std::uint64_t get64(std::size_t o) const noexcept { return load_be64(p_ + o); }
  /// Bits [shift, shift+width) counted from the LSB of byte o.
  constexpr std::uint8_t bits8(std::size_t o, unsigned shift, unsigned width) const noexcept {
    return static_cast<std::uint8_t>((get8(o) >> shift) & ((1u << width) - 1u));
  }
  constexpr void set8(std::size_t o, std::uint8_t v) const noexcept requires kMutable { store_u8(p_ + o, v); }
  constexpr void set16(std::size_t o, std::uint16_t v) const noexcept requires kMutable { store_be16(p_ + o, v); }
  constexpr void set24(std::size_t o, std::uint32_t v) const noexcept requires kMutable { store_be24(p_ + o, v); }
  constexpr void set32(std::size_t o, std::uint32_t v) const noexcept requires kMutable { store_be32(p_ + o, v); }
  constexpr void set64(std::size_t o, std::uint64_t v) const noexcept requires kMutable { store_be64(p_ + o, v); }
  constexpr void set_bits8(std::size_t o, unsigned shift, unsigned width, unsigned v) const noexcept requires kMutable {
    const unsigned mask = ((1u << width) - 1u) << shift;
    set8(o, static_cast<std::uint8_t>((get8(o) & ~mask) | ((v << shift) & mask)));
  }
  template <std::size_t K>
  constexpr std::array<std::uint8_t, K> get_array(std::size_t o) const noexcept {
    std::array<std::uint8_t, K> a{};
    for (std::size_t i = 0; i < K; ++i) a[i] = get8(o + i);
    return a;
  }
  template <std::size_t K>
  constexpr void set_array(std::size_t o, const std::array<std::uint8_t, K>& a) const noexcept requires kMutable {
    for (std::size_t i = 0; i < K; ++i) set8(o + i, a[i]);
  }

  B* p_;
};

/// A view of type View at `offset` in `s`, or nullopt when the span is too short
/// (a view's constructor asserts that the span holds its kSize bytes instead).
template <typename View>
constexpr std::optional<View> try_view(std::span<typename View::byte_type> s, std::size_t offset = 0) noexcept {
  if (offset > s.size() || s.size() - offset < View::kSize) return std::nullopt;
  return View(s.subspan(offset));
}

/// Ethernet II header (IEEE 802.3), 14 bytes. The FCS is not part of the view.
template <typename B>
class BasicEthernet : public HeaderView<B, 14> {
  using Base = HeaderView<B, 14>;
 public:
  using Base::Base;
  /// Destination MAC address, 48 bits, bytes 0..5.
  constexpr MacAddr dst() const noexcept { return this->template get_array<6>(0); }
  /// Source MAC address, 48 bits, bytes 6..11.
  constexpr MacAddr src() const noexcept { return this->template get_array<6>(6); }
  /// EtherType (or TPID 0x8100 when an 802.1Q tag follows), 16 bits, bytes 12..13.
  constexpr std::uint16_t ether_type() const noexcept { return this->get16(12); }
  constexpr void set_dst(const MacAddr& v) const noexcept requires Base::kMutable { this->set_array(0, v); }
  constexpr void set_src(const MacAddr& v) const noexcept requires Base::kMutable { this->set_array(6, v); }
  constexpr void set_ether_type(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(12, v); }
};

/// IEEE 802.1Q tag body, 4 bytes, following an Ethernet header whose EtherType
/// field holds the TPID 0x8100: TCI (PCP, DEI, VID) then the encapsulated EtherType.
template <typename B>
class BasicVlanTag : public HeaderView<B, 4> {
  using Base = HeaderView<B, 4>;
 public:
  using Base::Base;
  /// PCP, Priority Code Point, 3 bits, bits 0..2 (the PFC priority).
  constexpr std::uint8_t pcp() const noexcept { return this->bits8(0, 5, 3); }
  /// DEI, Drop Eligible Indicator, 1 bit, bit 3.
  constexpr bool dei() const noexcept { return this->bits8(0, 4, 1) != 0; }
  /// VID, VLAN identifier, 12 bits, bits 4..15.
  constexpr std::uint16_t vid() const noexcept { return this->get16(0) & 0x0FFF; }
  /// Encapsulated EtherType, 16 bits, bits 16..31.
  constexpr std::uint16_t ether_type() const noexcept { return this->get16(2); }
  constexpr void set_pcp(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(0, 5, 3, v); }
  constexpr void set_dei(bool v) const noexcept requires Base::kMutable { this->set_bits8(0, 4, 1, v ? 1 : 0); }
  constexpr void set_vid(std::uint16_t v) const noexcept requires Base::kMutable {
    this->set16(0, static_cast<std::uint16_t>((this->get16(0) & 0xF000) | (v & 0x0FFF)));
  }
  constexpr void set_ether_type(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(2, v); }
};

/// IPv4 header (RFC 791) without options, 20 bytes. `ihl()` tells whether
/// options follow (IHL > 5); the options are not interpreted.
template <typename B>
class BasicIpv4 : public HeaderView<B, 20> {
  using Base = HeaderView<B, 20>;
 public:
  using Base::Base;
  /// Version, 4 bits, bits 0..3 (4).
  constexpr std::uint8_t version() const noexcept { return this->bits8(0, 4, 4); }
  /// IHL, Internet Header Length in 32-bit words, 4 bits, bits 4..7 (5..15).
  constexpr std::uint8_t ihl() const noexcept { return this->bits8(0, 0, 4); }
  /// DSCP, Differentiated Services Code Point, 6 bits, bits 8..13 (ex-TOS).
  constexpr std::uint8_t dscp() const noexcept { return this->bits8(1, 2, 6); }
  /// ECN, Explicit Congestion Notification, 2 bits, bits 14..15 (RFC 3168).
  constexpr std::uint8_t ecn() const noexcept { return this->bits8(1, 0, 2); }
  /// The whole former TOS byte (DSCP << 2 | ECN), 8 bits, bits 8..15.
  constexpr std::uint8_t tos() const noexcept { return this->get8(1); }
  /// Total Length of header + data in bytes, 16 bits, bits 16..31.
  constexpr std::uint16_t total_length() const noexcept { return this->get16(2); }
  /// Identification, 16 bits, bits 32..47.
  constexpr std::uint16_t identification() const noexcept { return this->get16(4); }
  /// Flags, 3 bits, bits 48..50: reserved (must be 0), DF, MF.
  constexpr std::uint8_t flags() const noexcept { return this->bits8(6, 5, 3); }
  constexpr bool dont_fragment() const noexcept { return (flags() & 0x2) != 0; }
  constexpr bool more_fragments() const noexcept { return (flags() & 0x1) != 0; }
  /// Fragment Offset in 8-byte units, 13 bits, bits 51..63.
  constexpr std::uint16_t fragment_offset() const noexcept { return this->get16(6) & 0x1FFF; }
  /// TTL, Time To Live, 8 bits, bits 64..71.
  constexpr std::uint8_t ttl() const noexcept { return this->get8(8); }
  /// Protocol, 8 bits, bits 72..79 (17 = UDP).
  constexpr std::uint8_t protocol() const noexcept { return this->get8(9); }
  /// Header Checksum, 16 bits, bits 80..95.
  constexpr std::uint16_t header_checksum() const noexcept { return this->get16(10); }
  /// Source Address, 32 bits, bits 96..127 (host-order integer).
  constexpr std::uint32_t src() const noexcept { return this->get32(12); }
  /// Destination Address, 32 bits, bits 128..159 (host-order integer).
  constexpr std::uint32_t dst() const noexcept { return this->get32(16); }

  constexpr void set_version(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(0, 4, 4, v); }
  constexpr void set_ihl(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(0, 0, 4, v); }
  constexpr void set_dscp(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(1, 2, 6, v); }
  constexpr void set_ecn(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(1, 0, 2, v); }
  constexpr void set_tos(std::uint8_t v) const noexcept requires Base::kMutable { this->set8(1, v); }
  constexpr void set_total_length(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(2, v); }
  constexpr void set_identification(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(4, v); }
  constexpr void set_flags(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(6, 5, 3, v); }
  constexpr void set_fragment_offset(std::uint16_t v) const noexcept requires Base::kMutable {
    this->set16(6, static_cast<std::uint16_t>((this->get16(6) & 0xE000) | (v & 0x1FFF)));
  }
  constexpr void set_ttl(std::uint8_t v) const noexcept requires Base::kMutable { this->set8(8, v); }
  constexpr void set_protocol(std::uint8_t v) const noexcept requires Base::kMutable { this->set8(9, v); }
  constexpr void set_header_checksum(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(10, v); }
  constexpr void set_src(std::uint32_t v) const noexcept requires Base::kMutable { this->set32(12, v); }
  constexpr void set_dst(std::uint32_t v) const noexcept requires Base::kMutable { this->set32(16, v); }
};

/// IPv6 fixed header (RFC 8200), 40 bytes. Also the layout of the IB GRH.
template <typename B>
class BasicIpv6 : public HeaderView<B, 40> {
  using Base = HeaderView<B, 40>;
 public:
  using Base::Base;
  /// Version, 4 bits, bits 0..3 (6).
  constexpr std::uint8_t version() const noexcept { return this->bits8(0, 4, 4); }
  /// Traffic Class (DSCP << 2 | ECN), 8 bits, bits 4..11.
  constexpr std::uint8_t traffic_class() const noexcept { return static_cast<std::uint8_t>((this->get16(0) >> 4) & 0xFF); }
  constexpr std::uint8_t dscp() const noexcept { return traffic_class() >> 2; }
  constexpr std::uint8_t ecn() const noexcept { return traffic_class() & 0x3; }
  /// Flow Label, 20 bits, bits 12..31.
  constexpr std::uint32_t flow_label() const noexcept { return this->get32(0) & 0xFFFFF; }
  /// Payload Length (bytes after this header), 16 bits, bits 32..47.
  constexpr std::uint16_t payload_length() const noexcept { return this->get16(4); }
  /// Next Header, 8 bits, bits 48..55 (17 = UDP).
  constexpr std::uint8_t next_header() const noexcept { return this->get8(6); }
  /// Hop Limit, 8 bits, bits 56..63.
  constexpr std::uint8_t hop_limit() const noexcept { return this->get8(7); }
  /// Source Address, 128 bits, bytes 8..23.
  constexpr Ipv6Addr src() const noexcept { return this->template get_array<16>(8); }
  /// Destination Address, 128 bits, bytes 24..39.
  constexpr Ipv6Addr dst() const noexcept { return this->template get_array<16>(24); }

  constexpr void set_version(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(0, 4, 4, v); }
  constexpr void set_traffic_class(std::uint8_t v) const noexcept requires Base::kMutable {
    this->set16(0, static_cast<std::uint16_t>((this->get16(0) & 0xF00F) | (static_cast<unsigned>(v) << 4)));
  }
  constexpr void set_dscp(std::uint8_t v) const noexcept requires Base::kMutable {
    set_traffic_class(static_cast<std::uint8_t>((v << 2) | ecn()));
  }
  constexpr void set_ecn(std::uint8_t v) const noexcept requires Base::kMutable {
    set_traffic_class(static_cast<std::uint8_t>((traffic_class() & 0xFC) | (v & 0x3)));
  }
  constexpr void set_flow_label(std::uint32_t v) const noexcept requires Base::kMutable {
    this->set32(0, (this->get32(0) & 0xFFF00000u) | (v & 0xFFFFFu));
  }
  constexpr void set_payload_length(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(4, v); }
  constexpr void set_next_header(std::uint8_t v) const noexcept requires Base::kMutable { this->set8(6, v); }
  constexpr void set_hop_limit(std::uint8_t v) const noexcept requires Base::kMutable { this->set8(7, v); }
  constexpr void set_src(const Ipv6Addr& v) const noexcept requires Base::kMutable { this->set_array(8, v); }
  constexpr void set_dst(const Ipv6Addr& v) const noexcept requires Base::kMutable { this->set_array(24, v); }
};

/// UDP header (RFC 768), 8 bytes.
template <typename B>
class BasicUdp : public HeaderView<B, 8> {
  using Base = HeaderView<B, 8>;
 public:
  using Base::Base;
  /// Source Port, 16 bits, bits 0..15 (RoCEv2: flow entropy for ECMP).
  constexpr std::uint16_t src_port() const noexcept { return this->get16(0); }
  /// Destination Port, 16 bits, bits 16..31 (RoCEv2: 4791).
  constexpr std::uint16_t dst_port() const noexcept { return this->get16(2); }
  /// Length of UDP header + data in bytes, 16 bits, bits 32..47.
  constexpr std::uint16_t length() const noexcept { return this->get16(4); }
  /// Checksum, 16 bits, bits 48..63 (0 = none, allowed over IPv4 only).
  constexpr std::uint16_t checksum() const noexcept { return this->get16(6); }
  constexpr void set_src_port(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(0, v); }
  constexpr void set_dst_port(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(2, v); }
  constexpr void set_length(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(4, v); }
  constexpr void set_checksum(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(6, v); }
};

/// IB Local Route Header (IBA 7.7), 8 bytes.
template <typename B>
class BasicLrh : public HeaderView<B, 8> {
  using Base = HeaderView<B, 8>;
 public:
  using Base::Base;
  /// VL, Virtual Lane, 4 bits, bits 0..3 (variant: masked in the ICRC).
  constexpr std::uint8_t vl() const noexcept { return this->bits8(0, 4, 4); }
  /// LVer, Link Version, 4 bits, bits 4..7 (0).
  constexpr std::uint8_t lver() const noexcept { return this->bits8(0, 0, 4); }
  /// SL, Service Level, 4 bits, bits 8..11.
  constexpr std::uint8_t sl() const noexcept { return this->bits8(1, 4, 4); }
  /// Reserved, 2 bits, bits 12..13.
  constexpr std::uint8_t resv2() const noexcept { return this->bits8(1, 2, 2); }
  /// LNH, Link Next Header, 2 bits, bits 14..15: 0 raw, 1 IP non-IBA,
  /// 2 IBA local (BTH follows), 3 IBA global (GRH follows).
  constexpr std::uint8_t lnh() const noexcept { return this->bits8(1, 0, 2); }
  /// DLID, Destination Local Identifier, 16 bits, bits 16..31.
  constexpr std::uint16_t dlid() const noexcept { return this->get16(2); }
  /// Reserved, 5 bits, bits 32..36.
  constexpr std::uint8_t resv5() const noexcept { return this->bits8(4, 3, 5); }
  /// PktLen, packet length in 4-byte words from the first byte of the LRH to
  /// the last byte of the ICRC (the VCRC excluded), 11 bits, bits 37..47.
  constexpr std::uint16_t pkt_len() const noexcept { return this->get16(4) & 0x07FF; }
  /// SLID, Source Local Identifier, 16 bits, bits 48..63.
  constexpr std::uint16_t slid() const noexcept { return this->get16(6); }

  constexpr void set_vl(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(0, 4, 4, v); }
  constexpr void set_lver(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(0, 0, 4, v); }
  constexpr void set_sl(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(1, 4, 4, v); }
  constexpr void set_resv2(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(1, 2, 2, v); }
  constexpr void set_lnh(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(1, 0, 2, v); }
  constexpr void set_dlid(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(2, v); }
  constexpr void set_resv5(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(4, 3, 5, v); }
  constexpr void set_pkt_len(std::uint16_t v) const noexcept requires Base::kMutable {
    this->set16(4, static_cast<std::uint16_t>((this->get16(4) & 0xF800) | (v & 0x07FF)));
  }
  constexpr void set_slid(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(6, v); }
};

/// IB Global Route Header (IBA 8.3), 40 bytes: the IPv6 layout with IB names.
template <typename B>
class BasicGrh : public HeaderView<B, 40> {
  using Base = HeaderView<B, 40>;
 public:
  using Base::Base;
  /// IPVer, 4 bits, bits 0..3 (6).
  constexpr std::uint8_t ipver() const noexcept { return this->bits8(0, 4, 4); }
  /// TClass, Traffic Class, 8 bits, bits 4..11 (variant).
  constexpr std::uint8_t tclass() const noexcept { return static_cast<std::uint8_t>((this->get16(0) >> 4) & 0xFF); }
  /// FlowLabel, 20 bits, bits 12..31 (variant).
  constexpr std::uint32_t flow_label() const noexcept { return this->get32(0) & 0xFFFFF; }
  /// PayLen, bytes after the GRH up to and including the ICRC, 16 bits, bits 32..47.
  constexpr std::uint16_t paylen() const noexcept { return this->get16(4); }
  /// NxtHdr, 8 bits, bits 48..55 (0x1B = IBA transport).
  constexpr std::uint8_t nxthdr() const noexcept { return this->get8(6); }
  /// HopLmt, Hop Limit, 8 bits, bits 56..63 (variant).
  constexpr std::uint8_t hoplmt() const noexcept { return this->get8(7); }
  /// SGID, Source GID, 128 bits, bytes 8..23.
  constexpr Gid sgid() const noexcept { return this->template get_array<16>(8); }
  /// DGID, Destination GID, 128 bits, bytes 24..39.
  constexpr Gid dgid() const noexcept { return this->template get_array<16>(24); }

  constexpr void set_ipver(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(0, 4, 4, v); }
  constexpr void set_tclass(std::uint8_t v) const noexcept requires Base::kMutable {
    this->set16(0, static_cast<std::uint16_t>((this->get16(0) & 0xF00F) | (static_cast<unsigned>(v) << 4)));
  }
  constexpr void set_flow_label(std::uint32_t v) const noexcept requires Base::kMutable {
    this->set32(0, (this->get32(0) & 0xFFF00000u) | (v & 0xFFFFFu));
  }
  constexpr void set_paylen(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(4, v); }
  constexpr void set_nxthdr(std::uint8_t v) const noexcept requires Base::kMutable { this->set8(6, v); }
  constexpr void set_hoplmt(std::uint8_t v) const noexcept requires Base::kMutable { this->set8(7, v); }
  constexpr void set_sgid(const Gid& v) const noexcept requires Base::kMutable { this->set_array(8, v); }
  constexpr void set_dgid(const Gid& v) const noexcept requires Base::kMutable { this->set_array(24, v); }
};

/// Base Transport Header (IBA 9.2), 12 bytes.
template <typename B>
class BasicBth : public HeaderView<B, 12> {
  using Base = HeaderView<B, 12>;
 public:
  using Base::Base;
  /// OpCode, 8 bits, bits 0..7: transport (3 bits) and operation (5 bits).
  constexpr std::uint8_t opcode() const noexcept { return this->get8(0); }
  /// SE, Solicited Event, 1 bit, bit 8.
  constexpr bool se() const noexcept { return this->bits8(1, 7, 1) != 0; }
  /// M, MigReq, 1 bit, bit 9.
  constexpr bool mig_req() const noexcept { return this->bits8(1, 6, 1) != 0; }
  /// PadCnt, pad bytes after the payload (0..3), 2 bits, bits 10..11.
  constexpr std::uint8_t pad_count() const noexcept { return this->bits8(1, 4, 2); }
  /// TVer, Transport Header Version, 4 bits, bits 12..15 (0).
  constexpr std::uint8_t tver() const noexcept { return this->bits8(1, 0, 4); }
  /// P_Key, Partition Key, 16 bits, bits 16..31.
  constexpr std::uint16_t pkey() const noexcept { return this->get16(2); }
  /// Resv8a, 8 bits, bits 32..39 (variant: masked in the ICRC). RoCEv2 (annex
  /// A17) and IBA 1.2.1+ use its two high bits as FECN (bit 32) and BECN (bit 33).
  constexpr std::uint8_t resv8a() const noexcept { return this->get8(4); }
  constexpr bool fecn() const noexcept { return this->bits8(4, 7, 1) != 0; }
  constexpr bool becn() const noexcept { return this->bits8(4, 6, 1) != 0; }
  /// DestQP, Destination QP number, 24 bits, bits 40..63.
  constexpr Qpn dest_qp() const noexcept { return Qpn(this->get24(5)); }
  /// A, AckReq, 1 bit, bit 64.
  constexpr bool ack_req() const noexcept { return this->bits8(8, 7, 1) != 0; }
  /// Resv7, 7 bits, bits 65..71.
  constexpr std::uint8_t resv7() const noexcept { return this->bits8(8, 0, 7); }
  /// PSN, Packet Sequence Number, 24 bits, bits 72..95.
  constexpr Psn psn() const noexcept { return Psn(this->get24(9)); }

  constexpr void set_opcode(std::uint8_t v) const noexcept requires Base::kMutable { this->set8(0, v); }
  constexpr void set_se(bool v) const noexcept requires Base::kMutable { this->set_bits8(1, 7, 1, v ? 1 : 0); }
  constexpr void set_mig_req(bool v) const noexcept requires Base::kMutable { this->set_bits8(1, 6, 1, v ? 1 : 0); }
  constexpr void set_pad_count(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(1, 4, 2, v); }
  constexpr void set_tver(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(1, 0, 4, v); }
  constexpr void set_pkey(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(2, v); }
  constexpr void set_resv8a(std::uint8_t v) const noexcept requires Base::kMutable { this->set8(4, v); }
  constexpr void set_fecn(bool v) const noexcept requires Base::kMutable { this->set_bits8(4, 7, 1, v ? 1 : 0); }
  constexpr void set_becn(bool v) const noexcept requires Base::kMutable { this->set_bits8(4, 6, 1, v ? 1 : 0); }
  constexpr void set_dest_qp(Qpn v) const noexcept requires Base::kMutable { this->set24(5, v.value()); }
  constexpr void set_ack_req(bool v) const noexcept requires Base::kMutable { this->set_bits8(8, 7, 1, v ? 1 : 0); }
  constexpr void set_resv7(std::uint8_t v) const noexcept requires Base::kMutable { this->set_bits8(8, 0, 7, v); }
  constexpr void set_psn(Psn v) const noexcept requires Base::kMutable { this->set24(9, v.value()); }
};

/// RDMA Extended Transport Header (IBA 9.3.3), 16 bytes.
template <typename B>
class BasicReth : public HeaderView<B, 16> {
  using Base = HeaderView<B, 16>;
 public:
  using Base::Base;
  /// VA, Virtual Address, 64 bits, bits 0..63.
  constexpr std::uint64_t va() const noexcept { return this->get64(0); }
  /// R_Key, Remote Key, 32 bits, bits 64..95.
  constexpr Rkey rkey() const noexcept { return Rkey(this->get32(8)); }
  /// DMALen, DMA Length in bytes, 32 bits, bits 96..127.
  constexpr std::uint32_t dma_length() const noexcept { return this->get32(12); }
  constexpr void set_va(std::uint64_t v) const noexcept requires Base::kMutable { this->set64(0, v); }
  constexpr void set_rkey(Rkey v) const noexcept requires Base::kMutable { this->set32(8, v.value()); }
  constexpr void set_dma_length(std::uint32_t v) const noexcept requires Base::kMutable { this->set32(12, v); }
};

/// ACK Extended Transport Header (IBA 9.3.5), 4 bytes.
template <typename B>
class BasicAeth : public HeaderView<B, 4> {
  using Base = HeaderView<B, 4>;
 public:
  using Base::Base;
  /// Syndrome, 8 bits, bits 0..7: bits 5..6 of it say ACK (00, low 5 bits =
  /// credit count), RNR NAK (01, timer), reserved (10), NAK (11, NAK code).
  constexpr std::uint8_t syndrome() const noexcept { return this->get8(0); }
  /// MSN, Message Sequence Number, 24 bits, bits 8..31.
  constexpr std::uint32_t msn() const noexcept { return this->get24(1); }
  constexpr void set_syndrome(std::uint8_t v) const noexcept requires Base::kMutable { this->set8(0, v); }
  constexpr void set_msn(std::uint32_t v) const noexcept requires Base::kMutable { this->set24(1, v); }
};

/// Atomic Extended Transport Header (IBA 9.3.4), 28 bytes.
template <typename B>
class BasicAtomicEth : public HeaderView<B, 28> {
  using Base = HeaderView<B, 28>;
 public:
  using Base::Base;
  /// VA, Virtual Address (8-byte aligned), 64 bits, bits 0..63.
  constexpr std::uint64_t va() const noexcept { return this->get64(0); }
  /// R_Key, Remote Key, 32 bits, bits 64..95.
  constexpr Rkey rkey() const noexcept { return Rkey(this->get32(8)); }
  /// Swap (CmpSwap) or Add (FetchAdd) Data, 64 bits, bits 96..159.
  constexpr std::uint64_t swap_add() const noexcept { return this->get64(12); }
  /// Compare Data (CmpSwap only), 64 bits, bits 160..223.
  constexpr std::uint64_t compare() const noexcept { return this->get64(20); }
  constexpr void set_va(std::uint64_t v) const noexcept requires Base::kMutable { this->set64(0, v); }
  constexpr void set_rkey(Rkey v) const noexcept requires Base::kMutable { this->set32(8, v.value()); }
  constexpr void set_swap_add(std::uint64_t v) const noexcept requires Base::kMutable { this->set64(12, v); }
  constexpr void set_compare(std::uint64_t v) const noexcept requires Base::kMutable { this->set64(20, v); }
};

/// Atomic Acknowledge Extended Transport Header (IBA 9.3.6), 8 bytes.
template <typename B>
class BasicAtomicAckEth : public HeaderView<B, 8> {
  using Base = HeaderView<B, 8>;
 public:
  using Base::Base;
  /// OrigRemDt, Original Remote Data, 64 bits, bits 0..63.
  constexpr std::uint64_t orig_remote_data() const noexcept { return this->get64(0); }
  constexpr void set_orig_remote_data(std::uint64_t v) const noexcept requires Base::kMutable { this->set64(0, v); }
};

/// Immediate Data Extended Transport Header (IBA 9.3.7), 4 bytes.
template <typename B>
class BasicImmDt : public HeaderView<B, 4> {
  using Base = HeaderView<B, 4>;
 public:
  using Base::Base;
  /// Immediate Data, 32 bits, bits 0..31 (opaque, network order on the wire).
  constexpr std::uint32_t imm() const noexcept { return this->get32(0); }
  constexpr void set_imm(std::uint32_t v) const noexcept requires Base::kMutable { this->set32(0, v); }
};

/// Invalidate Extended Transport Header (IBA 9.3.8), 4 bytes.
template <typename B>
class BasicIeth : public HeaderView<B, 4> {
  using Base = HeaderView<B, 4>;
 public:
  using Base::Base;
  /// R_Key to invalidate, 32 bits, bits 0..31.
  constexpr Rkey rkey() const noexcept { return Rkey(this->get32(0)); }
  constexpr void set_rkey(Rkey v) const noexcept requires Base::kMutable { this->set32(0, v.value()); }
};

/// Datagram Extended Transport Header (IBA 9.3.2), 8 bytes.
template <typename B>
class BasicDeth : public HeaderView<B, 8> {
  using Base = HeaderView<B, 8>;
 public:
  using Base::Base;
  /// Q_Key, Queue Key, 32 bits, bits 0..31.
  constexpr Qkey qkey() const noexcept { return Qkey(this->get32(0)); }
  /// Reserved, 8 bits, bits 32..39.
  constexpr std::uint8_t resv8() const noexcept { return this->get8(4); }
  /// SrcQP, Source QP number, 24 bits, bits 40..63.
  constexpr Qpn src_qp() const noexcept { return Qpn(this->get24(5)); }
  constexpr void set_qkey(Qkey v) const noexcept requires Base::kMutable { this->set32(0, v.value()); }
  constexpr void set_resv8(std::uint8_t v) const noexcept requires Base::kMutable { this->set8(4, v); }
  constexpr void set_src_qp(Qpn v) const noexcept requires Base::kMutable { this->set24(5, v.value()); }
};

using Ethernet = BasicEthernet<std::byte>;
using ConstEthernet = BasicEthernet<const std::byte>;
using VlanTag = BasicVlanTag<std::byte>;
using ConstVlanTag = BasicVlanTag<const std::byte>;
using Ipv4 = BasicIpv4<std::byte>;
using ConstIpv4 = BasicIpv4<const std::byte>;
using Ipv6 = BasicIpv6<std::byte>;
using ConstIpv6 = BasicIpv6<const std::byte>;
using Udp = BasicUdp<std::byte>;
using ConstUdp = BasicUdp<const std::byte>;
using Lrh = BasicLrh<std::byte>;
using ConstLrh = BasicLrh<const std::byte>;
using Grh = BasicGrh<std::byte>;
using ConstGrh = BasicGrh<const std::byte>;
using Bth = BasicBth<std::byte>;
using ConstBth = BasicBth<const std::byte>;
using Reth = BasicReth<std::byte>;
using ConstReth = BasicReth<const std::byte>;
using Aeth = BasicAeth<std::byte>;
using ConstAeth = BasicAeth<const std::byte>;
using AtomicEth = BasicAtomicEth<std::byte>;
using ConstAtomicEth = BasicAtomicEth<const std::byte>;
using AtomicAckEth = BasicAtomicAckEth<std::byte>;
using ConstAtomicAckEth = BasicAtomicAckEth<const std::byte>;
using ImmDt = BasicImmDt<std::byte>;
using ConstImmDt = BasicImmDt<const std::byte>;
using Ieth = BasicIeth<std::byte>;
using ConstIeth = BasicIeth<const std::byte>;
using Deth = BasicDeth<std::byte>;
using ConstDeth = BasicDeth<const std::byte>;

static_assert(Ethernet::kSize == 14 && VlanTag::kSize == 4 && Ipv4::kSize == 20 && Ipv6::kSize == 40);
static_assert(Udp::kSize == 8 && Lrh::kSize == 8 && Grh::kSize == 40 && Bth::kSize == 12);
static_assert(Reth::kSize == 16 && Aeth::kSize == 4 && AtomicEth::kSize == 28 && AtomicAckEth::kSize == 8);
static_assert(ImmDt::kSize == 4 && Ieth::kSize == 4 && Deth::kSize == 8);

/// Size of the ICRC trailer (all IBA transports, RoCEv2 included).
inline constexpr std::size_t kIcrcSize = 4;
/// Size of the VCRC trailer (native IB only).
inline constexpr std::size_t kVcrcSize = 2;

/// IPv4-mapped form ::ffff:a.b.c.d of a host-order IPv4 address.
constexpr Ipv6Addr ipv4_mapped(std::uint32_t v4) noexcept {
  Ipv6Addr a{};
  a[10] = 0xFF;
  a[11] = 0xFF;
  a[12] = static_cast<std::uint8_t>(v4 >> 24);
  a[13] = static_cast<std::uint8_t>(v4 >> 16);
  a[14] = static_cast<std::uint8_t>(v4 >> 8);
  a[15] = static_cast<std::uint8_t>(v4);
  return a;
}
/// The IPv4 address inside an IPv4-mapped address (the low 32 bits, whatever the prefix).
constexpr std::uint32_t ipv4_of(const Ipv6Addr& a) noexcept {
  return (static_cast<std::uint32_t>(a[12]) << 24) | (static_cast<std::uint32_t>(a[13]) << 16) |
         (static_cast<std::uint32_t>(a[14]) << 8) | a[15];
}
constexpr bool is_ipv4_mapped(const Ipv6Addr& a) noexcept {
  for (int i = 0; i < 10; ++i)
    if (a[i] != 0) return false;
  return a[10] == 0xFF && a[11] == 0xFF;
}

}  // namespace rnicsim::packet
