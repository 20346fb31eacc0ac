// ICRC and VCRC: known answers, frames built by an independent tool (scapy),
// and coverage of exactly the invariant fields.
#include <gtest/gtest.h>

#include <cstring>
#include <string_view>
#include <vector>

#include "packet/icrc.hpp"
#include "packet/packet.hpp"
#include "tests/packet/sample_packets.hpp"

namespace rnicsim::packet {
namespace {

using testing::sample_fields;
using testing::sample_frame;

std::vector<std::byte> B(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int x : v) out.push_back(static_cast<std::byte>(x));
  return out;
}

std::span<const std::byte> as_bytes(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

TEST(Crc, Crc32KnownAnswer) {
  EXPECT_EQ(crc32(0, as_bytes("123456789")), 0xCBF43926u);  // CRC-32/ISO-HDLC check value
  EXPECT_EQ(crc32(crc32(0, as_bytes("1234")), as_bytes("56789")), 0xCBF43926u);  // chaining
}

// Bit-serial CRC-16 over x^16 + x^12 + x^3 + x + 1, processing each byte LSB
// first, written straight from the polynomial (no table, no reflection trick).
std::uint16_t vcrc_bitwise(std::span<const std::byte> data) {
  std::uint16_t reg = 0xFFFF;  // register holds x^15..x^0 as bits 15..0
  for (std::byte byte : data) {
    const unsigned b = std::to_integer<unsigned>(byte);
    for (int i = 0; i < 8; ++i) {
      const unsigned in = (b >> i) & 1u;
      const unsigned top = (reg >> 15) & 1u;
      reg = static_cast<std::uint16_t>(reg << 1);
      if (in ^ top) reg ^= 0x100B;
    }
  }
  // Output bit-reversed (x^15 first on the wire, as the input bits) and inverted.
  std::uint16_t out = 0;
  for (int i = 0; i < 16; ++i)
    if (reg & (1u << i)) out = static_cast<std::uint16_t>(out | (1u << (15 - i)));
  return static_cast<std::uint16_t>(~out);
}

TEST(Crc, Vcrc16MatchesBitSerialDefinition) {
  EXPECT_EQ(vcrc16(as_bytes("123456789")), vcrc_bitwise(as_bytes("123456789")));
  const auto frame = sample_frame(sample_fields(Opcode::RcSendOnly, {LinkKind::IbGlobal, false}));
  EXPECT_EQ(vcrc16(frame), vcrc_bitwise(frame));
  EXPECT_EQ(vcrc16({}), 0x0000);  // seed 0xFFFF, final XOR 0xFFFF
}

// Frames built by scapy (Ether/IP/UDP/BTH/...), ICRC computed by scapy.contrib.roce.
const auto kScapySendOnly = B({
    0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x45, 0x6a, 0x00, 0x3c,
    0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x14, 0x11, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xc1, 0x23,
    0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x01, 0x23, 0x80, 0x00, 0xab, 0xcd,
    0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x34, 0x66,
    0x2a, 0x18});
const auto kScapyAck = B({
    0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x45, 0x00, 0x00, 0x30,
    0x00, 0x01, 0x00, 0x00, 0x40, 0x11, 0x66, 0xba, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xc1, 0x23,
    0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00, 0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x01, 0x23, 0x00, 0x00, 0xab, 0xcd,
    0x1f, 0x00, 0x00, 0x07, 0xd3, 0x7b, 0x92, 0x54});

TEST(Icrc, AcceptsScapyFrames) {
  for (const auto* frame : {&kScapySendOnly, &kScapyAck}) {
    const auto r = parse(*frame, LinkType::Ethernet);
    ASSERT_TRUE(r) << to_string(r.error());
    EXPECT_TRUE(icrc_ok(*frame, *r));
    EXPECT_TRUE(ipv4_checksum_ok(*frame, *r));
    EXPECT_EQ(compute_icrc(*frame, r->layout), load_le32(frame->data() + frame->size() - 4));
  }
}

// A receiver that will not check the CRCs parses without reading them: the
// same decode, with icrc and vcrc left 0.
TEST(Icrc, ParseWithoutCrcsLeavesThemZero) {
  for (const LinkKind kind : {LinkKind::RoceV2Ipv4, LinkKind::IbLocal}) {
    const PacketFields f = sample_fields(Opcode::RcRdmaWriteOnly, {kind, false}, 100);
    const std::vector<std::byte> frame = sample_frame(f, 3);
    const LinkType type = kind == LinkKind::IbLocal ? LinkType::Infiniband : LinkType::Ethernet;
    const auto with = parse(frame, type);
    const auto without = parse(frame, type, 0, /*read_crcs=*/false);
    ASSERT_TRUE(with && without);
    EXPECT_NE(with->icrc, 0u);
    EXPECT_EQ(without->icrc, 0u);
    EXPECT_EQ(without->vcrc, 0u);
    if (kind == LinkKind::IbLocal) {
      EXPECT_NE(with->vcrc, 0u);
    }
    EXPECT_EQ(without->layout.payload_offset, with->layout.payload_offset);
    EXPECT_EQ(without->fields.psn, with->fields.psn);
    EXPECT_EQ(without->payload.size(), with->payload.size());
    EXPECT_EQ(without->trailer_length, with->trailer_length);
  }
}

TEST(Icrc, BuildsTheSameBytesAsScapy) {
  PacketFields f = sample_fields(Opcode::RcSendOnly, {LinkKind::RoceV2Ipv4, false}, 16);
  f.dscp = 26;
  f.ecn = 2;
  f.ipv4_id = 0x1234;
  f.ack_req = true;
  f.solicited = false;
  std::vector<std::byte> out(frame_length(f));
  const std::string_view payload = "0123456789abcdef";
  ASSERT_TRUE(build(f, as_bytes(payload), out));
  EXPECT_EQ(out, kScapySendOnly);
}

TEST(Icrc, VariantFieldsAreMaskedAndEverythingElseCovered) {
  for (LinkKind link : {LinkKind::RoceV2Ipv4, LinkKind::RoceV2Ipv6, LinkKind::IbLocal, LinkKind::IbGlobal}) {
    SCOPED_TRACE(to_string(link));
    const auto frame = sample_frame(sample_fields(Opcode::RcRdmaWriteFirst, {link, false}));
    const auto r = parse(frame, is_roce(link) ? LinkType::Ethernet : LinkType::Infiniband);
    ASSERT_TRUE(r);
    const FrameLayout& l = r->layout;
    const std::uint32_t icrc = compute_icrc(frame, l);
    // Which bits of the covered region [l3, icrc) are variant (masked)?
    const auto variant = [&](std::size_t byte, int bit) {  // bit 7 = MSB
      const std::size_t o = byte - l.l3_offset;
      const std::size_t bth = l.bth_offset;
      if (byte == bth + 4) return true;  // BTH resv8a
      switch (link) {
        case LinkKind::RoceV2Ipv4:
          return o == 1 || o == 8 || o == 10 || o == 11 || o == 20 + 6 || o == 20 + 7;
        case LinkKind::RoceV2Ipv6:
          return (o == 0 && bit < 4) || o == 1 || o == 2 || o == 3 || o == 7 || o == 40 + 6 || o == 40 + 7;
        case LinkKind::IbGlobal:
          if (o >= 8 && o < 48) {
            const std::size_t g = o - 8;
            if ((g == 0 && bit < 4) || g == 1 || g == 2 || g == 3 || g == 7) return true;
          }
          [[fallthrough]];
        case LinkKind::IbLocal:
          return o == 0 && bit >= 4;  // LRH VL
      }
      return false;
    };
    int covered = 0, masked = 0;
    for (std::size_t byte = l.l3_offset; byte < l.icrc_offset; ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        auto copy = frame;
        copy[byte] ^= static_cast<std::byte>(1u << bit);
        const bool changed = compute_icrc(copy, l) != icrc;
        EXPECT_EQ(changed, !variant(byte, bit)) << "byte " << byte << " bit " << bit;
        (changed ? covered : masked)++;
      }
    }
    EXPECT_GT(covered, 8 * 256);
    EXPECT_GT(masked, 0);
  }
}

TEST(Icrc, IsLittleEndianOnTheWire) {
  const auto frame = sample_frame(sample_fields(Opcode::RcAcknowledge, {LinkKind::RoceV2Ipv6, false}));
  const auto r = parse(frame, LinkType::Ethernet);
  ASSERT_TRUE(r);
  const std::uint32_t v = compute_icrc(frame, r->layout);
  EXPECT_EQ(frame[r->layout.icrc_offset], static_cast<std::byte>(v & 0xFF));
  EXPECT_EQ(frame[r->layout.icrc_offset + 3], static_cast<std::byte>(v >> 24));
}

TEST(Icrc, Ipv6UdpChecksumIsComputedAndVerified) {
  auto frame = sample_frame(sample_fields(Opcode::RcSendOnly, {LinkKind::RoceV2Ipv6, true}));
  auto r = parse(frame, LinkType::Ethernet);
  ASSERT_TRUE(r);
  EXPECT_NE(r->udp_checksum, 0);
  EXPECT_TRUE(udp_checksum_ok(frame, *r));
  frame[r->layout.payload_offset] ^= std::byte{1};
  EXPECT_FALSE(udp_checksum_ok(frame, *r));
  EXPECT_FALSE(icrc_ok(frame, *r));
}


// ECN marking (what a switch does): ECT becomes CE, the IPv4 header checksum
// follows, the ICRC stays valid; Not-ECT and IB packets are left alone.
TEST(EcnMark, CongestionExperiencedKeepsChecksumsAndIcrc) {
  using namespace testing;
  for (const LinkVariant lv : all_link_variants()) {
    SCOPED_TRACE(lv.name());
    for (const std::uint8_t ecn : {0, 1, 2, 3}) {
      PacketFields f = sample_fields(Opcode::RcRdmaWriteOnly, lv, 13);
      f.ecn = ecn;
      derive_fields(f);
      const auto payload = sample_payload(13);
      std::vector<std::byte> frame(frame_length(f));
      ASSERT_TRUE(build(f, payload, frame));
      const std::vector<std::byte> before = frame;
      const bool marked = mark_congestion_experienced(frame);
      if (!is_roce(lv.link)) {
        EXPECT_FALSE(marked);
        EXPECT_EQ(frame, before);
        continue;
      }
      EXPECT_EQ(marked, ecn != 0);
      auto p = parse(frame, LinkType::Ethernet);
      ASSERT_TRUE(p);
      EXPECT_EQ(p->fields.ecn, ecn == 0 ? 0 : 3);
      EXPECT_EQ(p->fields.dscp, f.dscp);
      EXPECT_TRUE(icrc_ok(frame, *p));
      EXPECT_TRUE(ipv4_checksum_ok(frame, *p));
      EXPECT_TRUE(udp_checksum_ok(frame, *p));
      if (ecn == 0) {
        EXPECT_EQ(frame, before);
      }
    }
  }
}

// A switch updates the IPv4 header checksum incrementally: marking does not
// repair a header whose checksum was already wrong (found by fuzz/packet_fuzzer).
// An RDMA WRITE ONLY over untagged IPv4 whose IP header says `ecn`.
std::vector<std::byte> ipv4_write(std::uint8_t ecn) {
  using namespace testing;
  PacketFields f = sample_fields(Opcode::RcRdmaWriteOnly, {LinkKind::RoceV2Ipv4, false}, 13);
  f.ecn = ecn;
  derive_fields(f);
  std::vector<std::byte> frame(frame_length(f));
  EXPECT_TRUE(build(f, sample_payload(13), frame));
  return frame;
}

TEST(EcnMark, WrongIpv4ChecksumStaysWrong) {
  std::vector<std::byte> frame = ipv4_write(1);
  frame[14 + 10] ^= std::byte{0x5A};  // the IPv4 header checksum
  ASSERT_TRUE(mark_congestion_experienced(frame));
  auto p = parse(frame, LinkType::Ethernet);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->fields.ecn, 3);
  EXPECT_FALSE(ipv4_checksum_ok(frame, *p));
  EXPECT_TRUE(icrc_ok(frame, *p));
}

TEST(EcnMark, TruncatedFramesAreLeftAlone) {
  const std::vector<std::byte> frame = ipv4_write(2);
  for (std::size_t n = 0; n < 34; ++n) {
    std::vector<std::byte> cut(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(n));
    const auto copy = cut;
    EXPECT_FALSE(mark_congestion_experienced(cut)) << n;
    EXPECT_EQ(cut, copy);
  }
}

}  // namespace
}  // namespace rnicsim::packet
