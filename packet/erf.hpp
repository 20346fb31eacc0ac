// ERF (Endace's Extensible Record Format) as pcap's LINKTYPE_ERF (197) carries
// it: each record starts with a 16-byte header, then the packet. Native IB
// captures use ERF type 21 (InfiniBand, the packet from its LRH), which
// Wireshark 4.0 decodes as InfiniBand, while its reader does not map
// LINKTYPE_INFINIBAND (247).
//
//   bytes 0..7    timestamp, little endian: seconds << 32 | binary fraction
//   byte 8        type (bit 7: extension headers follow)
//   byte 9        flags (0x04: varying record length, no padding to 8 bytes)
//   bytes 10..11  record length (this header and the bytes captured), big endian
//   bytes 12..13  loss counter
//   bytes 14..15  the packet's length on the wire, big endian
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace rnicsim::packet {

inline constexpr std::size_t kErfHeaderBytes = 16;
inline constexpr std::uint8_t kErfTypeInfiniband = 21;

/// The header of an InfiniBand record of `captured` bytes of a packet of
/// `wire_length`, at `seconds` + `nanoseconds`. The fraction is rounded to the
/// nearest 2^-32 s, so a reader that rounds back (Wireshark) gets the nanosecond.
std::array<std::byte, kErfHeaderBytes> erf_header(std::uint32_t seconds, std::uint32_t nanoseconds,
                                                  std::size_t captured, std::size_t wire_length);

/// An InfiniBand record's packet: the bytes captured and its length on the wire.
struct ErfPacket {
  std::span<const std::byte> bytes;
  std::size_t wire_length;
};
/// The packet of an ERF record of type InfiniBand (after any extension
/// headers); nullopt for another type or a record too short for its headers.
std::optional<ErfPacket> erf_infiniband_packet(std::span<const std::byte> record);

}  // namespace rnicsim::packet
