#include "packet/icrc.hpp"

#include <isa-l/crc.h>

#include <array>
#include <cassert>
#include <cstring>

namespace rnicsim::packet {
namespace {

constexpr std::array<std::uint16_t, 256> make_vcrc_table() {
  constexpr std::uint16_t kPolyReflected = 0xD008;  // 0x100B bit-reversed
  std::array<std::uint16_t, 256> t{};
  for (unsigned n = 0; n < 256; ++n) {
    std::uint16_t c = static_cast<std::uint16_t>(n);
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? static_cast<std::uint16_t>((c >> 1) ^ kPolyReflected) : static_cast<std::uint16_t>(c >> 1);
    t[n] = c;
  }
  return t;
}
constexpr auto kVcrcTable = make_vcrc_table();

// Largest masked prefix: 8 (pseudo LRH) + 60 (IPv4 with options) + 8 (UDP) + 12 (BTH).
constexpr std::size_t kMaxMasked = 8 + 60 + 8 + kBthSize;

std::uint32_t crc32_raw(std::uint32_t crc, const std::byte* p, std::size_t n) noexcept {
  // ISA-L takes a uint64_t length and a non-const pointer it does not write through.
  return crc32_gzip_refl(crc, reinterpret_cast<unsigned char*>(const_cast<std::byte*>(p)), n);
}

void mask_ipv6_like(std::byte* h) noexcept {
  // Version nibble stays; traffic class (8) and flow label (20) become ones.
  h[0] |= std::byte{0x0F};
  h[1] = h[2] = h[3] = std::byte{0xFF};
  h[7] = std::byte{0xFF};  // hop limit
}

}  // namespace

std::uint32_t crc32(std::uint32_t crc, std::span<const std::byte> bytes) noexcept {
  return crc32_raw(crc, bytes.data(), bytes.size());
}

std::uint32_t compute_icrc(std::span<const std::byte> frame, const FrameLayout& l) noexcept {
  std::array<std::byte, kMaxMasked> buf;
  std::size_t n = 0;
  const std::byte* l3 = frame.data() + l.l3_offset;
  assert(l.l3_header_length <= 60 && l.icrc_offset <= frame.size() && l.bth_offset + kBthSize <= l.icrc_offset);
  switch (l.link) {
    case LinkKind::RoceV2Ipv4: {
      std::memset(buf.data(), 0xFF, 8);
      n = 8;
      const std::size_t ipl = l.l3_header_length;
      std::memcpy(buf.data() + n, l3, ipl + 8);  // IP header (+options) and UDP header
      std::byte* ip = buf.data() + n;
      ip[1] = std::byte{0xFF};                        // TOS: DSCP + ECN
      ip[8] = std::byte{0xFF};                        // TTL
      ip[10] = ip[11] = std::byte{0xFF};              // header checksum
      ip[ipl + 6] = ip[ipl + 7] = std::byte{0xFF};    // UDP checksum
      n += ipl + 8;
      break;
    }
    case LinkKind::RoceV2Ipv6: {
      std::memset(buf.data(), 0xFF, 8);
      n = 8;
      std::memcpy(buf.data() + n, l3, 40 + 8);
      std::byte* ip = buf.data() + n;
      mask_ipv6_like(ip);
      ip[40 + 6] = ip[40 + 7] = std::byte{0xFF};  // UDP checksum
      n += 48;
      break;
    }
    case LinkKind::IbLocal:
    case LinkKind::IbGlobal: {
      std::memcpy(buf.data(), l3, l.l3_header_length);
      buf[0] |= std::byte{0xF0};  // LRH VL
      if (l.link == LinkKind::IbGlobal) mask_ipv6_like(buf.data() + Lrh::kSize);
      n = l.l3_header_length;
      break;
    }
  }
  assert(frame.data() + l.bth_offset == l3 + (n - (is_roce(l.link) ? 8 : 0)));
  std::memcpy(buf.data() + n, frame.data() + l.bth_offset, kBthSize);
  buf[n + 4] = std::byte{0xFF};  // BTH Resv8a (FECN, BECN, reserved)
  n += kBthSize;
  std::uint32_t crc = crc32_raw(0, buf.data(), n);
  const std::size_t rest = l.bth_offset + kBthSize;
  return crc32_raw(crc, frame.data() + rest, l.icrc_offset - rest);
}

std::uint16_t vcrc16(std::span<const std::byte> bytes) noexcept {
  std::uint16_t c = 0xFFFF;
  for (std::byte b : bytes) c = static_cast<std::uint16_t>(kVcrcTable[(c ^ std::to_integer<unsigned>(b)) & 0xFFu] ^ (c >> 8));
  return static_cast<std::uint16_t>(c ^ 0xFFFF);
}

std::uint16_t compute_vcrc(std::span<const std::byte> frame, const FrameLayout& l) noexcept {
  return vcrc16(frame.subspan(l.l3_offset, l.icrc_offset + kIcrcSize - l.l3_offset));
}

}  // namespace rnicsim::packet
