// ERF record headers for native IB captures: golden bytes, the timestamp's
// rounding, and reading a record back (extension headers, other types).
#include <gtest/gtest.h>

#include <vector>

#include "packet/erf.hpp"

namespace rnicsim::packet {
namespace {

std::vector<std::byte> bytes(std::initializer_list<int> v) {
  std::vector<std::byte> b;
  for (int x : v) b.push_back(std::byte(x));
  return b;
}

TEST(Erf, HeaderGoldenBytes) {
  // 2 s + 500 ns: fraction round(500e-9 * 2^32) = 2147 = 0x863; 100 of 300 bytes captured.
  const auto h = erf_header(2, 500, 100, 300);
  const auto want = bytes({0x63, 0x08, 0, 0, 0x02, 0, 0, 0,  // ts, little endian
                           21, 0x04,                         // type InfiniBand, varying length
                           0, 116,                           // record length 16 + 100
                           0, 0,                             // loss counter
                           0x01, 0x2C});                     // wire length 300
  EXPECT_EQ(std::vector<std::byte>(h.begin(), h.end()), want);
}

// Every nanosecond survives the binary fraction: Wireshark rounds it back.
TEST(Erf, TimestampRoundsBackToTheNanosecond) {
  for (uint32_t ns : {0u, 1u, 2u, 499'999'999u, 500'000'000u, 999'999'998u, 999'999'999u}) {
    const auto h = erf_header(7, ns, 0, 0);
    uint64_t fraction = 0;
    for (int i = 3; i >= 0; --i) fraction = fraction << 8 | std::to_integer<uint64_t>(h[i]);
    EXPECT_EQ((fraction * 1'000'000'000 + (1ull << 31)) >> 32, ns);
    EXPECT_EQ(std::to_integer<int>(h[4]), 7);  // the seconds, not carried into
  }
}

TEST(Erf, ReadsTheInfinibandPacketBack) {
  const auto h = erf_header(0, 0, 3, 40);
  std::vector<std::byte> record(h.begin(), h.end());
  for (int b : {0xA, 0xB, 0xC}) record.push_back(std::byte(b));
  const auto p = erf_infiniband_packet(record);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->wire_length, 40u);
  EXPECT_EQ(std::vector<std::byte>(p->bytes.begin(), p->bytes.end()), bytes({0xA, 0xB, 0xC}));
}

TEST(Erf, SkipsExtensionHeaders) {
  auto h = erf_header(0, 0, 17, 1);
  std::vector<std::byte> record(h.begin(), h.end());
  record[8] |= std::byte{0x80};  // an extension header follows
  for (int i = 0; i < 8; ++i) record.push_back(std::byte(i == 0 ? 0x80 : 0));  // and another after it
  for (int i = 0; i < 8; ++i) record.push_back(std::byte(0));
  record.push_back(std::byte{0x42});
  const auto p = erf_infiniband_packet(record);
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->bytes.size(), 1u);
  EXPECT_EQ(p->bytes[0], std::byte{0x42});
  record.resize(kErfHeaderBytes + 12);  // the second extension header cut
  EXPECT_FALSE(erf_infiniband_packet(record).has_value());
}

TEST(Erf, OtherTypesAndShortRecordsAreNotPackets) {
  auto h = erf_header(0, 0, 0, 0);
  std::vector<std::byte> record(h.begin(), h.end());
  record[8] = std::byte{2};  // Ethernet
  EXPECT_FALSE(erf_infiniband_packet(record).has_value());
  record[8] = std::byte{21};
  record.pop_back();
  EXPECT_FALSE(erf_infiniband_packet(record).has_value());
}

}  // namespace
}  // namespace rnicsim::packet
