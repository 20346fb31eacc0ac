// Error paths and recovery of the RC transport: remote access errors, local
// protection errors, loss and go-back-N, retry exhaustion, RNR.
#include <gtest/gtest.h>

#include "nic_fixture.hpp"
#include "nic_model/completer.hpp"
#include "packet/packet.hpp"

using namespace rnicsim;
using namespace rnicsim::nictest;

namespace {

TEST(RemoteAccess, WrongRkeyFailsAndFlushesTheRest) {
  TestBed bed;
  auto [x, y] = bed.pair();
  fill_random(x->bytes(0, 8192), 1);
  SendWqe bad = x->write_wqe(1, 0, 4096, *y, 0);
  bad.rkey = packet::Rkey(y->mr.rkey.value() ^ 0x100);  // no such region
  // One doorbell: all three are fetched before the NAK comes back.
  x->post_sends({bad, x->write_wqe(2, 0, 4096, *y, 8192),
                 x->write_wqe(3, 4096, 4096, *y, 16384, false)});  // unsignaled: flushed all the same
  bed.run();
  ASSERT_EQ(x->cqes.size(), 3u);
  EXPECT_EQ(x->cqes[0].cqe.wr_id, 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::RemAccessErr);
  EXPECT_EQ(x->cqes[1].cqe.wr_id, 2u);
  EXPECT_EQ(x->cqes[1].cqe.status, WcStatus::WrFlushErr);
  EXPECT_EQ(x->cqes[2].cqe.wr_id, 3u);
  EXPECT_EQ(x->cqes[2].cqe.status, WcStatus::WrFlushErr);
  EXPECT_TRUE(all_zero(y->bytes(0, 32768))) << "no byte of any of the three writes may land";
  EXPECT_GE(y->nic().responder().counters().access_errors, 1u);
  EXPECT_TRUE(y->cqes.empty());
  const QpContext* q = x->nic().qp(x->qpn);
  EXPECT_EQ(q->state, QpState::Err);
}

TEST(RemoteAccess, OutOfBoundsRemoteAddress) {
  TestBed bed;
  QpOptions o;
  o.buffer_size = 64 * 1024;
  auto [x, y] = bed.pair(o);
  fill_random(x->bytes(0, 200), 2);
  // 100 bytes starting 10 bytes before the end of the target region.
  x->post_send(x->write_wqe(9, 0, 100, *y, o.buffer_size - 10));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::RemAccessErr);
  EXPECT_EQ(x->cqes[0].cqe.byte_len, 0u);
  EXPECT_TRUE(all_zero(y->bytes(0, o.buffer_size)));
}

TEST(RemoteAccess, RegionWithoutRemoteWriteIsRefused) {
  TestBed bed;
  auto [x, y] = bed.pair();
  const uint64_t ro = y->host().memory.allocate(4096);
  const MemoryRegion& mr = y->nic().reg_mr(y->pd, ro, 4096, kAccessLocalWrite | kAccessRemoteRead);
  SendWqe w = x->write_wqe(1, 0, 64, *y, 0);
  w.remote_addr = ro;
  w.rkey = mr.rkey;
  std::fill_n(x->bytes(0, 64).begin(), 64, std::byte{0x5A});
  x->post_send(w);
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::RemAccessErr);
  EXPECT_TRUE(all_zero(y->host().memory.span(ro, 4096)));
}

TEST(RemoteAccess, RegionOfAnotherPdIsRefused) {
  TestBed bed;
  auto [x, y] = bed.pair();
  const Pdn other_pd = y->nic().alloc_pd();
  ASSERT_NE(other_pd, y->pd);
  const uint64_t addr = y->host().memory.allocate(4096);
  const MemoryRegion& mr = y->nic().reg_mr(other_pd, addr, 4096, kAccessLocalWrite | kAccessRemoteWrite);
  SendWqe w = x->write_wqe(1, 0, 64, *y, 0);
  w.remote_addr = addr;
  w.rkey = mr.rkey;
  std::fill_n(x->bytes(0, 64).begin(), 64, std::byte{0x5A});
  x->post_send(w);
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::RemAccessErr);
  EXPECT_TRUE(all_zero(y->host().memory.span(addr, 4096)));
}

