// Malformed and hostile packets injected into the fabric, in front of a QP that
// is about to run a transfer: each is counted under the receiving NIC's
// counter for its fault and dropped, and the QP is unharmed (the transfer that
// follows completes and its bytes are exact). Every packet aims at the QP's
// expected PSN and at its registered buffer, so one that got through would
// show: a PSN taken, bytes written, a receive consumed.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "nic_fixture.hpp"
#include "packet/packet.hpp"

using namespace rnicsim;
using namespace rnicsim::nictest;

namespace {

using Counter = uint64_t RxPipeline::Counters::*;

// RoCEv2/IPv4 offsets of a frame without VLAN tag.
constexpr size_t kIp = 14, kUdp = 34, kBth = 42;
constexpr size_t kStray = 1 << 20;  // where the hostile WRITEs aim in the target's buffer

struct Target {
  TestBed& bed;
  Endpoint& to;
};

// A packet from the QP's peer to the QP, at its expected PSN (0).
packet::PacketFields from_peer(const Target& t, packet::Opcode op, uint32_t payload = 64) {
  packet::PacketFields f = peer_packet(t.bed, t.to, op, 0, payload);
  const auto& info = packet::opcode_info(op);
  if (info.has(packet::Hdr::Reth)) f.reth = packet::RethFields{t.to.buffer + kStray, t.to.mr.rkey, payload};
  if (info.has(packet::Hdr::Deth)) f.deth = packet::DethFields{packet::Qkey(0x11111111), packet::Qpn(0x22)};
  return f;
}

// Builds `f` (sealed: correct checksums and ICRC) with a payload of 0xEE bytes.
std::vector<std::byte> build(const packet::PacketFields& f) { return build_packet(f, std::byte{0xEE}); }

std::vector<std::byte> write_only(const Target& t) { return build(from_peer(t, packet::Opcode::RcRdmaWriteOnly)); }

// A well-formed WRITE ONLY with one byte changed.
std::function<std::vector<std::byte>(const Target&)> poke(size_t at, uint8_t value) {
  return [=](const Target& t) {
    auto b = write_only(t);
    b[at] = std::byte{value};
    return b;
  };
}

struct Row {
  std::string name;
  std::function<std::vector<std::byte>(const Target&)> make;
  Counter counter;
};

const std::vector<Row>& rows() {
  using C = RxPipeline::Counters;
  static const std::vector<Row> table = {
      // Link and network layers: the packet layer refuses them.
      {"truncated Ethernet header", [](const Target&) { return std::vector<std::byte>(10, std::byte{0xFF}); },
       &C::malformed},
      {"EtherType not IP", poke(12, 0x88), &C::malformed},
      {"IP version 5 in an IPv4 EtherType", poke(kIp, 0x55), &C::malformed},
      {"IPv4 fragment (MF set)", poke(kIp + 6, 0x20), &C::malformed},
      {"IP protocol TCP", poke(kIp + 9, 6), &C::malformed},
      {"UDP port 4792", poke(kUdp + 3, 0xB8), &C::malformed},
      {"IP total length beyond the frame", poke(kIp + 3, 0xF0), &C::malformed},
      {"UDP length disagreeing with IP", poke(kUdp + 5, 0x01), &C::malformed},
      {"cut inside the BTH",
       [](const Target& t) {
         auto b = write_only(t);
         b.resize(kBth + 6);
         b[kIp + 2] = std::byte{0};
         b[kIp + 3] = std::byte{static_cast<uint8_t>(b.size() - kIp)};
         b[kUdp + 4] = std::byte{0};
         b[kUdp + 5] = std::byte{static_cast<uint8_t>(b.size() - kUdp)};
         return b;
       },
       &C::malformed},
      // Transport headers the packet layer refuses.
      {"reserved opcode 0x1F", poke(kBth, 0x1F), &C::malformed},
      {"BTH TVer 1", poke(kBth + 1, 0x01), &C::malformed},
      {"pad count beyond the payload",
       [](const Target& t) {
         auto f = from_peer(t, packet::Opcode::RcRdmaWriteOnly, 0);
         auto b = build(f);
         b[kBth + 1] = std::byte{0x30};  // pad 3 with no payload
         return b;
       },
       &C::malformed},
      {"WRITE MIDDLE shorter than a PMTU", [](const Target& t) { return build(from_peer(t, packet::Opcode::RcRdmaWriteMiddle, 100)); },
       &C::malformed},
      // Intact headers, changed on the way: the ICRC says so.
      {"payload byte changed", [](const Target& t) {
         auto b = write_only(t);
         b[kBth + 12 + 16 + 5] ^= std::byte{0x01};
         return b;
       },
       &C::bad_icrc},
      {"RETH rkey changed", [](const Target& t) {
         auto b = write_only(t);
         b[kBth + 12 + 8] ^= std::byte{0x40};
         return b;
       },
       &C::bad_icrc},
      // Well-formed, sealed packets the transport header checks refuse.
      {"destination QP that does not exist",
       [](const Target& t) {
         auto f = from_peer(t, packet::Opcode::RcRdmaWriteOnly);
         f.dest_qp = packet::Qpn(0xABCDE);
         return build(f);
       },
       &C::unknown_qp},
      {"UD SEND to an RC QP", [](const Target& t) { return build(from_peer(t, packet::Opcode::UdSendOnly)); },
       &C::wrong_transport},
      {"UC WRITE to an RC QP", [](const Target& t) { return build(from_peer(t, packet::Opcode::UcRdmaWriteOnly)); },
       &C::wrong_transport},
      {"P_Key 0x1234",
       [](const Target& t) {
         auto f = from_peer(t, packet::Opcode::RcRdmaWriteOnly);
         f.pkey = 0x1234;
         return build(f);
       },
       &C::bad_pkey},
      {"WRITE from an address that is not the QP's peer",
       [](const Target& t) {
         auto f = from_peer(t, packet::Opcode::RcRdmaWriteOnly);
         f.ip_src[15] = 99;  // 10.0.0.99
         return build(f);
       },
       &C::wrong_source},
      {"SEND from an address that is not the QP's peer",
       [](const Target& t) {
         auto f = from_peer(t, packet::Opcode::RcSendOnly);
         f.ip_src[15] = 99;
         return build(f);
       },
       &C::wrong_source},
  };
  return table;
}

const std::vector<Counter>& all_counters() {
  using C = RxPipeline::Counters;
  static const std::vector<Counter> all = {&C::malformed, &C::bad_icrc, &C::unknown_qp, &C::wrong_transport,
                                           &C::bad_pkey, &C::wrong_source};
  return all;
}

// Each hostile packet through a NIC of `units` receive units (steered by the
// BTH read before parsing, which a hostile frame may not have).
void each_counted_and_dropped(uint32_t units) {
  NicParams p;
  p.responder_units = units;
  p.rkey_check_cycles = 10;  // the opcode read before parsing, too
  TestBed bed(0, 0, 7, 100'000'000'000, sim::Duration::us(1), p);
  auto [x, y] = bed.pair();
  y->post_recv(y->recv_wqe(1, 0, 4096));  // a hostile SEND that got through would take it
  const Target t{bed, *y};
  for (const Row& row : rows()) {
    SCOPED_TRACE(row.name);
    const RxPipeline::Counters before = y->nic().rx_pipeline().counters();
    deliver_to_b(bed, row.make(t));
    const RxPipeline::Counters& after = y->nic().rx_pipeline().counters();
    for (Counter c : all_counters()) EXPECT_EQ(after.*c - before.*c, c == row.counter ? 1u : 0u);
    const QpContext* q = y->nic().qp(y->qpn);
    EXPECT_EQ(q->state, QpState::Rts);
    EXPECT_EQ(q->epsn, Psn(0)) << "a PSN was taken";
    EXPECT_EQ(y->nic().responder().counters().requests, 0u) << "it reached the responder";
    EXPECT_TRUE(y->cqes.empty());
    EXPECT_TRUE(x->cqes.empty()) << "it made the NIC answer";
  }
  EXPECT_TRUE(all_zero(y->bytes(kStray, 4096))) << "a hostile WRITE landed";

  // The QP is unharmed: a transfer from its peer completes with exact bytes.
  fill_random(x->bytes(0, 256 * 1024), 3);
  x->post_send(x->write_wqe(10, 0, 256 * 1024, *y, 0));
  x->post_send(x->send_wqe(11, 0, 4096));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 2u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_EQ(x->cqes[1].cqe.status, WcStatus::Success);
  ASSERT_EQ(y->cqes.size(), 1u);
  EXPECT_EQ(y->cqes[0].cqe.wr_id, 1u);
  EXPECT_EQ(y->cqes[0].cqe.byte_len, 4096u);
  EXPECT_TRUE(same(y->bytes(0, 256 * 1024), x->bytes(0, 256 * 1024)));
  EXPECT_EQ(x->nic().stats().retransmitted_packets, 0u);
}

TEST(HostilePackets, EachIsCountedUnderItsFaultAndDropped) { each_counted_and_dropped(1); }
TEST(HostilePackets, EachIsCountedAndDroppedWithProcessingUnits) { each_counted_and_dropped(4); }

// The peer's own packets pass the same checks: nothing legitimate is refused.
TEST(HostilePackets, ThePeersTrafficPassesEveryCheck) {
  TestBed bed;
  auto [x, y] = bed.pair();
  fill_random(x->bytes(0, 64 * 1024), 4);
  x->post_send(x->write_wqe(1, 0, 64 * 1024, *y, 0));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  for (Counter c : all_counters()) {
    EXPECT_EQ(y->nic().rx_pipeline().counters().*c, 0u);
    EXPECT_EQ(x->nic().rx_pipeline().counters().*c, 0u);
  }
}

}  // namespace
