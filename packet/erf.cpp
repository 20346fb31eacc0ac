#include "packet/erf.hpp"

#include "packet/bytes.hpp"

namespace rnicsim::packet {

std::array<std::byte, kErfHeaderBytes> erf_header(std::uint32_t seconds, std::uint32_t nanoseconds,
                                                  std::size_t captured, std::size_t wire_length) {
  const std::uint64_t fraction = ((std::uint64_t{nanoseconds} << 32) + 500'000'000) / 1'000'000'000;
  std::array<std::byte, kErfHeaderBytes> h{};
  store_le32(&h[0], static_cast<std::uint32_t>(fraction));  // < 2^32: nanoseconds < 10^9
  store_le32(&h[4], seconds);
  h[8] = std::byte{kErfTypeInfiniband};
  h[9] = std::byte{0x04};
  store_be<2>(&h[10], kErfHeaderBytes + captured);
  store_be<2>(&h[14], wire_length);
  return h;
}

std::optional<ErfPacket> erf_infiniband_packet(std::span<const std::byte> record) {
  if (record.size() < kErfHeaderBytes) return std::nullopt;
  const std::uint8_t type = load_u8(&record[8]);
  if ((type & 0x7F) != kErfTypeInfiniband) return std::nullopt;
  std::size_t at = kErfHeaderBytes;
  // Each 8-byte extension header's first bit says whether another follows.
  for (bool more = type & 0x80; more; at += 8) {
    if (record.size() < at + 8) return std::nullopt;
    more = load_u8(&record[at]) & 0x80;
  }
  return ErfPacket{record.subspan(at), load_be16(&record[14])};
}

}  // namespace rnicsim::packet
