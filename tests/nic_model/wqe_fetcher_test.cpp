// The WQE fetcher alone, on fakes of the requester, responder and error ports.
#include "nic_model/wqe_fetcher.hpp"

#include "block_fixture.hpp"

namespace rnicsim::nictest {
namespace {

class WqeFetcherTest : public ::testing::Test {
protected:
  explicit WqeFetcherTest(NicParams params = {}) : b(params), fetcher(b.ctx) {
    fetcher.connect({.send_queue = &send_queue, .requests = &requests, .errors = &errors});
  }
  // Writes `n` WQEs (wr_id first, first+1, ...) into the ring and advances its producer.
  template <class W>
  void post(WorkRing& ring, uint32_t n, uint64_t first) {
    for (uint32_t i = 0; i < n; ++i) {
      W w{};
      w.wr_id = first + i;
      ASSERT_TRUE(b.memory.write(ring.slot_addr(ring.producer), std::as_bytes(std::span(&w, 1)).first(ring.stride)));
      ++ring.producer;
    }
  }
  BlockContext b;
  FakeSendQueue send_queue;
  FakeRequests requests;
  FakeErrors errors;
  WqeFetcher fetcher;
};

TEST_F(WqeFetcherTest, SendWqesGoToTheRequesterInRingOrder) {
  QpContext& qp = b.add_qp(0x11, QpState::Rts);
  post<SendWqe>(qp.sq, 5, 100);
  fetcher.kick(WorkQueue::send(Qpn(0x11)));
  b.run();
  EXPECT_EQ(send_queue.accepted, (std::vector<uint64_t>{100, 101, 102, 103, 104}));
  EXPECT_EQ(qp.sq.fetched, 5u);
  EXPECT_EQ(fetcher.wqes_fetched(), 5u);
  EXPECT_TRUE(errors.fatal.empty());
}

TEST_F(WqeFetcherTest, ReadsAcrossTheEndOfTheRingInTwoPieces) {
  QpContext& qp = b.add_qp(0x11, QpState::Rts, 8);
  qp.sq.producer = qp.sq.fetched = 6;  // six WQEs already done
  post<SendWqe>(qp.sq, 5, 1);          // slots 6, 7, 0, 1, 2
  fetcher.kick(WorkQueue::send(Qpn(0x11)));
  b.run();
  EXPECT_EQ(send_queue.accepted, (std::vector<uint64_t>{1, 2, 3, 4, 5}));
}

TEST_F(WqeFetcherTest, ReceiveWqesWaitOnTheQpAndTheResponderIsTold) {
  QpContext& qp = b.add_qp(0x12, QpState::Rtr);
  post<RecvWqe>(qp.rq, 3, 7);
  fetcher.kick(WorkQueue::recv(Qpn(0x12)));
  EXPECT_TRUE(fetcher.recv_fetch_pending(WorkQueue::recv(Qpn(0x12))));
  b.run();
  EXPECT_FALSE(fetcher.recv_fetch_pending(WorkQueue::recv(Qpn(0x12))));
  ASSERT_EQ(qp.recv_wqes.size(), 3u);
  EXPECT_EQ(qp.recv_wqes.front().wr_id, 7u);
  EXPECT_EQ(requests.arrived, (std::vector<uint32_t>{0x12}));
}

TEST_F(WqeFetcherTest, ReceiveWqesOfAQpInErrorAreFlushed) {
  QpContext& qp = b.add_qp(0x12, QpState::Err);
  post<RecvWqe>(qp.rq, 2, 40);
  fetcher.kick(WorkQueue::recv(Qpn(0x12)));
  b.run();
  EXPECT_TRUE(qp.recv_wqes.empty());
  EXPECT_EQ(errors.flushed, (std::vector<uint64_t>{40, 41}));
}

TEST_F(WqeFetcherTest, AQpInResetOrGoneFetchesNothing) {
  QpContext& qp = b.add_qp(0x11, QpState::Reset);
  post<SendWqe>(qp.sq, 2, 1);
  fetcher.kick(WorkQueue::send(Qpn(0x11)));
  fetcher.kick(WorkQueue::send(Qpn(0x99)));  // no such QP
  b.run();
  EXPECT_TRUE(send_queue.accepted.empty());
  EXPECT_EQ(qp.sq.fetched, 0u);
}

TEST_F(WqeFetcherTest, ARingOutsideHostMemoryBreaksTheQp) {
  QpContext& qp = b.add_qp(0x11, QpState::Rts);
  qp.sq.base = 0xdead0000000;  // nothing there
  qp.sq.producer = 1;
  fetcher.kick(WorkQueue::send(Qpn(0x11)));
  b.run();
  EXPECT_TRUE(send_queue.accepted.empty());
  ASSERT_EQ(errors.fatal.size(), 1u);
  EXPECT_EQ(errors.fatal[0].qpn, 0x11u);
  EXPECT_EQ(errors.fatal[0].status, WcStatus::LocQpOpErr);
}

NicParams small_batches() {
  NicParams p;
  p.wqe_fetch_batch = 4;
  p.wqe_fetch_outstanding = 1;
  return p;
}

class WqeFetcherBatchTest : public WqeFetcherTest {
protected:
  WqeFetcherBatchTest() : WqeFetcherTest(small_batches()) {}
};

TEST_F(WqeFetcherBatchTest, FetchesInBatchesOfAtMostTheBatchSize) {
  QpContext& qp = b.add_qp(0x11, QpState::Rts);
  post<SendWqe>(qp.sq, 10, 0);
  fetcher.kick(WorkQueue::send(Qpn(0x11)));
  EXPECT_EQ(qp.sq.fetched, 4u);  // one read of four in flight, the only slot busy
  b.run();
  EXPECT_EQ(qp.sq.fetched, 10u);
  EXPECT_EQ(send_queue.accepted.size(), 10u);
  EXPECT_EQ(send_queue.accepted.back(), 9u);
}

}  // namespace
}  // namespace rnicsim::nictest
