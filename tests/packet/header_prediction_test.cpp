// HeaderPrediction gives what parse() gives: for every opcode over every link
// variant, for the next packet of a stream (predicted), for frames that differ
// anywhere else (parsed in full), and for interleaved QPs.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "packet/header_prediction.hpp"
#include "packet/packet.hpp"
#include "tests/packet/sample_packets.hpp"

namespace rnicsim::packet {
namespace {

using testing::all_link_variants;
using testing::all_valid_opcodes;
using testing::link_type_of;
using testing::sample_fields;
using testing::sample_frame;

void expect_same(const ParseResult<ParsedPacket>& got, const ParseResult<ParsedPacket>& want) {
  ASSERT_EQ(got.has_value(), want.has_value());
  if (!want) {
    EXPECT_EQ(got.error(), want.error());
    return;
  }
  EXPECT_EQ(got->fields, want->fields);
  EXPECT_EQ(got->layout, want->layout);
  EXPECT_EQ(got->payload.data(), want->payload.data());
  EXPECT_EQ(got->payload.size(), want->payload.size());
  EXPECT_EQ(got->icrc, want->icrc);
  EXPECT_EQ(got->vcrc, want->vcrc);
  EXPECT_EQ(got->trailer_length, want->trailer_length);
  EXPECT_EQ(got->udp_checksum, want->udp_checksum);
  EXPECT_EQ(got->missing, want->missing);
}

// The next packet of the same stream: other PSN, AckReq, SE, IPv4 id, UDP
// checksum, AETH and payload bytes (and so other CRCs).
PacketFields next_packet(PacketFields f) {
  f.psn = f.psn + 0x10001;
  f.ack_req = !f.ack_req;
  f.solicited = !f.solicited;
  f.ipv4_id = static_cast<std::uint16_t>(f.ipv4_id + 77);
  if (f.aeth) f.aeth = AethFields{Syndrome(static_cast<std::uint8_t>(f.aeth->syndrome.raw() ^ 0x60)), (f.aeth->msn + 3) & 0xFFFFFF};
  return f;
}

void set_udp_checksum(std::vector<std::byte>& frame, const PacketFields& f, std::uint16_t v) {
  if (!is_roce(f.link)) return;
  const auto p = parse(frame, LinkType::Ethernet);
  ASSERT_TRUE(p);
  frame[p->layout.bth_offset - 2] = static_cast<std::byte>(v >> 8);
  frame[p->layout.bth_offset - 1] = static_cast<std::byte>(v & 0xFF);
}

TEST(HeaderPrediction, TheNextPacketOfEveryOpcodeIsPredicted) {
  int checked = 0;
  for (const auto& lv : all_link_variants()) {
    for (Opcode op : all_valid_opcodes()) {
      SCOPED_TRACE(std::string(to_string(op)) + " over " + lv.name());
      for (const bool read_crcs : {true, false}) {
        HeaderPrediction hp;
        const PacketFields a = sample_fields(op, lv);
        const PacketFields b = next_packet(a);
        auto fa = sample_frame(a, 1);
        auto fb = sample_frame(b, 2);
        set_udp_checksum(fb, b, 0x5A5A);
        const LinkType lt = link_type_of(lv.link);
        expect_same(hp.parse(fa, lt, 0, read_crcs), parse(fa, lt, 0, read_crcs));
        EXPECT_EQ(hp.predicted(), 0u);
        expect_same(hp.parse(fb, lt, 0, read_crcs), parse(fb, lt, 0, read_crcs));
        EXPECT_EQ(hp.predicted(), 1u);
        // And back: the kept packet follows the stream.
        expect_same(hp.parse(fa, lt, 0, read_crcs), parse(fa, lt, 0, read_crcs));
        EXPECT_EQ(hp.predicted(), 2u);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 6 * 38 * 2);
}

TEST(HeaderPrediction, AnyOtherChangeIsParsedInFull) {
  // Every single-byte change of the headers (and every truncation by a byte)
  // after a kept packet: the answer is parse()'s, error or not.
  std::mt19937 rng(7);
  uint64_t differs = 0;
  for (const auto& lv : all_link_variants()) {
    for (Opcode op : all_valid_opcodes()) {
      SCOPED_TRACE(std::string(to_string(op)) + " over " + lv.name());
      const PacketFields a = sample_fields(op, lv);
      const auto fa = sample_frame(a);
      const LinkType lt = link_type_of(lv.link);
      const auto pa = parse(fa, lt);
      ASSERT_TRUE(pa);
      for (std::size_t at = 0; at < pa->layout.payload_offset; ++at) {
        HeaderPrediction hp;
        (void)hp.parse(fa, lt);
        auto fb = fa;
        fb[at] ^= static_cast<std::byte>(1u << (rng() % 8));
        const auto want = parse(fb, lt);
        expect_same(hp.parse(fb, lt), want);
        if (!want || !(want->fields == pa->fields)) ++differs;
      }
      HeaderPrediction hp;
      (void)hp.parse(fa, lt);
      const std::span<const std::byte> shorter(fa.data(), fa.size() - 1);
      expect_same(hp.parse(shorter, lt), parse(shorter, lt));
      expect_same(hp.parse(fa, lt, fa.size() + 4), parse(fa, lt, fa.size() + 4));
    }
  }
  EXPECT_GT(differs, 0u);
}

TEST(HeaderPrediction, InterleavedQpsAreEachPredicted) {
  const auto lv = all_link_variants().front();
  HeaderPrediction hp;
  std::vector<PacketFields> qps;
  for (std::uint32_t q = 0; q < 4; ++q) {
    PacketFields f = sample_fields(Opcode::RcRdmaWriteMiddle, lv);
    f.dest_qp = packet::Qpn(0x100 + q);
    qps.push_back(f);
  }
  for (int round = 0; round < 3; ++round) {
    for (PacketFields& f : qps) {
      f = next_packet(f);
      const auto frame = sample_frame(f);
      expect_same(hp.parse(frame, LinkType::Ethernet), parse(frame, LinkType::Ethernet));
    }
  }
  EXPECT_EQ(hp.predicted(), 8u);  // all but each QP's first packet
}

}  // namespace
}  // namespace rnicsim::packet
