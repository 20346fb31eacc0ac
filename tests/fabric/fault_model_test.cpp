// The fault model on a port: rules on the Nth matching packet, in a row or
// periodic (drop, corrupt under the ICRC, delay with reordering).
#include "fabric/fault_model.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "fabric/port.hpp"
#include "packet/packet.hpp"

using namespace rnicsim;
using namespace rnicsim::sim::literals;

namespace {

struct Recorder : fabric::FrameSink {
  sim::Simulator& sim;
  std::vector<uint32_t> psns;
  std::vector<sim::Time> at;
  std::vector<bool> icrc_good;
  explicit Recorder(sim::Simulator& s) : sim(s) {}
  void receive(fabric::Frame&& f) override {
    auto p = packet::parse(f.bytes(), packet::LinkType::Ethernet);
    ASSERT_TRUE(p);
    psns.push_back(p->fields.psn.value());
    at.push_back(sim.now());
    icrc_good.push_back(packet::icrc_ok(f.bytes(), *p));
  }
};

fabric::Frame write_middle(fabric::FramePool& pool, uint32_t psn, uint32_t qpn = 0x11) {
  packet::PacketFields f;
  f.link = packet::LinkKind::RoceV2Ipv4;
  f.opcode = psn == 0 ? packet::Opcode::RcRdmaWriteFirst : packet::Opcode::RcRdmaWriteMiddle;
  f.ip_src = packet::ipv4_mapped(0x0A000001);
  f.ip_dst = packet::ipv4_mapped(0x0A000002);
  f.psn = packet::Psn(psn);
  f.dest_qp = packet::Qpn(qpn);
  f.payload_length = 256;
  if (psn == 0) f.reth = packet::RethFields{0x1000, packet::Rkey(7), 1 << 20};
  packet::derive_fields(f);
  fabric::Frame frame = pool.acquire(packet::frame_length(f));
  std::vector<std::byte> payload(256, std::byte{0x33});
  EXPECT_TRUE(packet::build(f, payload, frame.bytes()));
  return frame;
}

fabric::Frame acknowledge(fabric::FramePool& pool, uint32_t psn, packet::Syndrome syndrome) {
  packet::PacketFields f;
  f.link = packet::LinkKind::RoceV2Ipv4;
  f.opcode = packet::Opcode::RcAcknowledge;
  f.ip_src = packet::ipv4_mapped(0x0A000002);
  f.ip_dst = packet::ipv4_mapped(0x0A000001);
  f.psn = packet::Psn(psn);
  f.dest_qp = packet::Qpn(0x11);
  f.aeth = packet::AethFields{syndrome, psn};
  packet::derive_fields(f);
  fabric::Frame frame = pool.acquire(packet::frame_length(f));
  EXPECT_TRUE(packet::build(f, {}, frame.bytes()));
  return frame;
}

struct Wire {
  sim::Simulator s{5};
  fabric::FramePool pool{2048};
  fabric::Port a{s, "a", {}}, b{s, "b", {}};
  Recorder rx{s};
  Wire() {
    fabric::Port::connect(a, b);
    b.set_receiver(&rx);
  }
  void send(uint32_t n, uint32_t qpn = 0x11) {
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_TRUE(a.send(write_middle(pool, i, qpn)));
      s.scheduler().run_until(sim::Time::max());  // one at a time: the queue never fills
    }
  }
};

TEST(FaultModel, RuleDropsTheNthMatchingPacketsOnly) {
  Wire w;
  fabric::FaultRule r;
  r.match.opcode = packet::Opcode::RcRdmaWriteMiddle;
  r.match.dest_qp = packet::Qpn(0x11);
  r.nth = 3;
  r.count = 2;
  w.a.faults().add_rule(r);
  w.send(10);
  w.send(5, 0x12);  // another QP: not matched
  // Middles are PSN 1..9: the 3rd and 4th are PSN 3 and 4.
  const std::vector<uint32_t> want = {0, 1, 2, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4};
  EXPECT_EQ(w.rx.psns, want);
  EXPECT_EQ(w.a.fault_model()->counters().rule_drops, 2u);
}

