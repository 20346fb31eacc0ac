// Invariant CRC (ICRC) and Variant CRC (VCRC), as the IBA and its RoCEv2 annex
// define them and Linux rxe, scapy and Wireshark expect them. Neither function
// allocates: the masked headers are copied into a small stack buffer, the rest
// of the packet is read in place (ISA-L crc32_gzip_refl).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "packet/packet.hpp"

namespace rnicsim::packet {

/// ICRC of the frame described by `layout` (uses link, l3_offset,
/// l3_header_length, bth_offset, icrc_offset). Precondition: those offsets lie
/// within `frame` (write_headers()/parse() guarantee it).
///
/// IBA 7.8.1, RoCEv2 annex A17.4.1: CRC-32 (the Ethernet polynomial, reflected,
/// seed and final XOR 0xFFFFFFFF) over the packet from the LRH (or, for RoCEv2,
/// 8 bytes of 0xFF standing for it, then the IP header) to the end of the pad,
/// with the variant fields replaced by ones:
///   native IB:   LRH VL; GRH TClass, FlowLabel, HopLmt; BTH Resv8a
///   RoCEv2/IPv4: TOS (DSCP+ECN), TTL, header checksum; UDP checksum; BTH Resv8a
///   RoCEv2/IPv6: Traffic Class, Flow Label, Hop Limit; UDP checksum; BTH Resv8a
/// It goes on the wire least significant byte first: store_le32(frame + icrc_offset, icrc).
std::uint32_t compute_icrc(std::span<const std::byte> frame, const FrameLayout& layout) noexcept;

/// VCRC over frame[l3_offset, icrc_offset + 4) (IBA 7.8.2): CRC-16, polynomial
/// 0x100B, seed 0xFFFF, reflected, final XOR 0xFFFF, stored least significant byte first.
std::uint16_t compute_vcrc(std::span<const std::byte> frame, const FrameLayout& layout) noexcept;

/// Plain CRC-16 as used by the VCRC, over any bytes (exposed for tests).
std::uint16_t vcrc16(std::span<const std::byte> bytes) noexcept;

/// Plain CRC-32 (zlib/gzip convention) over any bytes, chained from `crc`.
std::uint32_t crc32(std::uint32_t crc, std::span<const std::byte> bytes) noexcept;

}  // namespace rnicsim::packet
