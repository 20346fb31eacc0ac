// Deterministic loss of chosen packets: exactly one recovery episode, exactly-once
// delivery. A filter between the wire and the receiving NIC drops the packets
// a rule names (by BTH opcode class and PSN).
#include <gtest/gtest.h>

#include <functional>

#include "nic_fixture.hpp"
#include "packet/packet.hpp"

using namespace rnicsim;
using namespace rnicsim::nictest;

namespace {

// Sits between a port and its NIC; drops the frames `rule` picks (each once).
struct DropFilter : fabric::FrameSink {
  fabric::FrameSink* next = nullptr;
  std::function<bool(const packet::PacketFields&)> rule;
  uint64_t dropped = 0;
  void receive(fabric::Frame&& f) override {
    auto p = packet::parse(f.bytes(), packet::LinkType::Ethernet);
    if (p && rule && rule(p->fields)) {
      ++dropped;
      return;
    }
    next->receive(std::move(f));
  }
};

bool is_request(const packet::PacketFields& f) { return !packet::opcode_info(f.opcode).is_response(); }

struct Dropping {
  TestBed bed;
  DropFilter to_b, to_a;
  Dropping() {
    to_b.next = bed.b().nic.get();
    to_a.next = bed.a().nic.get();
    bed.b().port->set_receiver(&to_b);
    bed.a().port->set_receiver(&to_a);
  }
};

TEST(DropRule, OneLostWritePacketIsOneGoBackNEpisode) {
  Dropping d;
  QpOptions o;
  o.path_mtu = 1024;
  auto [x, y] = d.bed.pair(o);
  fill_random(x->bytes(0, 16384), 1);
  bool once = false;
  d.to_b.rule = [&](const packet::PacketFields& f) {
    if (!is_request(f) || f.psn != Psn(4) || once) return false;
    return once = true;
  };
  x->post_send(x->write_wqe(1, 0, 16384, *y, 0));  // 16 packets, PSN 0..15
  d.bed.run();
  EXPECT_EQ(d.to_b.dropped, 1u);
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_TRUE(std::equal(x->bytes(0, 16384).begin(), x->bytes(0, 16384).end(), y->bytes(0, 16384).begin()));
  const auto& rc = y->nic().responder().counters();
  EXPECT_EQ(x->nic().completer().naks(), 1u) << "one NAK (PSN sequence error)";
  EXPECT_EQ(rc.out_of_sequence, 11u) << "PSNs 5..15 arrived after the gap";
  EXPECT_EQ(x->nic().stats().retransmitted_packets, 12u) << "go-back-N from PSN 4: 4..15 again";
  EXPECT_EQ(rc.duplicates, 0u);
  EXPECT_EQ(x->nic().completer().timeouts(), 0u);
}

TEST(DropRule, LostSendPacketDeliversTheMessageOnce) {
  Dropping d;
  QpOptions o;
  o.path_mtu = 1024;
  auto [x, y] = d.bed.pair(o);
  fill_random(x->bytes(0, 8192), 2);
  int seen = 0;
  d.to_b.rule = [&](const packet::PacketFields& f) { return is_request(f) && f.psn == Psn(2) && seen++ == 0; };
  for (uint64_t i = 0; i < 3; ++i) y->post_recv(y->recv_wqe(i, i * 8192, 8192));
  x->post_send(x->send_wqe(7, 0, 5000));  // 5 packets
  x->post_send(x->send_wqe(8, 0, 100));
  d.bed.run();
  ASSERT_EQ(y->cqes.size(), 2u) << "two messages, two receives: none consumed twice";
  EXPECT_EQ(y->cqes[0].cqe.byte_len, 5000u);
  EXPECT_EQ(y->cqes[1].cqe.byte_len, 100u);
  EXPECT_TRUE(std::equal(x->bytes(0, 5000).begin(), x->bytes(0, 5000).end(), y->bytes(0, 5000).begin()));
  EXPECT_EQ(x->cqes.size(), 2u);
}

TEST(DropRule, LostAckIsRecoveredByTimeoutAndDuplicate) {
  Dropping d;
  QpOptions o;
  o.timeout = 8;  // 1.05 ms
  auto [x, y] = d.bed.pair(o);
  int acks = 0;
  d.to_a.rule = [&](const packet::PacketFields& f) { return f.opcode == packet::Opcode::RcAcknowledge && acks++ == 0; };
  x->post_send(x->write_wqe(1, 0, 64, *y, 0));
  const sim::Time start = d.bed.sim.now();
  d.bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_EQ(x->nic().completer().timeouts(), 1u);
  EXPECT_EQ(y->nic().responder().counters().duplicates, 1u) << "the resent WRITE is a duplicate: ACKed, not written again";
  EXPECT_GE(x->cqes[0].at - start, nic::local_ack_timeout(8));
}

TEST(DropRule, LostLastPacketWaitsForTheTimeout) {
  Dropping d;
  QpOptions o;
  o.path_mtu = 1024;
  o.timeout = 8;
  auto [x, y] = d.bed.pair(o);
  fill_random(x->bytes(0, 4096), 3);
  int seen = 0;
  d.to_b.rule = [&](const packet::PacketFields& f) { return is_request(f) && f.psn == Psn(3) && seen++ == 0; };
  x->post_send(x->write_wqe(1, 0, 4096, *y, 0));  // PSN 0..3: the last is lost, nothing after it shows the gap
  d.bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_EQ(x->nic().completer().timeouts(), 1u);
  EXPECT_EQ(x->nic().completer().naks(), 0u);
  EXPECT_TRUE(std::equal(x->bytes(0, 4096).begin(), x->bytes(0, 4096).end(), y->bytes(0, 4096).begin()));
}

}  // namespace