TEST(LocalProtection, WrongLkey) {
  TestBed bed;
  auto [x, y] = bed.pair();
  SendWqe w = x->write_wqe(4, 0, 256, *y, 0);
  w.sge[0].lkey = packet::Lkey(x->mr.lkey.value() + 0x1000);
  // One doorbell for both, so both are fetched before the first fails.
  x->post_sends({w, x->write_wqe(5, 0, 256, *y, 0)});
  bed.run();
  ASSERT_EQ(x->cqes.size(), 2u);
  EXPECT_EQ(x->cqes[0].cqe.wr_id, 4u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::LocProtErr);
  EXPECT_EQ(x->cqes[1].cqe.wr_id, 5u);
  EXPECT_EQ(x->cqes[1].cqe.status, WcStatus::WrFlushErr);
  EXPECT_EQ(x->nic().stats().tx_packets, 0u) << "nothing goes on the wire for a WQE that failed its lkey check";
  EXPECT_EQ(y->nic().responder().counters().requests, 0u);
}

TEST(LocalProtection, LocalSgeBeyondTheRegion) {
  TestBed bed;
  QpOptions o;
  o.buffer_size = 8192;
  auto [x, y] = bed.pair(o);
  x->post_send(x->write_wqe(4, 8000, 500, *y, 0));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::LocProtErr);
  EXPECT_TRUE(all_zero(y->bytes(0, 8192)));
}

class LossRecovery : public ::testing::TestWithParam<std::tuple<double, double, uint32_t>> {};

TEST_P(LossRecovery, OneMebibyteStreamArrivesExactly) {
  const auto [loss_ab, loss_ba, mtu] = GetParam();
  TestBed bed(loss_ab, loss_ba, 2024);
  QpOptions o;
  o.path_mtu = mtu;
  o.timeout = 10;  // 4.2 ms: a lost tail is recovered by the timer
  auto [x, y] = bed.pair(o);
  constexpr uint32_t kMsgs = 16, kSize = 64 * 1024;
  fill_random(x->bytes(0, kMsgs * kSize), 31);
  for (uint32_t i = 0; i < kMsgs; ++i) x->post_send(x->write_wqe(i, uint64_t{i} * kSize, kSize, *y, uint64_t{i} * kSize));
  bed.run(sim::Duration::s(2));
  EXPECT_TRUE(same(y->bytes(0, kMsgs * kSize), x->bytes(0, kMsgs * kSize)));
  ASSERT_EQ(x->cqes.size(), kMsgs);
  for (uint32_t i = 0; i < kMsgs; ++i) {
    EXPECT_EQ(x->cqes[i].cqe.wr_id, i);
    EXPECT_EQ(x->cqes[i].cqe.status, WcStatus::Success);
    EXPECT_EQ(x->cqes[i].cqe.byte_len, kSize);
  }
  EXPECT_GT(x->host().port->counters().drops_loss + y->host().port->counters().drops_loss, 0u);
  if (loss_ab > 0) {
    EXPECT_GT(x->nic().stats().retransmitted_packets, 0u);
    EXPECT_GT(y->nic().responder().counters().out_of_sequence + x->nic().completer().timeouts(), 0u);
  }
  EXPECT_TRUE(y->cqes.empty());
  const QpContext* q = x->nic().qp(x->qpn);
  EXPECT_EQ(q->state, QpState::Rts);
  EXPECT_EQ(q->una, q->next_psn);
}

INSTANTIATE_TEST_SUITE_P(Rates, LossRecovery,
                         ::testing::Values(std::make_tuple(0.01, 0.0, 1024u), std::make_tuple(0.01, 0.0, 4096u),
                                           std::make_tuple(0.02, 0.02, 1024u), std::make_tuple(0.0, 0.2, 1024u)));