// every: the 2nd matching packet and every 4th after it, on one QP only, with no end.
TEST(FaultModel, PeriodicRuleDropsEveryNthPacketOfAQp) {
  Wire w;
  fabric::FaultRule r;
  r.match.dest_qp = packet::Qpn(0x11);
  r.nth = 2;
  r.every = 4;
  r.count = 0;
  w.a.faults().add_rule(r);
  w.send(12);
  w.send(3, 0x12);
  const std::vector<uint32_t> want = {0, 2, 3, 4, 6, 7, 8, 10, 11, 0, 1, 2};
  EXPECT_EQ(w.rx.psns, want);
  EXPECT_EQ(w.a.fault_model()->counters().rule_drops, 3u);
}

// aeth: nak drops the NAKs (of any code) and nothing else: not ACKs, not RNR
// NAKs, not requests, which carry no AETH.
TEST(FaultModel, RuleOnTheAethKindDropsOnlyThatKindOfAcknowledgement) {
  Wire w;
  fabric::FaultRule r;
  r.match.ack_kind = packet::AckKind::Nak;
  r.count = 0;
  w.a.faults().add_rule(r);
  const packet::Syndrome kinds[] = {packet::Syndrome::ack(), packet::Syndrome::nak(packet::NakCode::PsnSequenceError),
                                    packet::Syndrome::rnr_nak(12), packet::Syndrome::nak(packet::NakCode::InvalidRequest),
                                    packet::Syndrome::ack()};
  for (uint32_t i = 0; i < std::size(kinds); ++i) {
    ASSERT_TRUE(w.a.send(acknowledge(w.pool, 100 + i, kinds[i])));
    w.s.scheduler().run_until(sim::Time::max());
  }
  w.send(2);
  EXPECT_EQ(w.rx.psns, (std::vector<uint32_t>{100, 102, 104, 0, 1}));
  EXPECT_EQ(w.a.fault_model()->counters().rule_drops, 2u);
}

TEST(FaultModel, PeriodicRuleStopsAfterCountActs) {
  fabric::FaultRule r;
  r.nth = 3;
  r.every = 10;
  r.count = 2;
  std::vector<uint64_t> acts;
  for (uint64_t n = 1; n <= 40; ++n)
    if (fabric::FaultModel::acts_on(r, n)) acts.push_back(n);
  EXPECT_EQ(acts, (std::vector<uint64_t>{3, 13}));
}

TEST(FaultModel, RuleOnPsnCorruptsUnderTheIcrc) {
  Wire w;
  fabric::FaultRule r;
  r.match.psn = packet::Psn(6);
  r.action = fabric::FaultAction::Corrupt;
  r.count = 1;
  w.a.faults().add_rule(r);
  w.send(10);
  ASSERT_EQ(w.rx.psns.size(), 10u);
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(w.rx.icrc_good[i], i != 6) << i;
  EXPECT_EQ(w.a.fault_model()->counters().corrupted, 1u);
}

TEST(FaultModel, DelayRuleReordersAndAddsItsDelay) {
  Wire w;
  fabric::FaultRule r;
  r.match.psn = packet::Psn(2);
  r.action = fabric::FaultAction::Delay;
  r.delay = 10_us;
  w.a.faults().add_rule(r);
  // Back to back, so that later packets overtake the delayed one.
  for (uint32_t i = 0; i < 5; ++i) ASSERT_TRUE(w.a.send(write_middle(w.pool, i)));
  w.s.scheduler().run_until(sim::Time::max());
  const std::vector<uint32_t> want = {0, 1, 3, 4, 2};
  EXPECT_EQ(w.rx.psns, want);
  EXPECT_GT(w.rx.at[4] - w.rx.at[3], 9_us);
  EXPECT_EQ(w.pool.in_use(), 0u);
}

}  // namespace
