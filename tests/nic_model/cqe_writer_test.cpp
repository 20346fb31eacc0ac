// The CQE writer alone, on a fake of the error port: CQEs land in the ring in
// host memory in order, unsignaled successes write nothing, a full ring overruns.
#include "nic_model/cqe_writer.hpp"

#include "block_fixture.hpp"

namespace rnicsim::nictest {
namespace {

class CqeWriterTest : public ::testing::Test, public CompletionListener {
protected:
  static constexpr uint32_t kEntries = 4;
  static constexpr Cqn kCqn{1};
  CqeWriterTest() : writer(b.ctx) {
    writer.connect({.errors = &errors});
    const uint64_t base = b.memory.allocate(kEntries * sizeof(Cqe), 4096);
    CqContext& c = b.tables.add_cq(kCqn);
    c.cqn = kCqn;
    c.base = base;
    c.entries = c.capacity = kEntries;
    c.listener = this;
    c.event_timer = std::make_unique<sim::Event>([this] { writer.fire_event(kCqn); }, "cq.event");
    ring.emplace(b.memory.span(base, kEntries * sizeof(Cqe)), kEntries);
    qp = &b.add_qp(0x11, QpState::Rts);
    qp->send_cq = qp->recv_cq = kCqn;
  }
  void on_completion(Cqn) override { ++completions; }
  void on_event(Cqn) override { ++events; }
  std::optional<uint64_t> consumer_index(Cqn) const override { return ring->consumer(); }
  static SendEntry entry(uint64_t wr_id, bool signaled) {
    SendEntry e;
    e.wqe.wr_id = wr_id;
    e.wqe.opcode = WrOpcode::RdmaWrite;
    e.length = 64;
    e.packets = 1;
    e.signaled = signaled;
    return e;
  }

  BlockContext b;
  FakeErrors errors;
  CqeWriter writer;
  std::optional<CqRingReader> ring;
  QpContext* qp = nullptr;
  int completions = 0, events = 0;
};

TEST_F(CqeWriterTest, ASignaledSendCompletesIntoTheRing) {
  writer.complete_send(*qp, entry(5, true), WcStatus::Success);
  EXPECT_FALSE(ring->poll()) << "visible only when the DMA write lands";
  b.run();
  const std::optional<Cqe> c = ring->poll();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->wr_id, 5u);
  EXPECT_EQ(c->status, WcStatus::Success);
  EXPECT_EQ(c->opcode, WcOpcode::RdmaWrite);
  EXPECT_EQ(c->byte_len, 64u);
  EXPECT_EQ(c->qp_num.value(), 0x11u);
  EXPECT_EQ(completions, 1);
  EXPECT_EQ(writer.written(), 1u);
}

TEST_F(CqeWriterTest, AnUnsignaledSuccessWritesNothingButAnErrorAlways) {
  writer.complete_send(*qp, entry(1, false), WcStatus::Success);
  writer.complete_send(*qp, entry(2, false), WcStatus::RemAccessErr);
  b.run();
  const std::optional<Cqe> c = ring->poll();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->wr_id, 2u);
  EXPECT_EQ(c->status, WcStatus::RemAccessErr);
  EXPECT_EQ(c->byte_len, 0u);
  EXPECT_FALSE(ring->poll());
}

TEST_F(CqeWriterTest, CqesLandInTheOrderPosted) {
  for (uint64_t id = 10; id < 13; ++id) writer.complete_send(*qp, entry(id, true), WcStatus::Success);
  b.run();
  for (uint64_t id = 10; id < 13; ++id) {
    const std::optional<Cqe> c = ring->poll();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->wr_id, id);
  }
}

TEST_F(CqeWriterTest, AFullRingOverrunsTheCqAndBreaksTheQp) {
  for (uint64_t id = 0; id < kEntries + 1; ++id) writer.complete_send(*qp, entry(id, true), WcStatus::Success);
  b.run();
  EXPECT_EQ(writer.overruns(), 1u);
  EXPECT_EQ(writer.lost(), 1u);
  ASSERT_EQ(errors.fatal.size(), 1u);
  EXPECT_EQ(errors.fatal[0].status, WcStatus::WrFlushErr);
  // The events reach the host after the CQEs written before them.
  ASSERT_EQ(errors.events.size(), 2u);
  EXPECT_EQ(errors.events[0], std::make_pair(AsyncEvent::CqErr, 1u));
  EXPECT_EQ(errors.events[1], std::make_pair(AsyncEvent::QpFatal, 0x11u));
  EXPECT_EQ(completions, static_cast<int>(kEntries));
}

TEST_F(CqeWriterTest, ConsumedEntriesMakeRoom) {
  for (uint64_t id = 0; id < kEntries; ++id) writer.complete_send(*qp, entry(id, true), WcStatus::Success);
  b.run();
  ASSERT_TRUE(ring->poll());  // the host consumes one
  writer.complete_send(*qp, entry(99, true), WcStatus::Success);
  b.run();
  EXPECT_EQ(writer.overruns(), 0u);
  EXPECT_TRUE(errors.fatal.empty());
}

TEST_F(CqeWriterTest, AnArmedCqRaisesOneEvent) {
  b.tables.cq(kCqn)->armed = true;
  writer.complete_send(*qp, entry(1, true), WcStatus::Success);
  writer.complete_send(*qp, entry(2, true), WcStatus::Success);
  b.run();
  EXPECT_EQ(events, 1);
  EXPECT_FALSE(b.tables.cq(kCqn)->armed);
}

}  // namespace
}  // namespace rnicsim::nictest
