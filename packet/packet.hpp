// Decoded packets, frame building and parsing. Hot path: write_headers() writes
// every header and returns the FrameLayout; the caller puts the payload at
// layout.payload_offset (DMA straight into the frame), then seal() fills in pad
// bytes, checksums, ICRC and VCRC. Neither allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>

#include "packet/headers.hpp"
#include "packet/opcode.hpp"
#include "packet/result.hpp"
#include "packet/syndrome.hpp"

namespace rnicsim::packet {

/// How a packet travels.
enum class LinkKind : std::uint8_t {
  RoceV2Ipv4,  ///< Ethernet, IPv4, UDP 4791
  RoceV2Ipv6,  ///< Ethernet, IPv6, UDP 4791
  IbLocal,     ///< LRH (LNH = 2)
  IbGlobal,    ///< LRH + GRH (LNH = 3)
};
/// What the capture says the frame starts with (pcap link type 1 vs 247).
enum class LinkType : std::uint8_t { Ethernet, Infiniband };

/// Each link kind once: its name and the frames it travels in (the
/// conversions below and every LinkKind -> LinkType mapping read it).
struct LinkKindInfo {
  LinkKind kind;
  std::string_view name;
  LinkType frames;
  std::string_view link_name;  ///< the frames' name, as perftest's "Link type" prints it
};
inline constexpr LinkKindInfo kLinkKinds[] = {
    {LinkKind::RoceV2Ipv4, "RoCEv2/IPv4", LinkType::Ethernet, "Ethernet"},
    {LinkKind::RoceV2Ipv6, "RoCEv2/IPv6", LinkType::Ethernet, "Ethernet"},
    {LinkKind::IbLocal, "IB local", LinkType::Infiniband, "IB"},
    {LinkKind::IbGlobal, "IB global", LinkType::Infiniband, "IB"},
};
constexpr const LinkKindInfo& info(LinkKind k) noexcept { return kLinkKinds[static_cast<std::size_t>(k)]; }
constexpr bool link_kinds_in_order() {
  for (std::size_t i = 0; i < std::size(kLinkKinds); ++i)
    if (static_cast<std::size_t>(kLinkKinds[i].kind) != i) return false;
  return true;
}
static_assert(link_kinds_in_order(), "kLinkKinds: one row per LinkKind, in its order");

constexpr LinkType link_type(LinkKind k) noexcept { return info(k).frames; }
constexpr bool is_roce(LinkKind k) noexcept { return link_type(k) == LinkType::Ethernet; }
constexpr bool is_ib(LinkKind k) noexcept { return !is_roce(k); }
constexpr std::string_view to_string(LinkKind k) noexcept { return info(k).name; }

/// LNH value the LRH carries for an IB link kind.
constexpr std::uint8_t lnh_for(LinkKind k) noexcept { return k == LinkKind::IbGlobal ? 3 : 2; }
/// The only valid BTH PadCnt for a payload length.
constexpr std::uint8_t pad_for(std::size_t payload_length) noexcept {
  return static_cast<std::uint8_t>((4 - payload_length % 4) % 4);
}

inline constexpr std::size_t kEthernetMinFrame = 60;  ///< without FCS

struct VlanFields {
  std::uint8_t pcp = 0;   ///< 3 bits
  bool dei = false;
  std::uint16_t vid = 0;  ///< 12 bits
  bool operator==(const VlanFields&) const = default;
};
struct RethFields {
  std::uint64_t va = 0;
  Rkey rkey{};
  std::uint32_t dma_length = 0;
  bool operator==(const RethFields&) const = default;
};
struct AethFields {
  Syndrome syndrome{};
  std::uint32_t msn = 0;  ///< 24 bits
  bool operator==(const AethFields&) const = default;
};
struct AtomicEthFields {
  std::uint64_t va = 0;
  Rkey rkey{};
  std::uint64_t swap_add = 0;
  std::uint64_t compare = 0;
  bool operator==(const AtomicEthFields&) const = default;
};
struct AtomicAckEthFields {
  std::uint64_t orig_remote_data = 0;
  bool operator==(const AtomicAckEthFields&) const = default;
};
struct IethFields {
  Rkey rkey{};
  bool operator==(const IethFields&) const = default;
};
struct DethFields {
  Qkey qkey{};
  Qpn src_qp{};
  bool operator==(const DethFields&) const = default;
};

/// Everything a packet says, decoded. Fields of layers the link kind does not
/// use are ignored by write_headers() and left at their defaults by parse(),
/// so parse(build(x)) == x holds when they are left at their defaults in x.
/// Extension headers are present exactly when the opcode carries them.
struct PacketFields {
  LinkKind link = LinkKind::RoceV2Ipv4;

