// The completer alone, on fakes of the send queue, completion and error ports:
// ACKs retire WQEs in order, READ responses and atomic ACKs land in local
// memory, NAKs and timeouts go back (or break the QP), and the timers' values.
#include "nic_model/completer.hpp"
#include "nic_model/qp_state.hpp"

#include <cstring>

#include "block_fixture.hpp"

namespace rnicsim::nictest {
namespace {

using packet::Opcode;

constexpr uint32_t kMtu = 256;

class CompleterTest : public ::testing::Test {
protected:
  explicit CompleterTest(NicParams params = {}) : b(params), completer(b.ctx) {
    completer.connect({.send_queue = &send_queue, .completions = &completions, .errors = &errors});
    q = &b.add_qp(0x11, QpState::Rts);
    q->pd = Pdn(1);
    q->path_mtu = kMtu;
    buffer = &b.region(Pdn(1), 4096, kAccessLocalWrite);
  }
  // A WQE as the requester leaves it once all its packets are sent; its local
  // buffer at `offset` into the registered one.
  void sent(uint64_t wr_id, WrOpcode op, uint32_t length, uint32_t offset = 0) {
    const bool atomic = op == WrOpcode::AtomicCmpSwap || op == WrOpcode::AtomicFetchAdd;
    SendEntry e;
    e.wqe.wr_id = wr_id;
    e.wqe.opcode = op;
    e.wqe.num_sge = 1;
    e.wqe.sge[0] = Sge{buffer->addr + offset, length, buffer->lkey};
    e.length = length;
    e.reads_remote = atomic || op == WrOpcode::RdmaRead;
    e.packets = atomic ? 1 : std::max<uint32_t>(1, (length + kMtu - 1) / kMtu);
    e.first_psn = q->next_psn;
    q->next_psn = q->next_psn + e.packets;
    q->assign_psn = q->next_psn;
    ++q->next_entry;
    if (e.reads_remote) ++q->rd_atomic_inflight;
    q->send_entries.push_back(e);
  }
  void respond(packet::PacketFields f, std::span<const std::byte> payload = {}) {
    f.dest_qp = packet::Qpn(0x11);
    InPacket in = make_packet(b.pool, f, payload);
    completer.receive(*q, in.p, in.frame);
  }
  void ack(uint32_t psn, Syndrome syndrome = Syndrome::ack()) {
    packet::PacketFields f;
    f.opcode = Opcode::RcAcknowledge;
    f.psn = packet::Psn(psn);
    f.aeth = packet::AethFields{syndrome, 0};
    respond(f);
  }
  void read_response(Opcode op, uint32_t psn, std::span<const std::byte> payload) {
    packet::PacketFields f;
    f.opcode = op;
    f.psn = packet::Psn(psn);
    if (op != Opcode::RcRdmaReadResponseMiddle) f.aeth = packet::AethFields{Syndrome::ack(), 0};
    respond(f, payload);
  }
  void atomic_ack(uint32_t psn, uint64_t original) {
    packet::PacketFields f;
    f.opcode = Opcode::RcAtomicAcknowledge;
    f.psn = packet::Psn(psn);
    f.aeth = packet::AethFields{Syndrome::ack(), 0};
    f.atomic_ack_eth = packet::AtomicAckEthFields{original};
    respond(f);
  }
  std::vector<uint64_t> completed() const {
    std::vector<uint64_t> v;
    for (const auto& c : completions.sends) {
      EXPECT_EQ(c.status, WcStatus::Success);
      v.push_back(c.wr_id);
    }
    return v;
  }
  const sim::Event& timer() const { return *q->retransmit_timer; }