TEST(LossRecoverySend, EveryMessageDeliveredOnce) {
  TestBed bed(0.02, 0.01, 5);
  QpOptions o;
  o.path_mtu = 1024;
  o.timeout = 10;
  auto [x, y] = bed.pair(o);
  constexpr uint32_t kMsgs = 32, kSize = 5000;
  fill_random(x->bytes(0, kMsgs * kSize), 6);
  for (uint32_t i = 0; i < kMsgs; ++i) y->post_recv(y->recv_wqe(1000 + i, uint64_t{i} * 8192, 8192));
  for (uint32_t i = 0; i < kMsgs; ++i) x->post_send(x->send_wqe(i, uint64_t{i} * kSize, kSize));
  bed.run(sim::Duration::s(2));
  ASSERT_EQ(x->cqes.size(), kMsgs);
  ASSERT_EQ(y->cqes.size(), kMsgs) << "a retransmitted SEND must not consume a second receive WQE";
  for (uint32_t i = 0; i < kMsgs; ++i) {
    EXPECT_EQ(x->cqes[i].cqe.status, WcStatus::Success);
    EXPECT_EQ(y->cqes[i].cqe.status, WcStatus::Success);
    EXPECT_EQ(y->cqes[i].cqe.wr_id, 1000u + i);
    EXPECT_EQ(y->cqes[i].cqe.byte_len, kSize);
    EXPECT_TRUE(same(y->bytes(uint64_t{i} * 8192, kSize), x->bytes(uint64_t{i} * kSize, kSize))) << "message " << i;
  }
  EXPECT_GT(x->nic().stats().retransmitted_packets, 0u);
}

TEST(RetryExhaustion, RetryExcErrAfterRetryCntPlusOneTimeouts) {
  TestBed bed(1.0, 0.0);  // nothing reaches the responder
  QpOptions o;
  o.timeout = 8;
  o.retry_cnt = 3;
  auto [x, y] = bed.pair(o);
  const sim::Time posted = bed.sim.now();
  x->post_send(x->write_wqe(1, 0, 1000, *y, 0));
  x->post_send(x->write_wqe(2, 0, 1000, *y, 4096));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 2u);
  EXPECT_EQ(x->cqes[0].cqe.wr_id, 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::RetryExcErr);
  EXPECT_EQ(x->cqes[1].cqe.status, WcStatus::WrFlushErr);
  const sim::Duration t = local_ack_timeout(8);
  EXPECT_EQ(t, sim::Duration::ps(4096'000) * 256);
  const sim::Duration took = x->cqes[0].at - posted;
  EXPECT_GE(took, t * 4);
  EXPECT_LE(took, t * 4 + sim::Duration::us(5)) << "took " << took.microseconds() << " us";
  EXPECT_EQ(x->nic().completer().timeouts(), 4u);
  // Each retry resends both messages' packets.
  EXPECT_EQ(x->nic().stats().retransmitted_packets, 3u * 2u);
  EXPECT_EQ(y->nic().responder().counters().requests, 0u);
  EXPECT_TRUE(all_zero(y->bytes(0, 8192)));
}

TEST(RetryExhaustion, RetryCntZeroFailsAtTheFirstTimeout) {
  TestBed bed(1.0, 0.0);
  QpOptions o;
  o.timeout = 6;
  o.retry_cnt = 0;
  auto [x, y] = bed.pair(o);
  x->post_send(x->write_wqe(1, 0, 64, *y, 0));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::RetryExcErr);
  EXPECT_GE(x->cqes[0].at - sim::Time::zero(), local_ack_timeout(6));
  EXPECT_LE(x->cqes[0].at - sim::Time::zero(), local_ack_timeout(6) + sim::Duration::us(5));
  EXPECT_EQ(x->nic().stats().retransmitted_packets, 0u);
}