  // --- Ethernet (RoCEv2) ---
  MacAddr eth_dst{};
  MacAddr eth_src{};
  std::optional<VlanFields> vlan;

  // --- IP (RoCEv2) ---
  /// IPv6 addresses; for IPv4 the IPv4-mapped form (see ipv4_mapped()).
  Ipv6Addr ip_src{};
  Ipv6Addr ip_dst{};
  std::uint8_t dscp = 0;            ///< 6 bits (IPv4 TOS / IPv6 traffic class, high bits)
  std::uint8_t ecn = 0;             ///< 2 bits
  std::uint8_t ttl = 64;            ///< IPv4 TTL or IPv6 hop limit
  std::uint16_t ipv4_id = 0;        ///< IPv4 identification
  bool ipv4_dont_fragment = true;   ///< IPv4 DF flag (RoCEv2 sets it)
  std::uint32_t ipv6_flow_label = 0;  ///< 20 bits
  std::uint16_t udp_src_port = 0xC000;  ///< destination port is always 4791

  // --- LRH / GRH (native IB) ---
  std::uint8_t lrh_vl = 0;    ///< 4 bits
  std::uint8_t lrh_lver = 0;  ///< 4 bits
  std::uint8_t lrh_sl = 0;    ///< 4 bits
  std::uint8_t lrh_lnh = 2;   ///< 2 bits; must equal lnh_for(link) for IB kinds
  std::uint16_t dlid = 0;
  std::uint16_t slid = 0;
  std::uint8_t grh_tclass = 0;
  std::uint32_t grh_flow_label = 0;  ///< 20 bits
  std::uint8_t grh_hop_limit = 0;
  std::uint8_t grh_next_header = kGrhNextHeaderIba;
  Gid sgid{};
  Gid dgid{};

  // --- BTH ---
  Opcode opcode = Opcode::RcSendOnly;
  bool solicited = false;
  bool mig_req = false;
  std::uint8_t pad_count = 0;  ///< must equal pad_for(payload_length)
  std::uint8_t tver = 0;
  std::uint16_t pkey = 0xFFFF;
  bool fecn = false;
  bool becn = false;
  Qpn dest_qp{};
  bool ack_req = false;
  Psn psn{};

  // --- extension headers ---
  std::optional<RethFields> reth;
  std::optional<AethFields> aeth;
  std::optional<AtomicEthFields> atomic_eth;
  std::optional<AtomicAckEthFields> atomic_ack_eth;
  std::optional<std::uint32_t> imm;  ///< ImmDt
  std::optional<IethFields> ieth;
  std::optional<DethFields> deth;

  /// Payload bytes (pad excluded).
  std::uint32_t payload_length = 0;

