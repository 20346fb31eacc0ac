// Header prediction for a receiver (after TCP's): the packets of a stream differ
// from the previous packet of their QP only in per-packet fields, so a receiver
// that keeps the last packet it parsed for each QP can often answer by comparing
// bytes instead of decoding headers. HeaderPrediction::parse gives exactly what
// parse() gives; it takes the last packet's decode when the new frame matches it
// byte for byte outside those fields, and parses in full otherwise.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "packet/packet.hpp"

namespace rnicsim::packet {

// Per-packet fields (bytes that may differ, read anew on every hit):
// - BTH: SE (byte 1, bit 7), AckReq and the reserved bits (byte 8), PSN (bytes 9-11);
// - AETH: syndrome and MSN (an acknowledgement's);
// - IPv4: identification and header checksum;
// - UDP: checksum (parse() does not check checksums; see ipv4_checksum_ok);
// - after the headers: the payload bytes, ICRC and VCRC.
// Everything else, the frame's size and the parse arguments must be the same.
class HeaderPrediction {
public:
  /// As parse(frame, link_type, wire_length, read_crcs). The result stays valid
  /// until the next call.
  const ParseResult<ParsedPacket>& parse(std::span<const std::byte> frame, LinkType link_type,
                                         std::size_t wire_length = 0, bool read_crcs = true) noexcept;
  /// Frames answered from a kept packet.
  std::uint64_t predicted() const noexcept { return predicted_; }

private:
  static constexpr std::size_t kEntries = 16;  // direct-mapped by the low bits of the destination QP
  static constexpr std::size_t kMaxHeaderBytes = 128;
  static constexpr std::size_t kWords = kMaxHeaderBytes / 8;
  struct Entry {
    bool valid = false;
    LinkType link_type = LinkType::Ethernet;
    bool read_crcs = false;
    std::size_t frame_size = 0, size = 0;
    std::size_t header_bytes = 0;                   // payload_offset: the bytes compared
    std::uint16_t aeth_offset = 0;                  // 0: none
    std::array<std::uint64_t, kWords> bytes{}, mask{};  // mask: the bits that must match
    ParseResult<ParsedPacket> packet{std::in_place};
  };
  bool matches(const Entry& e, std::span<const std::byte> frame) const noexcept;
  void keep(Entry& e, std::span<const std::byte> frame, LinkType link_type, std::size_t size, bool read_crcs) noexcept;
  std::array<Entry, kEntries> entries_{};
  ParseResult<ParsedPacket> parsed_{std::in_place};
  std::size_t last_bth_offset_ = 0;
  std::uint64_t predicted_ = 0;
};

}  // namespace rnicsim::packet