TEST(RetryExhaustion, LostAcksAreRecoveredByDuplicates) {
  // Requests arrive, every ACK is lost: the requester times out and resends, the
  // responder sees duplicates and re-acknowledges; with all ACKs lost the QP
  // eventually fails, and the data is nevertheless in place (executed once).
  TestBed bed(0.0, 1.0);
  QpOptions o;
  o.timeout = 5;
  o.retry_cnt = 2;
  auto [x, y] = bed.pair(o);
  fill_random(x->bytes(0, 3000), 4);
  x->post_send(x->write_wqe(1, 0, 3000, *y, 0));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::RetryExcErr);
  EXPECT_TRUE(same(y->bytes(0, 3000), x->bytes(0, 3000)));
  EXPECT_EQ(y->nic().responder().counters().duplicates, 2u);
}

TEST(Rnr, NoReceivePostedExhaustsRnrRetry) {
  TestBed bed;
  QpOptions o;
  o.rnr_retry = 2;
  o.min_rnr_timer = 1;  // 10 us
  auto [x, y] = bed.pair(o);
  x->post_send(x->send_wqe(1, 0, 100));
  x->post_send(x->send_wqe(2, 0, 100));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 2u);
  EXPECT_EQ(x->cqes[0].cqe.wr_id, 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::RnrRetryExcErr);
  EXPECT_EQ(x->cqes[1].cqe.status, WcStatus::WrFlushErr);
  // The first attempt and rnr_retry retries are each refused.
  EXPECT_EQ(y->nic().responder().counters().rnr_naks, 3u);
  EXPECT_TRUE(y->cqes.empty());
  EXPECT_EQ(y->nic().qp(y->qpn)->state, QpState::Rts) << "RNR does not break the responder";
}

TEST(Rnr, ReceivePostedLaterSucceeds) {
  TestBed bed;
  QpOptions o;
  o.rnr_retry = 7;      // infinite
  o.min_rnr_timer = 1;  // 10 us: several refusals before the receive comes
  auto [x, y] = bed.pair(o);
  fill_random(x->bytes(0, 300), 9);
  Endpoint* yp = y.get();
  sim::Event late([yp] { yp->post_recv(yp->recv_wqe(77, 0, 512)); }, "test.late_recv");
  bed.sim.scheduler().schedule(late, sim::Time::zero() + sim::Duration::us(30));
  x->post_send(x->send_wqe(1, 0, 300));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_GT(x->cqes[0].at - sim::Time::zero(), sim::Duration::us(30));
  ASSERT_EQ(y->cqes.size(), 1u);
  EXPECT_EQ(y->cqes[0].cqe.wr_id, 77u);
  EXPECT_EQ(y->cqes[0].cqe.byte_len, 300u);
  EXPECT_TRUE(same(y->bytes(0, 300), x->bytes(0, 300)));
  EXPECT_GT(y->nic().responder().counters().rnr_naks, 1u);
  EXPECT_GT(x->nic().completer().naks(), 1u);
}

TEST(Rnr, FiniteRetrySucceedsWhenTheReceiveComesInTime) {
  TestBed bed;
  QpOptions o;
  o.rnr_retry = 6;
  o.min_rnr_timer = 14;  // 1.28 ms: one RNR wait covers the late receive
  auto [x, y] = bed.pair(o);
  Endpoint* yp = y.get();
  sim::Event late([yp] { yp->post_recv(yp->recv_wqe(1, 0, 64)); }, "test.late_recv");
  bed.sim.scheduler().schedule(late, sim::Time::zero() + sim::Duration::us(100));
  x->post_send(x->send_wqe(1, 0, 64));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_EQ(y->nic().responder().counters().rnr_naks, 1u);
  EXPECT_GE(x->cqes[0].at - sim::Time::zero(), rnr_timer_duration(14));
}