  bool operator==(const PacketFields&) const = default;
};

/// Sets the fields derived from others: pad_count from payload_length and
/// lrh_lnh from link. Convenience for callers filling a PacketFields by hand.
constexpr void derive_fields(PacketFields& f) noexcept {
  f.pad_count = pad_for(f.payload_length);
  if (is_ib(f.link)) f.lrh_lnh = lnh_for(f.link);
}

/// Where everything is in a frame (offsets from the first byte of the frame).
/// Frame formats (the FCS is never included, as in pcap captures):
///   RoCEv2/IPv4:  Ethernet [802.1Q] IPv4 UDP(4791) BTH [ext headers] payload pad ICRC [Ethernet pad]
///   RoCEv2/IPv6:  Ethernet [802.1Q] IPv6 UDP(4791) BTH [ext headers] payload pad ICRC [Ethernet pad]
///   IB local:     LRH BTH [ext headers] payload pad ICRC VCRC
///   IB global:    LRH GRH BTH [ext headers] payload pad ICRC VCRC
/// Ethernet frames shorter than the 60-byte minimum (64 with the FCS) are
/// padded with zero bytes after the ICRC, as a MAC would do on the wire; parse()
/// accepts and reports bytes after the IP datagram (`trailer_length`).
struct FrameLayout {
  LinkKind link = LinkKind::RoceV2Ipv4;
  std::uint16_t l3_offset = 0;      ///< first byte of the IP header / LRH
  std::uint16_t l3_header_length = 0;  ///< IPv4 header incl. options / 40 / LRH(+GRH)
  std::uint16_t bth_offset = 0;
  std::uint16_t payload_offset = 0;
  std::uint32_t payload_length = 0;  ///< pad excluded
  std::uint8_t pad_count = 0;
  std::uint32_t icrc_offset = 0;     ///< = payload_offset + payload_length + pad_count
  std::uint32_t frame_length = 0;    ///< including VCRC (IB) or Ethernet padding (RoCE)
  bool operator==(const FrameLayout&) const = default;
};

/// Length of the frame build() produces: headers + payload + pad + ICRC
/// (+ VCRC for IB), raised to 60 bytes for Ethernet. FCS not included.
std::size_t frame_length(const PacketFields& f) noexcept;

/// Writes every header of `f` into `out` (IP/UDP/LRH/GRH lengths included)
/// and returns the layout. Payload, pad, checksums and CRCs are left for seal().
BuildResult<FrameLayout> write_headers(const PacketFields& f, std::span<std::byte> out) noexcept;

/// What differs between packets of one QP that have the same opcode and payload
/// length (the MIDDLE packets of a long message): the BTH's PSN, AckReq and
/// SE bits, and the IPv4 identification (RoCEv2 over IPv4).
struct PerPacketFields {
  Psn psn{};
  bool ack_req = false;
  bool solicited = false;
  std::uint16_t ipv4_id = 0;
};

/// Rewrites those fields in headers write_headers() wrote (`headers` holds at
/// least layout.payload_offset bytes): a sender that keeps one packet's headers
/// as a template makes the next one's with a copy and this, and gets the bytes
/// write_headers() would write for the same fields with those values.
void patch_headers(std::span<std::byte> headers, const FrameLayout& layout, const PerPacketFields& p) noexcept;

/// Completes a frame whose headers were written by write_headers() and whose
/// payload is in place: zero pad and Ethernet trailer bytes, IPv4 header
/// checksum, UDP checksum (0 over IPv4, as RoCEv2 NICs send; computed over
/// IPv6, where a zero checksum is not allowed), ICRC and, for IB, VCRC.
/// `frame` must be at least layout.frame_length bytes.
void seal(std::span<std::byte> frame, const FrameLayout& layout) noexcept;

/// Same, locating the headers by walking them (for frames built elsewhere or
/// edited in place). Returns false, leaving the frame untouched, when the
/// frame does not parse as the given link kind.
bool seal(std::span<std::byte> frame, LinkKind link) noexcept;

/// seal() in two halves, for senders whose frames may never be looked at.
/// seal_without_crc() does everything seal() does except the fields that depend
/// on the ICRC: the ICRC itself, the VCRC (IB) and the UDP checksum (IPv6, where
/// it covers the ICRC). The frame is then correct but for those fields, which
/// complete_seal() fills in later, locating the headers by walking them; after
/// both, the frame is byte for byte what seal() makes. A frame that is never
/// looked at (no capture, no fault model, a receiver that trusts its sender's
/// builder) need never have its CRCs computed. See fabric::Frame::defer_seal.
void seal_without_crc(std::span<std::byte> frame, const FrameLayout& layout) noexcept;
/// What seal() does to the headers alone (IPv4 header checksum, a zero UDP
/// checksum), for a size-only frame that holds nothing after them: `frame` needs
/// only layout.payload_offset bytes. Such a frame never gets a pad, ICRC or VCRC
/// (see fabric::Frame, size-only frames).
void seal_headers(std::span<std::byte> frame, const FrameLayout& layout) noexcept;
/// Completes a frame of the given capture link type sealed by seal_without_crc()
/// (or re-seals a complete one). Returns false, leaving the frame untouched, when
/// the frame does not parse.
bool complete_seal(std::span<std::byte> frame, LinkType link_type) noexcept;
/// complete_seal() for Ethernet (RoCEv2) and InfiniBand frames, with the
/// signature of fabric::Frame::Sealer.
void complete_seal_ethernet(std::span<std::byte> frame) noexcept;
void complete_seal_infiniband(std::span<std::byte> frame) noexcept;

/// write_headers + payload copy + seal. Returns the frame length.
BuildResult<std::size_t> build(const PacketFields& f, std::span<const std::byte> payload,
                               std::span<std::byte> out) noexcept;

/// A parsed frame: the fields, where the payload is, and the received CRCs.
struct ParsedPacket {
  PacketFields fields;
  FrameLayout layout;
  std::span<const std::byte> payload;  ///< pad excluded
  std::uint32_t icrc = 0;              ///< as received (little-endian on the wire)
  std::uint16_t vcrc = 0;              ///< as received, IB only
  std::uint32_t trailer_length = 0;    ///< bytes after the IP datagram (Ethernet pad, FCS)
  std::uint16_t udp_checksum = 0;      ///< as received, RoCEv2 only
  /// Bytes of the frame that were not there: a capture's snap length or a
  /// size-only frame cut it after its headers. `payload` then holds only the
  /// part present, and icrc, vcrc and trailer_length are 0.
  std::uint32_t missing = 0;
};

/// Decodes a frame. Never reads outside `frame`. Does not check ICRC, VCRC or
/// checksums (see icrc_ok / vcrc_ok / ipv4_checksum_ok / udp_checksum_ok).
/// `wire_length`, when larger than frame.size(), is the frame's real length and
/// `frame` its first bytes: every header must be there, the payload and CRCs
/// need not (ParsedPacket::missing says how much is not). With `read_crcs`
/// false, icrc and vcrc stay 0: a receiver that will not check them need not
/// touch the end of the frame.
ParseResult<ParsedPacket> parse(std::span<const std::byte> frame, LinkType link_type,
                                std::size_t wire_length = 0, bool read_crcs = true) noexcept;
/// The same, decoded into `out` (which it resets first): no copy of the result.
void parse(std::span<const std::byte> frame, LinkType link_type, std::size_t wire_length, bool read_crcs,
           ParseResult<ParsedPacket>& out) noexcept;
/// A frame's BTH, found past the link and network headers without checking
/// anything else (the NIC steers a received packet to a processing unit by its
/// destination QP, and times it by its opcode, before parsing it); nullopt if
/// no BTH is there.
std::optional<ConstBth> bth_of(std::span<const std::byte> frame, LinkType link_type) noexcept;
/// The destination QP of bth_of's BTH.
std::optional<Qpn> dest_qp_of(std::span<const std::byte> frame, LinkType link_type) noexcept;

/// The ICRC recomputed over `frame` equals the one received.
bool icrc_ok(std::span<const std::byte> frame, const ParsedPacket& p) noexcept;
/// The VCRC recomputed over `frame` equals the one received (true for RoCEv2).
bool vcrc_ok(std::span<const std::byte> frame, const ParsedPacket& p) noexcept;
/// ECN marking by a switch: a RoCEv2 frame whose IP header starts at
/// `ip_offset` and is ECN-capable (ECT(0) or ECT(1)) becomes Congestion
/// Experienced (CE), with its IPv4 header checksum updated (the ICRC masks
/// the ECN bits). Returns whether the frame now carries CE; a Not-ECT frame is
/// left alone.
bool mark_ecn_ce(std::span<std::byte> frame, std::size_t ip_offset) noexcept;
/// IPv4 header checksum is right (true for other link kinds).
bool ipv4_checksum_ok(std::span<const std::byte> frame, const ParsedPacket& p) noexcept;
/// UDP checksum is 0 or right (true for IB).
bool udp_checksum_ok(std::span<const std::byte> frame, const ParsedPacket& p) noexcept;

/// What a switch's ECN marking does to an Ethernet frame carrying IPv4 or IPv6
/// (802.1Q tag allowed): an ECN-capable packet (ECT(0) or ECT(1)) becomes
/// Congestion Experienced, and an IPv4 header checksum is updated. The ICRC does
/// not cover these bits, so it stays valid. Returns whether the packet now says
/// CE (false for Not-ECT packets, which a switch drops instead, and for frames
/// that are not IP).
bool mark_congestion_experienced(std::span<std::byte> frame) noexcept;

}  // namespace rnicsim::packet
