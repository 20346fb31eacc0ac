// The transmit pipeline defers ICRC computation until someone looks at a frame
// (fabric::Frame::defer_seal). Whatever touches a frame on the way sees correct
// CRCs, and a frame it changed is checked, and counted, by the receiver.
#include <gtest/gtest.h>

#include <vector>

#include "nic_fixture.hpp"
#include "packet/packet.hpp"

using namespace rnicsim;
using namespace rnicsim::nictest;

namespace {

// Sits between host b's port and its NIC: looks at (or flips one bit of) chosen frames.
struct FaultModel : fabric::FrameSink {
  Nic* nic = nullptr;
  int seen = 0;
  int corrupt_index = -1;   // flip a payload bit of this frame (counting from 0)
  bool check_icrc = false;  // parse every frame and check its ICRC as a capture tool would
  int icrc_good = 0, icrc_bad = 0;
  void receive(fabric::Frame&& f) override {
    if (check_icrc) {
      const auto bytes = f.bytes();  // completes a deferred seal
      const auto p = packet::parse(bytes, packet::LinkType::Ethernet);
      if (p && packet::icrc_ok(bytes, *p)) ++icrc_good;
      else ++icrc_bad;
    }
    if (seen++ == corrupt_index) f.bytes()[f.size() - 100] ^= std::byte{0x10};
    nic->receive(std::move(f));
  }
};

TEST(DeferredIcrc, EveryFrameLookedAtHasACorrectIcrc) {
  TestBed bed;
  auto [x, y] = bed.pair();
  FaultModel fault;
  fault.nic = bed.b().nic.get();
  fault.check_icrc = true;
  bed.b().port->set_receiver(&fault);
  fill_random(x->bytes(0, 64 * 1024), 5);
  x->post_send(x->write_wqe(1, 0, 64 * 1024, *y, 0));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_EQ(fault.icrc_good, 16);
  EXPECT_EQ(fault.icrc_bad, 0);
  EXPECT_EQ(y->nic().rx_pipeline().counters().bad_icrc, 0u);
  EXPECT_TRUE(same(y->bytes(0, 64 * 1024), x->bytes(0, 64 * 1024)));
}

TEST(DeferredIcrc, FrameChangedOnTheWayIsCountedAndRecovered) {
  TestBed bed;
  auto [x, y] = bed.pair();
  FaultModel fault;
  fault.nic = bed.b().nic.get();
  fault.corrupt_index = 3;
  bed.b().port->set_receiver(&fault);
  fill_random(x->bytes(0, 64 * 1024), 6);
  x->post_send(x->write_wqe(1, 0, 64 * 1024, *y, 0));
  bed.run();
  EXPECT_EQ(y->nic().rx_pipeline().counters().bad_icrc, 1u);
  EXPECT_GT(x->nic().stats().retransmitted_packets, 0u);  // the dropped packet was sent again
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_TRUE(same(y->bytes(0, 64 * 1024), x->bytes(0, 64 * 1024)));
}

TEST(DeferredIcrc, HandBuiltFrameWithBadIcrcIsCounted) {
  TestBed bed;
  auto [x, y] = bed.pair();
  // A WRITE ONLY to y's QP, built and sealed by hand, then one payload byte changed.
  packet::PacketFields f;
  f.opcode = packet::Opcode::RcRdmaWriteOnly;
  f.dest_qp = y->qpn;
  f.psn = packet::Psn(0);
  f.payload_length = 8;
  f.reth = packet::RethFields{y->buffer, y->mr.rkey, 8};
  packet::derive_fields(f);
  fabric::Frame frame = bed.pool.acquire(packet::frame_length(f));
  const std::vector<std::byte> payload(8, std::byte{0x5A});
  ASSERT_TRUE(packet::build(f, payload, frame.bytes()));
  frame.bytes()[frame.size() - 10] ^= std::byte{1};
  bed.b().nic->receive(std::move(frame));
  bed.run();
  EXPECT_EQ(y->nic().rx_pipeline().counters().bad_icrc, 1u);
  EXPECT_TRUE(all_zero(y->bytes(0, 8)));
}

}  // namespace