TEST(Timers, LocalAckTimeoutAndRnrTable) {
  EXPECT_EQ(local_ack_timeout(1), sim::Duration::ns(8192));
  EXPECT_EQ(local_ack_timeout(14), sim::Duration::ns(4096) * 16384);
  EXPECT_EQ(local_ack_timeout(0), sim::Duration::max());
  EXPECT_EQ(rnr_timer_duration(0), sim::Duration::us(655360));
  EXPECT_EQ(rnr_timer_duration(1), sim::Duration::us(10));  // IBTA table 45: 0.01 ms
  EXPECT_EQ(rnr_timer_duration(12), sim::Duration::us(640));
  EXPECT_EQ(rnr_timer_duration(14), sim::Duration::us(1280));
  EXPECT_EQ(rnr_timer_duration(31), sim::Duration::us(491520));
}

}  // namespace

namespace {

// Work requests posted to a QP that is already in ERR complete with WR_FLUSH_ERR,
// whether the QP broke by itself or was moved to ERR, on both queues.
TEST(ErrState, SendsPostedAfterTheFailureAreFlushed) {
  TestBed bed;
  auto [x, y] = bed.pair();
  SendWqe w = x->write_wqe(4, 0, 256, *y, 0);
  w.sge[0].lkey = packet::Lkey(x->mr.lkey.value() + 0x1000);
  x->post_send(w);  // separate doorbells: the second arrives after the QP broke
  x->post_send(x->write_wqe(5, 0, 256, *y, 0));
  bed.run();
  x->post_send(x->write_wqe(6, 0, 256, *y, 0, false));  // unsignaled, flushed all the same
  bed.run();
  ASSERT_EQ(x->cqes.size(), 3u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::LocProtErr);
  EXPECT_EQ(x->cqes[1].cqe.wr_id, 5u);
  EXPECT_EQ(x->cqes[1].cqe.status, WcStatus::WrFlushErr);
  EXPECT_EQ(x->cqes[2].cqe.wr_id, 6u);
  EXPECT_EQ(x->cqes[2].cqe.status, WcStatus::WrFlushErr);
  EXPECT_EQ(y->nic().responder().counters().requests, 0u);
}

TEST(ErrState, ReceivesPostedInErrAreFlushed) {
  TestBed bed;
  auto [x, y] = bed.pair();
  nic::QpAttr a;
  a.state = QpState::Err;
  ASSERT_EQ(y->nic().modify_qp(y->qpn, a, nic::kQpState), 0);
  y->post_recv(y->recv_wqe(77, 0, 128));
  bed.run();
  ASSERT_EQ(y->cqes.size(), 1u);
  EXPECT_EQ(y->cqes[0].cqe.wr_id, 77u);
  EXPECT_EQ(y->cqes[0].cqe.status, WcStatus::WrFlushErr);
  EXPECT_EQ(y->cqes[0].cqe.opcode, WcOpcode::Recv);
}

}  // namespace

