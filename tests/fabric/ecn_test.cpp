// RED/WRED-style ECN marking: the probability profile and the marking of real
// frames, with a deterministic random stream.
#include <gtest/gtest.h>

#include <vector>

#include "fabric/ecn.hpp"
#include "packet/packet.hpp"

using namespace rnicsim;
using fabric::EcnParams;

namespace {

EcnParams profile() {
  EcnParams p;
  p.enabled = true;
  p.kmin_bytes = 100'000;
  p.kmax_bytes = 200'000;
  p.pmax = 0.1;
  return p;
}

TEST(Ecn, ProbabilityProfile) {
  const EcnParams p = profile();
  EXPECT_EQ(fabric::ecn_mark_probability(p, 0), 0.0);
  EXPECT_EQ(fabric::ecn_mark_probability(p, 100'000), 0.0);
  EXPECT_DOUBLE_EQ(fabric::ecn_mark_probability(p, 150'000), 0.05);
  EXPECT_DOUBLE_EQ(fabric::ecn_mark_probability(p, 199'999), 0.1 * 99'999 / 100'000);
  EXPECT_EQ(fabric::ecn_mark_probability(p, 200'000), 1.0);
  EcnParams off = p;
  off.enabled = false;
  EXPECT_EQ(fabric::ecn_mark_probability(off, 1'000'000), 0.0);
}

fabric::Frame ect_frame(fabric::FramePool& pool, uint8_t ecn) {
  packet::PacketFields f;
  f.link = packet::LinkKind::RoceV2Ipv4;
  f.opcode = packet::Opcode::RcRdmaWriteMiddle;
  f.ip_src = packet::ipv4_mapped(0x0A000001);
  f.ip_dst = packet::ipv4_mapped(0x0A000002);
  f.ecn = ecn;
  f.payload_length = 256;
  packet::derive_fields(f);
  fabric::Frame frame = pool.acquire(packet::frame_length(f));
  std::vector<std::byte> payload(256, std::byte{0x5A});
  EXPECT_TRUE(packet::build(f, payload, frame.bytes()));
  return frame;
}

TEST(Ecn, MarksAboutTheProbabilityOfItsQueueDepth) {
  fabric::FramePool pool(2048);
  sim::RandomStream rng(1, "ecn-test");
  int marked = 0;
  for (int i = 0; i < 10'000; ++i) {
    fabric::Frame f = ect_frame(pool, 0b10);
    if (fabric::ecn_maybe_mark(profile(), 150'000, f, rng)) {
      ++marked;
      auto p = packet::parse(f.bytes(), packet::LinkType::Ethernet);
      ASSERT_TRUE(p);
      EXPECT_EQ(p->fields.ecn, 3);
      EXPECT_TRUE(packet::icrc_ok(f.bytes(), *p));
      EXPECT_TRUE(packet::ipv4_checksum_ok(f.bytes(), *p));
    }
  }
  EXPECT_GT(marked, 400);  // 5 % of 10 000 = 500
  EXPECT_LT(marked, 600);
  // Above Kmax every ECN-capable frame is marked; a Not-ECT frame never is.
  fabric::Frame deep = ect_frame(pool, 0b01);
  EXPECT_TRUE(fabric::ecn_maybe_mark(profile(), 250'000, deep, rng));
  fabric::Frame not_ect = ect_frame(pool, 0);
  EXPECT_FALSE(fabric::ecn_maybe_mark(profile(), 250'000, not_ect, rng));
}

}  // namespace