  BlockContext b;
  FakeSendQueue send_queue;
  FakeCompletions completions;
  FakeErrors errors;
  Completer completer;
  QpContext* q = nullptr;
  const MemoryRegion* buffer = nullptr;
};

TEST_F(CompleterTest, AnAckRetiresTheWqesThroughItsPsnInOrder) {
  sent(1, WrOpcode::Send, 2 * kMtu);  // PSNs 0, 1
  sent(2, WrOpcode::Send, 8);         // 2
  sent(3, WrOpcode::Send, 8);         // 3
  q->retries_left = 1;
  q->rnr_retries_left = 1;
  ack(2);
  EXPECT_EQ(completed(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(q->una, Psn(3));
  EXPECT_EQ(q->send_entries.size(), 1u);
  EXPECT_EQ(q->next_entry, 1u);
  EXPECT_EQ(completer.acks(), 1u);
  // Progress: the retry counters are full again, the timer runs for PSN 3, the requester hears.
  EXPECT_EQ(q->retries_left, q->retry_cnt);
  EXPECT_EQ(q->rnr_retries_left, q->rnr_retry);
  EXPECT_TRUE(timer().scheduled());
  EXPECT_EQ(send_queue.kicked, (std::vector<uint32_t>{0x11}));
}

TEST_F(CompleterTest, AnAckOfEverythingStopsTheTimer) {
  sent(1, WrOpcode::Send, 8);
  completer.arm_timer(*q);
  ASSERT_TRUE(timer().scheduled());
  ack(0);
  EXPECT_EQ(completed(), (std::vector<uint64_t>{1}));
  EXPECT_FALSE(timer().scheduled());
}

TEST_F(CompleterTest, StaleAndNeverSentResponsesAreIgnored) {
  sent(1, WrOpcode::Send, 8);
  sent(2, WrOpcode::Send, 8);
  ack(0);
  ack(0);  // acknowledged already
  ack(7);  // never sent
  EXPECT_EQ(completer.stale_responses(), 2u);
  EXPECT_EQ(completer.acks(), 1u);
  EXPECT_EQ(completed(), (std::vector<uint64_t>{1}));
  EXPECT_EQ(q->una, Psn(1));
}

TEST_F(CompleterTest, AQpInErrorTakesNoResponse) {
  sent(1, WrOpcode::Send, 8);
  q->state = QpState::Err;
  ack(0);
  EXPECT_TRUE(completions.sends.empty());
  EXPECT_EQ(completer.acks(), 0u);
}

TEST_F(CompleterTest, AReadsResponsesLandInLocalMemoryAndItCompletesAfterTheLast) {
  const uint32_t len = 2 * kMtu + 12;
  sent(1, WrOpcode::RdmaRead, len, 64);  // PSNs 0..2
  const std::vector<std::byte> data = pattern(len, 3);
  const std::span<const std::byte> all(data);
  read_response(Opcode::RcRdmaReadResponseFirst, 0, all.subspan(0, kMtu));
  read_response(Opcode::RcRdmaReadResponseMiddle, 1, all.subspan(kMtu, kMtu));
  EXPECT_TRUE(completions.sends.empty());
  EXPECT_EQ(q->send_entries.front().responses_placed, 2u);
  read_response(Opcode::RcRdmaReadResponseLast, 2, all.subspan(2 * kMtu));
  EXPECT_EQ(completed(), (std::vector<uint64_t>{1}));
  EXPECT_EQ(q->rd_atomic_inflight, 0u);
  EXPECT_EQ(q->una, Psn(3));
  EXPECT_EQ(q->payload_bytes_accepted, len);
  b.run();
  EXPECT_EQ(b.read(buffer->addr + 64, len), data);
  EXPECT_EQ(b.read(buffer->addr + 64 + len, 1), std::vector<std::byte>{std::byte{0}}) << "nothing past the buffer";
}

TEST_F(CompleterTest, AnAtomicAckWritesTheOriginalValueLocally) {
  sent(1, WrOpcode::AtomicFetchAdd, 8, 16);
  atomic_ack(0, 0x1122334455667788);
  EXPECT_EQ(completed(), (std::vector<uint64_t>{1}));
  b.run();
  uint64_t v = 0;
  const std::vector<std::byte> bytes = b.read(buffer->addr + 16, 8);
  std::memcpy(&v, bytes.data(), 8);
  EXPECT_EQ(v, 0x1122334455667788u);
}

TEST_F(CompleterTest, AnAtomicAckForAReadIsABadResponse) {
  sent(1, WrOpcode::RdmaRead, 8);
  atomic_ack(0, 5);
  ASSERT_EQ(errors.fatal.size(), 1u);
  EXPECT_EQ(errors.fatal[0].status, WcStatus::BadRespErr);
  EXPECT_TRUE(completions.sends.empty());
}

TEST_F(CompleterTest, AReadResponseLongerThanTheWqeOrIntoABadLkeyBreaksTheQp) {
  sent(1, WrOpcode::RdmaRead, 8);
  read_response(Opcode::RcRdmaReadResponseOnly, 0, pattern(16));
  sent(2, WrOpcode::RdmaRead, 8);
  q->send_entries[1].wqe.sge[0].lkey = packet::Lkey(q->send_entries[1].wqe.sge[0].lkey.value() ^ 0x5A5A00);
  q->send_entries.pop_front();  // the first one out of the way, as qp_fatal would
  --q->next_entry;
  read_response(Opcode::RcRdmaReadResponseOnly, 1, pattern(8));
  ASSERT_EQ(errors.fatal.size(), 2u);
  EXPECT_EQ(errors.fatal[0].status, WcStatus::BadRespErr);
  EXPECT_EQ(errors.fatal[1].status, WcStatus::LocProtErr);
  EXPECT_TRUE(completions.sends.empty());
}

TEST_F(CompleterTest, AResponseAfterAGapGoesBackOnce) {
  sent(1, WrOpcode::RdmaRead, 3 * kMtu);  // PSNs 0..2
  const std::vector<std::byte> data = pattern(kMtu);
  read_response(Opcode::RcRdmaReadResponseMiddle, 1, data);  // the FIRST was lost
  read_response(Opcode::RcRdmaReadResponseLast, 2, data);
  EXPECT_EQ(completer.stale_responses(), 2u);
  EXPECT_EQ(send_queue.rewound, (std::vector<uint32_t>{0})) << "once, from the response missing";
  EXPECT_EQ(q->send_entries.front().responses_placed, 0u);
  EXPECT_TRUE(completions.sends.empty());
}

TEST_F(CompleterTest, AnAckPastAnUnansweredReadAsksForItAgain) {
  sent(1, WrOpcode::RdmaRead, 2 * kMtu);  // PSNs 0, 1
  sent(2, WrOpcode::Send, 8);             // 2
  ack(2);
  EXPECT_EQ(send_queue.rewound, (std::vector<uint32_t>{0}));
  EXPECT_TRUE(completions.sends.empty()) << "the READ and what follows wait for its answer";
  EXPECT_EQ(q->una, Psn(0));
}

// Known bug, disabled until fixed: the ACK path calls progress() after
// retire_through() even when the ACK retired nothing, and progress() clears
// response_gap_rewound (and refills retries_left). So every further ACK past
// the unanswered READ (a re-ACK of the resent SEND, which may well overtake the
// READ's responses, or a later coalesced ACK) goes back again, instead of once
// per gap; the responder drops the READ answers it has queued each time.
TEST_F(CompleterTest, AckPastAnUnansweredReadGoesBackOnlyOnce) {
  sent(1, WrOpcode::RdmaRead, 2 * kMtu);  // PSNs 0, 1
  sent(2, WrOpcode::Send, 8);             // 2
  sent(3, WrOpcode::Send, 8);             // 3
  q->retries_left = 1;
  ack(2);
  ack(2);  // the resent SEND acknowledged again
  ack(3);  // a later ACK
  EXPECT_EQ(send_queue.rewound, (std::vector<uint32_t>{0}));
  EXPECT_EQ(q->retries_left, 1u) << "nothing was retired: no progress";
}

TEST_F(CompleterTest, APsnSequenceNakGoesBackToThePsnItNames) {
  sent(1, WrOpcode::Send, 8);
  sent(2, WrOpcode::Send, 8);
  sent(3, WrOpcode::Send, 8);
  ack(1, Syndrome::nak(NakCode::PsnSequenceError));
  EXPECT_EQ(completed(), (std::vector<uint64_t>{1})) << "what came before the NAKed PSN is acknowledged";
  EXPECT_EQ(send_queue.rewound, (std::vector<uint32_t>{1}));
  EXPECT_TRUE(send_queue.resent.empty());
  EXPECT_EQ(completer.naks(), 1u);
  EXPECT_TRUE(errors.fatal.empty());
  EXPECT_TRUE(timer().scheduled());
}

TEST_F(CompleterTest, OtherNaksBreakTheQpWithTheirStatus) {
  const std::pair<NakCode, WcStatus> cases[] = {
      {NakCode::InvalidRequest, WcStatus::RemInvReqErr},
      {NakCode::RemoteAccessError, WcStatus::RemAccessErr},
      {NakCode::RemoteOperationalError, WcStatus::RemOpErr},
      {NakCode::InvalidRdRequest, WcStatus::RemInvRdReqErr},
      {static_cast<NakCode>(9), WcStatus::BadRespErr},  // reserved
  };
  sent(1, WrOpcode::Send, 8);
  for (const auto& [code, status] : cases) {
    errors.fatal.clear();
    ack(0, Syndrome::nak(code));
    ASSERT_EQ(errors.fatal.size(), 1u);
    EXPECT_EQ(errors.fatal[0].status, status);
  }
  EXPECT_TRUE(send_queue.rewound.empty());
  EXPECT_TRUE(completions.sends.empty());
}

TEST_F(CompleterTest, AnRnrNakWaitsTheRnrTimeThenGoesBack) {
  sent(1, WrOpcode::Send, 8);
  sent(2, WrOpcode::Send, 8);
  q->rnr_retry = q->rnr_retries_left = 3;
  ack(1, Syndrome::rnr_nak(14));
  EXPECT_EQ(completed(), (std::vector<uint64_t>{1}));
  EXPECT_TRUE(q->rnr_waiting);
  EXPECT_EQ(q->rnr_retries_left, 2u);
  ASSERT_TRUE(timer().scheduled());
  EXPECT_EQ(timer().when(), b.sim.now() + rnr_timer_duration(14));
  EXPECT_TRUE(send_queue.rewound.empty()) << "not before the RNR time";
  completer.on_timer(*q);
  EXPECT_FALSE(q->rnr_waiting);
  EXPECT_EQ(send_queue.rewound, (std::vector<uint32_t>{1}));
  EXPECT_EQ(completer.timeouts(), 0u) << "an RNR wait is no timeout";
}

TEST_F(CompleterTest, RnrRetriesRunOut) {
  sent(1, WrOpcode::Send, 8);
  q->rnr_retry = q->rnr_retries_left = 1;
  ack(0, Syndrome::rnr_nak(1));
  EXPECT_TRUE(errors.fatal.empty());
  ack(0, Syndrome::rnr_nak(1));
  ASSERT_EQ(errors.fatal.size(), 1u);
  EXPECT_EQ(errors.fatal[0].status, WcStatus::RnrRetryExcErr);
}

TEST_F(CompleterTest, RnrRetryOfSevenRetriesForever) {
  sent(1, WrOpcode::Send, 8);
  q->rnr_retry = 7;
  q->rnr_retries_left = 0;
  for (int i = 0; i < 3; ++i) ack(0, Syndrome::rnr_nak(1));
  EXPECT_TRUE(errors.fatal.empty());
  EXPECT_EQ(completer.naks(), 3u);
}

TEST_F(CompleterTest, ATimeoutGoesBackToTheOldestUnacknowledgedPsn) {
  sent(1, WrOpcode::Send, 8);
  sent(2, WrOpcode::Send, 8);
  ack(0);
  q->retries_left = 2;
  b.sim.scheduler().cancel(*q->retransmit_timer);
  completer.on_timer(*q);
  EXPECT_EQ(send_queue.rewound, (std::vector<uint32_t>{1}));
  EXPECT_EQ(q->retries_left, 1u);
  EXPECT_EQ(completer.timeouts(), 1u);
  EXPECT_TRUE(timer().scheduled()) << "armed again";
}

TEST_F(CompleterTest, RetriesRunOut) {
  sent(1, WrOpcode::Send, 8);
  q->retries_left = 0;
  completer.on_timer(*q);
  ASSERT_EQ(errors.fatal.size(), 1u);
  EXPECT_EQ(errors.fatal[0].status, WcStatus::RetryExcErr);
  EXPECT_TRUE(send_queue.rewound.empty());
}

TEST_F(CompleterTest, ATimerWithNothingOutstandingOrOutOfRtsDoesNothing) {
  completer.on_timer(*q);  // nothing sent
  sent(1, WrOpcode::Send, 8);
  q->state = QpState::Sqd;
  completer.on_timer(*q);
  EXPECT_EQ(completer.timeouts(), 0u);
  EXPECT_TRUE(send_queue.rewound.empty());
}

TEST_F(CompleterTest, TheTimerRunsOnlyWithPacketsOutstandingAndATimeout) {
  completer.arm_timer(*q);
  EXPECT_FALSE(timer().scheduled()) << "nothing outstanding";
  sent(1, WrOpcode::Send, 8);
  q->timeout = 0;
  completer.arm_timer(*q);
  EXPECT_FALSE(timer().scheduled()) << "timeout 0: infinite";
  q->timeout = 10;
  q->ack_timeout = local_ack_timeout(10);
  completer.arm_timer(*q);
  ASSERT_TRUE(timer().scheduled());
  EXPECT_EQ(timer().when(), b.sim.now() + local_ack_timeout(10));
}


TEST(CompleterTimers, TheRnrTimerAndTheLocalAckTimeoutHaveTheirSpecifiedValues) {
  EXPECT_EQ(rnr_timer_duration(0), sim::Duration::us(655360));
  EXPECT_EQ(rnr_timer_duration(1), sim::Duration::us(10));
  EXPECT_EQ(rnr_timer_duration(14), sim::Duration::us(1280));
  EXPECT_EQ(rnr_timer_duration(31), sim::Duration::us(491520));
  EXPECT_EQ(rnr_timer_duration(0x20 | 1), rnr_timer_duration(1)) << "five bits";
  EXPECT_EQ(local_ack_timeout(0), sim::Duration::max());
  EXPECT_EQ(local_ack_timeout(1), sim::Duration::ns(8192));
  EXPECT_EQ(local_ack_timeout(14), sim::Duration::ns(4096) * int64_t{16384});
}

void selective_repeat(NicParams& p) { p.loss_recovery = LossRecovery::SelectiveRepeat; }
using CompleterSelectiveRepeatTest = Tuned<CompleterTest, selective_repeat>;

TEST_F(CompleterSelectiveRepeatTest, ANakAndATimeoutResendOnePsn) {
  sent(1, WrOpcode::Send, 8);
  sent(2, WrOpcode::Send, 8);
  sent(3, WrOpcode::Send, 8);
  ack(1, Syndrome::nak(NakCode::PsnSequenceError));
  EXPECT_EQ(send_queue.resent, (std::vector<uint32_t>{1}));
  completer.on_timer(*q);
  EXPECT_EQ(send_queue.resent, (std::vector<uint32_t>{1, 1})) << "the oldest unacknowledged";
  EXPECT_TRUE(send_queue.rewound.empty());
}

}  // namespace
}  // namespace rnicsim::nictest