namespace {

// Selective repeat (ConnectX-6 behaviour) against go-back-N (ConnectX-5): the
// same losses, the same data delivered exactly once, far fewer packets sent again.
struct LossRun {
  uint64_t retransmitted = 0, drops = 0, reordered = 0;
  bool data_ok = false;
  size_t completions = 0;
};

LossRun lossy_stream(nic::LossRecovery recovery, bool sends) {
  NicParams p;
  p.loss_recovery = recovery;
  TestBed bed(0.01, 0.0, 17, 100'000'000'000, sim::Duration::us(1), p);
  QpOptions o;
  o.path_mtu = 1024;
  o.sq_entries = 128;
  o.rq_entries = 128;
  o.timeout = 8;  // 1 ms: a lost resend is asked for again soon
  auto [x, y] = bed.pair(o);
  fill_random(x->bytes(0, 1 << 20), 4);
  for (uint64_t i = 0; i < 16; ++i) {
    if (sends) {
      y->post_recv(y->recv_wqe(i, i * 65536, 65536));
      x->post_send(x->send_wqe(i, i * 65536, 65536));
    } else {
      x->post_send(x->write_wqe(i, i * 65536, 65536, *y, i * 65536));
    }
  }
  bed.run();
  LossRun r;
  r.completions = x->cqes.size();
  for (const auto& c : x->cqes) EXPECT_EQ(c.cqe.status, WcStatus::Success);
  if (sends) {
    EXPECT_EQ(y->cqes.size(), 16u) << "each message consumed exactly one receive";
  }
  r.data_ok = std::equal(x->bytes(0, 1 << 20).begin(), x->bytes(0, 1 << 20).end(), y->bytes(0, 1 << 20).begin());
  r.retransmitted = x->nic().stats().retransmitted_packets;
  r.drops = bed.a().port->counters().drops_loss;
  r.reordered = y->nic().responder().counters().out_of_sequence;
  return r;
}

TEST(SelectiveRepeat, ResendsOnlyWhatWasLost) {
  for (bool sends : {false, true}) {
    const LossRun gbn = lossy_stream(nic::LossRecovery::GoBackN, sends);
    const LossRun sr = lossy_stream(nic::LossRecovery::SelectiveRepeat, sends);
    EXPECT_EQ(gbn.completions, 16u);
    EXPECT_EQ(sr.completions, 16u);
    EXPECT_TRUE(gbn.data_ok);
    EXPECT_TRUE(sr.data_ok);
    ASSERT_GT(sr.drops, 0u);
    ASSERT_GT(gbn.drops, 0u);
    // Go-back-N resends the whole window after each loss; selective repeat about
    // one packet per loss (a little more when a resent packet is lost too or a
    // timeout fires).
    EXPECT_GT(gbn.retransmitted / gbn.drops, 4 * sr.retransmitted / sr.drops);
    EXPECT_LE(sr.retransmitted, 2 * sr.drops);
    EXPECT_GE(sr.retransmitted, sr.drops);
    EXPECT_GT(sr.reordered, 0u) << "packets after a gap were kept, not dropped";
  }
}

}  // namespace

namespace {

// A SEND LAST (or MIDDLE) with no SEND in progress is an opcode out of sequence:
// an Invalid Request NAK and the QP in error. It used to complete a receive WQE
// never taken, and with none posted, pop an empty queue and loop flushing a
// queue of 2^64 entries (found by fuzz/nic_rx_fuzzer).
TEST(InvalidRequest, SendLastWithoutFirstBreaksTheQp) {
  for (const bool posted : {false, true}) {
    SCOPED_TRACE(posted ? "receive WQE posted" : "no receive WQE");
    TestBed bed;
    auto [x, y] = bed.pair();
    if (posted) y->post_recv(y->recv_wqe(7, 0, 4096));
    deliver_to_b(bed, build_packet(peer_packet(bed, *y, packet::Opcode::RcSendLast, 0, 16), std::byte{0x5A}));
    EXPECT_EQ(y->nic().responder().counters().invalid_requests, 1u);
    EXPECT_EQ(y->nic().qp(y->qpn)->state, QpState::Err);
    EXPECT_TRUE(all_zero(y->bytes(0, 16)));
    // A posted receive WQE is flushed, not completed with the stray payload.
    ASSERT_EQ(y->cqes.size(), posted ? 1u : 0u);
    if (posted) {
      EXPECT_EQ(y->cqes[0].cqe.status, WcStatus::WrFlushErr);
    }
  }
}

// CQ overrun (IBTA: a CQE with no room): the CQ goes into error and the QP
// whose completion had no room goes to ERR; no unconsumed CQE is overwritten.
struct AsyncRecorder : AsyncEventListener {
  std::vector<std::pair<AsyncEvent, uint32_t>> events;
  const CqContext* cq = nullptr;  // its CQEs in host memory when each event arrives
  std::vector<uint64_t> cqes_landed;
  void on_async_event(AsyncEvent e, AsyncObject about) override {
    events.emplace_back(e, number_of(about));
    if (cq != nullptr) cqes_landed.push_back(cq->written);
  }
};

// Rings of 8 WQEs; the QP's one CQ holds 16 CQEs.
QpOptions cq_of_16() {
  QpOptions o;
  o.sq_entries = 8;
  o.rq_entries = 8;
  return o;
}

TEST(CqOverrun, FullSendCqBreaksTheCqAndTheQpAndKeepsItsEntries) {
  TestBed bed;
  QpOptions o = cq_of_16();
  auto [x, y] = bed.pair(o);
  AsyncRecorder events;
  x->nic().set_async_listener(&events);
  events.cq = x->nic().cq(x->cqn);
  x->reap_on_completion = false;
  uint64_t id = 1;
  for (int batch = 0; batch < 2; ++batch) {
    for (int i = 0; i < 8; ++i, ++id) x->post_send(x->write_wqe(id, 0, 64, *y, 64 * id));
    bed.run();
  }
  EXPECT_TRUE(events.events.empty()) << "16 CQEs fit";
  EXPECT_EQ(x->nic().qp(x->qpn)->state, QpState::Rts);
  x->post_send(x->write_wqe(17, 0, 64, *y, 0));
  bed.run();
  ASSERT_EQ(events.events.size(), 2u);
  EXPECT_EQ(events.events[0], std::make_pair(AsyncEvent::CqErr, x->cqn.value()));
  EXPECT_EQ(events.events[1], std::make_pair(AsyncEvent::QpFatal, x->qpn.value()));
  EXPECT_EQ(events.cqes_landed[0], 16u) << "the event reaches the host after the CQEs before it";
  EXPECT_EQ(x->nic().qp(x->qpn)->state, QpState::Err);
  EXPECT_EQ(x->nic().cqe_writer().overruns(), 1u);
  x->reap();
  ASSERT_EQ(x->cqes.size(), 16u);
  for (uint64_t i = 0; i < 16; ++i) {
    EXPECT_EQ(x->cqes[i].cqe.wr_id, i + 1) << "an unconsumed CQE was overwritten";
    EXPECT_EQ(x->cqes[i].cqe.status, WcStatus::Success);
  }
  // The CQ stays in error: even with room again, a flushed WQE's CQE is not written.
  x->post_send(x->write_wqe(18, 0, 64, *y, 0));
  bed.run();
  x->reap();
  EXPECT_EQ(x->cqes.size(), 16u);
  EXPECT_EQ(x->nic().cqe_writer().lost(), 2u);
  EXPECT_EQ(events.events.size(), 2u);
}

TEST(CqOverrun, ACqThePollerKeepsEmptyingNeverOverruns) {
  TestBed bed;
  QpOptions o = cq_of_16();
  auto [x, y] = bed.pair(o);
  AsyncRecorder events;
  x->nic().set_async_listener(&events);
  x->reap_on_completion = false;
  for (uint64_t batch = 0; batch < 10; ++batch) {
    for (uint64_t i = 0; i < 8; ++i) x->post_send(x->write_wqe(batch * 8 + i + 1, 0, 64, *y, 0));
    bed.run();
    x->reap();
  }
  ASSERT_EQ(x->cqes.size(), 80u);
  for (uint64_t i = 0; i < 80; ++i) EXPECT_EQ(x->cqes[i].cqe.wr_id, i + 1);
  EXPECT_TRUE(events.events.empty());
  EXPECT_EQ(x->nic().cqe_writer().overruns(), 0u);
}

TEST(CqOverrun, FullReceiveCqStopsTheResponderAcknowledging) {
  TestBed bed;
  QpOptions o = cq_of_16();
  o.timeout = 8;
  o.retry_cnt = 1;
  auto [x, y] = bed.pair(o);
  AsyncRecorder events;
  y->nic().set_async_listener(&events);
  y->reap_on_completion = false;
  uint64_t id = 1;
  for (int batch = 0; batch < 2; ++batch) {
    for (int i = 0; i < 8; ++i, ++id) {
      y->post_recv(y->recv_wqe(id, 0, 64));
      x->post_send(x->send_wqe(id, 0, 64));
    }
    bed.run();
  }
  ASSERT_EQ(x->cqes.size(), 16u);
  y->post_recv(y->recv_wqe(17, 0, 64));
  x->post_send(x->send_wqe(17, 0, 64));
  bed.run();
  ASSERT_EQ(events.events.size(), 2u);
  EXPECT_EQ(events.events[0].first, AsyncEvent::CqErr);
  EXPECT_EQ(events.events[1].first, AsyncEvent::QpFatal);
  EXPECT_EQ(y->nic().qp(y->qpn)->state, QpState::Err);
  // The 17th SEND was not acknowledged: the requester retries into a QP in
  // ERR, which drops everything, and gives up.
  ASSERT_EQ(x->cqes.size(), 17u);
  EXPECT_EQ(x->cqes[16].cqe.wr_id, 17u);
  EXPECT_EQ(x->cqes[16].cqe.status, WcStatus::RetryExcErr);
  y->reap();
  ASSERT_EQ(y->cqes.size(), 16u);
  for (uint64_t i = 0; i < 16; ++i) EXPECT_EQ(y->cqes[i].cqe.wr_id, i + 1);
}

}  // namespace

namespace {

// A Class C error at the responder that no receive WQE answers for (IBTA
// C9-222.1.1): the requester gets the NAK's status, the responder's client an
// affiliated asynchronous error, and the responder's QP goes to the error
// state, flushing the receive WQEs it holds.
TEST(ResponderClassC, WrongRkeyRaisesAnAccessErrorAndBreaksTheResponderQp) {
  TestBed bed;
  auto [x, y] = bed.pair();
  AsyncRecorder events;
  y->nic().set_async_listener(&events);
  y->post_recv(y->recv_wqe(70, 0, 64));
  SendWqe bad = x->write_wqe(1, 0, 64, *y, 0);
  bad.rkey = packet::Rkey(y->mr.rkey.value() ^ 0x100);
  x->post_send(bad);
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::RemAccessErr);
  ASSERT_EQ(events.events.size(), 1u);
  EXPECT_EQ(events.events[0], std::make_pair(AsyncEvent::QpAccessErr, y->qpn.value()));
  EXPECT_EQ(y->nic().qp(y->qpn)->state, QpState::Err);
  ASSERT_EQ(y->cqes.size(), 1u);
  EXPECT_EQ(y->cqes[0].cqe.wr_id, 70u);
  EXPECT_EQ(y->cqes[0].cqe.status, WcStatus::WrFlushErr);
}

// A WRITE that carries another length than its RETH asks for is an invalid
// request: a NAK, a QP request error, and nothing of it written.
TEST(ResponderClassC, WriteOfAnotherLengthThanItsRethRaisesARequestError) {
  struct Case {
    packet::Opcode op;
    uint32_t payload, dma_length;
  };
  for (const Case c : {Case{packet::Opcode::RcRdmaWriteFirst, 4096, 8}, Case{packet::Opcode::RcRdmaWriteOnly, 64, 8},
                       Case{packet::Opcode::RcRdmaWriteOnly, 64, 128}}) {
    SCOPED_TRACE(std::string(packet::opcode_info(c.op).name) + " of " + std::to_string(c.payload) + " bytes, RETH " +
                 std::to_string(c.dma_length));
    TestBed bed;
    auto [x, y] = bed.pair();
    AsyncRecorder events;
    y->nic().set_async_listener(&events);
    packet::PacketFields f = peer_packet(bed, *y, c.op, 0, c.payload);
    f.reth = packet::RethFields{y->buffer, y->mr.rkey, c.dma_length};
    packet::derive_fields(f);
    deliver_to_b(bed, build_packet(f, std::byte{0x5A}));
    EXPECT_EQ(y->nic().rx_pipeline().counters().malformed, 0u);
    EXPECT_EQ(y->nic().responder().counters().invalid_requests, 1u);
    ASSERT_EQ(events.events.size(), 1u);
    EXPECT_EQ(events.events[0], std::make_pair(AsyncEvent::QpReqErr, y->qpn.value()));
    EXPECT_EQ(y->nic().qp(y->qpn)->state, QpState::Err);
    EXPECT_TRUE(all_zero(y->bytes(0, c.payload)));
  }
}

}  // namespace
