// The requester alone, on fakes of the transmit, response, completion and error
// ports: segmentation, opcodes and PSNs of what it sends, the checks of a WQE,
// and what holds it back (ORD, fence, PSN window, a full pipeline) or sends again.
#include "nic_model/requester.hpp"

#include "block_fixture.hpp"

namespace rnicsim::nictest {
namespace {

using packet::Opcode;

constexpr uint32_t kMtu = 256;
constexpr uint64_t kRemote = 0x10000;
constexpr uint32_t kRkey = 0x77;  // as the WQEs carry it
constexpr Rkey kRkeyOnWire{kRkey};

class RequesterTest : public ::testing::Test {
protected:
  explicit RequesterTest(NicParams params = {}) : b(params), requester(b.ctx) {
    requester.connect({.transmit = &transmit, .responses = &responses, .completions = &completions, .errors = &errors});
    buffer = &b.region(Pdn(1), 16 * 1024, kAccessLocalWrite);
  }
  QpContext& qp(QpType type = QpType::Rc, uint32_t qpn = 0x11, QpState state = QpState::Rts) {
    QpContext& q = b.add_qp(qpn, state);
    q.type = type;
    q.pd = Pdn(1);
    q.path_mtu = kMtu;
    return q;
  }
  // A WQE of `len` bytes at `offset` into the registered buffer.
  SendWqe wqe(uint64_t wr_id, WrOpcode op, uint32_t len, uint8_t flags = 0, uint32_t offset = 0) const {
    SendWqe w{};
    w.wr_id = wr_id;
    w.opcode = op;
    w.send_flags = flags;
    w.num_sge = 1;
    w.sge[0] = Sge{buffer->addr + offset, len, buffer->lkey};
    w.remote_addr = kRemote;
    w.rkey = kRkeyOnWire;
    return w;
  }
  void post(QpContext& q, const SendWqe& w) {
    requester.accept_wqe(q, w);
    b.run();
  }
  std::vector<uint8_t> opcodes() const {
    std::vector<uint8_t> v;
    for (const SentFrame& s : transmit.sent) v.push_back(static_cast<uint8_t>(s.fields.opcode));
    return v;
  }
  std::vector<uint32_t> psns() const {
    std::vector<uint32_t> v;
    for (const SentFrame& s : transmit.sent) v.push_back(s.fields.psn.value());
    return v;
  }
  std::vector<bool> ack_reqs() const {
    std::vector<bool> v;
    for (const SentFrame& s : transmit.sent) v.push_back(s.fields.ack_req);
    return v;
  }

  BlockContext b;
  FakeTransmit transmit;
  FakeResponses responses;
  FakeCompletions completions;
  FakeErrors errors;
  Requester requester;
  const MemoryRegion* buffer = nullptr;
};

TEST_F(RequesterTest, AWriteIsSegmentedAtThePathMtu) {
  QpContext& q = qp();
  post(q, wqe(1, WrOpcode::RdmaWrite, 2 * kMtu + 100));
  EXPECT_EQ(opcodes(), (std::vector<uint8_t>{0x06, 0x07, 0x08}));
  EXPECT_EQ(psns(), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(ack_reqs(), (std::vector<bool>{false, false, true}));
  ASSERT_EQ(transmit.sent.size(), 3u);
  // Only the FIRST carries the RETH, for the whole message.
  ASSERT_TRUE(transmit.sent[0].fields.reth);
  EXPECT_EQ(*transmit.sent[0].fields.reth, (packet::RethFields{kRemote, kRkeyOnWire, 2 * kMtu + 100}));
  EXPECT_FALSE(transmit.sent[1].fields.reth);
  // Each packet's payload is DMA-read from its piece of the buffer.
  for (uint32_t i = 0; i < 3; ++i) {
    const SentFrame& s = transmit.sent[i];
    EXPECT_EQ(s.fields.payload_length, i < 2 ? kMtu : 100u);
    ASSERT_EQ(s.pieces.size(), 1u);
    EXPECT_EQ(s.pieces[0].host_addr, buffer->addr + i * kMtu);
    EXPECT_EQ(s.pieces[0].length, s.fields.payload_length);
    EXPECT_EQ(s.qpn, 0x11u);
    EXPECT_EQ(s.origin, TxOrigin::Request);
  }
  EXPECT_EQ(responses.armed, 3);  // RC: the retransmission timer, per packet
  EXPECT_EQ(q.next_psn, Psn(3));
  EXPECT_EQ(q.send_entries.size(), 1u) << "kept until the completer retires it";
  EXPECT_TRUE(completions.sends.empty());
  EXPECT_EQ(requester.packets_sent(), 3u);
}

TEST_F(RequesterTest, ASendsSolicitedBitAndImmediateAreOnItsLastPacket) {
  QpContext& q = qp();
  SendWqe w = wqe(1, WrOpcode::SendWithImm, kMtu + 4, kSendSolicited);
  w.imm_data = 0xAABBCCDD;
  post(q, w);
  EXPECT_EQ(opcodes(), (std::vector<uint8_t>{0x00, 0x03}));
  ASSERT_EQ(transmit.sent.size(), 2u);
  EXPECT_FALSE(transmit.sent[0].fields.solicited);
  EXPECT_FALSE(transmit.sent[0].fields.imm);
  EXPECT_TRUE(transmit.sent[1].fields.solicited);
  ASSERT_TRUE(transmit.sent[1].fields.imm);
  EXPECT_EQ(*transmit.sent[1].fields.imm, __builtin_bswap32(0xAABBCCDD));
}

TEST_F(RequesterTest, WqesFollowEachOtherInPsnOrder) {
  QpContext& q = qp();
  requester.accept_wqe(q, wqe(1, WrOpcode::Send, 10));
  requester.accept_wqe(q, wqe(2, WrOpcode::Send, kMtu * 2));
  b.run();
  EXPECT_EQ(opcodes(), (std::vector<uint8_t>{0x04, 0x00, 0x02}));
  EXPECT_EQ(psns(), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(q.send_entries.size(), 2u);
  EXPECT_EQ(q.send_entries[1].first_psn, Psn(1));
}

TEST_F(RequesterTest, AReadIsOneRequestButTakesTheResponsesPsns) {
  QpContext& q = qp();
  requester.accept_wqe(q, wqe(1, WrOpcode::RdmaRead, 2 * kMtu + 1));  // three response packets
  requester.accept_wqe(q, wqe(2, WrOpcode::Send, 8));
  b.run();
  EXPECT_EQ(opcodes(), (std::vector<uint8_t>{0x0C, 0x04}));
  EXPECT_EQ(psns(), (std::vector<uint32_t>{0, 3}));
  ASSERT_EQ(transmit.sent.size(), 2u);
  EXPECT_EQ(transmit.sent[0].fields.payload_length, 0u);
  EXPECT_TRUE(transmit.sent[0].pieces.empty());
  EXPECT_FALSE(transmit.sent[0].fields.ack_req) << "the responses answer it";
  EXPECT_EQ(*transmit.sent[0].fields.reth, (packet::RethFields{kRemote, kRkeyOnWire, 2 * kMtu + 1}));
  EXPECT_EQ(q.rd_atomic_inflight, 1u);
  EXPECT_EQ(q.next_psn, Psn(4));
}

class RequesterOrd2Test : public RequesterTest {
protected:
  QpContext& qp2() {
    QpContext& q = qp();
    q.max_rd_atomic = 2;
    return q;
  }
};

TEST_F(RequesterOrd2Test, AnAtomicIsOnePacketWithItsOperands) {
  QpContext& q = qp2();
  SendWqe cas = wqe(1, WrOpcode::AtomicCmpSwap, 8);
  cas.compare_add = 5;
  cas.swap = 9;
  SendWqe add = wqe(2, WrOpcode::AtomicFetchAdd, 8, 0, 8);
  add.compare_add = 3;
  requester.accept_wqe(q, cas);
  requester.accept_wqe(q, add);
  b.run();
  EXPECT_EQ(opcodes(), (std::vector<uint8_t>{0x13, 0x14}));
  EXPECT_EQ(psns(), (std::vector<uint32_t>{0, 1}));
  ASSERT_EQ(transmit.sent.size(), 2u);
  EXPECT_EQ(*transmit.sent[0].fields.atomic_eth, (packet::AtomicEthFields{kRemote, kRkeyOnWire, 9, 5}));
  EXPECT_EQ(*transmit.sent[1].fields.atomic_eth, (packet::AtomicEthFields{kRemote, kRkeyOnWire, 3, 0}));
  EXPECT_EQ(q.rd_atomic_inflight, 2u);
}

TEST_F(RequesterTest, TheOrdLimitHoldsASecondReadBack) {
  QpContext& q = qp();  // max_rd_atomic 1
  requester.accept_wqe(q, wqe(1, WrOpcode::RdmaRead, 100));
  requester.accept_wqe(q, wqe(2, WrOpcode::RdmaRead, 100));
  b.run();
  EXPECT_EQ(psns(), (std::vector<uint32_t>{0}));
  q.rd_atomic_inflight = 0;  // the first one's answer came
  requester.kick(q);
  b.run();
  EXPECT_EQ(psns(), (std::vector<uint32_t>{0, 1}));
}

TEST_F(RequesterOrd2Test, AFencedWqeWaitsForTheAnswersOfEarlierReads) {
  QpContext& q = qp2();
  requester.accept_wqe(q, wqe(1, WrOpcode::RdmaRead, 100));
  requester.accept_wqe(q, wqe(2, WrOpcode::RdmaWrite, 100, kSendFence));
  b.run();
  EXPECT_EQ(opcodes(), (std::vector<uint8_t>{0x0C}));
  q.rd_atomic_inflight = 0;
  requester.kick(q);
  b.run();
  EXPECT_EQ(opcodes(), (std::vector<uint8_t>{0x0C, 0x0A}));
}

TEST_F(RequesterTest, UcHasItsOwnOpcodesAndCompletesWhenTheLastPacketLeaves) {
  QpContext& q = qp(QpType::Uc);
  post(q, wqe(7, WrOpcode::RdmaWrite, kMtu + 1));
  EXPECT_EQ(opcodes(), (std::vector<uint8_t>{0x26, 0x28}));
  EXPECT_EQ(ack_reqs(), (std::vector<bool>{false, false}));
  ASSERT_EQ(transmit.sent.size(), 2u);
  EXPECT_EQ(transmit.sent[0].origin, TxOrigin::Request);
  EXPECT_EQ(transmit.sent[1].origin, TxOrigin::RequestEndsUnreliableWqe);
  EXPECT_EQ(responses.armed, 0) << "no retransmission on UC";
  EXPECT_TRUE(completions.sends.empty());
  requester.unreliable_wqe_sent(q);
  ASSERT_EQ(completions.sends.size(), 1u);
  EXPECT_EQ(completions.sends[0].wr_id, 7u);
  EXPECT_EQ(completions.sends[0].status, WcStatus::Success);
  EXPECT_TRUE(q.send_entries.empty());
  EXPECT_EQ(q.next_entry, 0u);
}

TEST_F(RequesterTest, UdCarriesADethAndTheAddressHandlesDestination) {
  QpContext& q = qp(QpType::Ud);
  AddressVector av;
  av.mac = {2, 0, 0, 0, 0, 9};
  av.ip = packet::ipv4_mapped(0x0A000009);
  const uint32_t ah = b.tables.add_ah(av);
  SendWqe w = wqe(3, WrOpcode::Send, 100);
  w.ud_ah = ah;
  w.ud_remote_qpn = packet::Qpn(0x55);
  w.ud_remote_qkey = packet::Qkey(0x1234);
  post(q, w);
  ASSERT_EQ(transmit.sent.size(), 1u);
  const packet::PacketFields& f = transmit.sent[0].fields;
  EXPECT_EQ(f.opcode, Opcode::UdSendOnly);
  EXPECT_EQ(f.dest_qp, Qpn(0x55));
  EXPECT_EQ(*f.deth, (packet::DethFields{packet::Qkey(0x1234), packet::Qpn(0x11)}));
  EXPECT_EQ(f.eth_dst, av.mac);
  EXPECT_EQ(f.ip_dst, av.ip);
  EXPECT_EQ(transmit.sent[0].origin, TxOrigin::RequestEndsUnreliableWqe);
}

TEST_F(RequesterTest, InlineDataIsCopiedIntoTheFrame) {
  QpContext& q = qp();
  SendWqe w = wqe(1, WrOpcode::Send, 0, kSendInline);
  const std::vector<std::byte> data = pattern(20, 0x40);
  std::copy(data.begin(), data.end(), w.inline_data.begin());
  w.inline_len = 20;
  post(q, w);
  ASSERT_EQ(transmit.sent.size(), 1u);
  EXPECT_EQ(transmit.sent[0].payload, data);
  EXPECT_TRUE(transmit.sent[0].pieces.empty()) << "nothing left to DMA-read";
}

TEST_F(RequesterTest, AWqeTheQpCannotExecuteCompletesInErrorAndBreaksTheQp) {
  struct Case {
    const char* what;
    QpType type;
    SendWqe w;
    WcStatus status;
  };
  SendWqe long_inline = wqe(0, WrOpcode::Send, 0, kSendInline);
  long_inline.inline_len = kMaxInline + 1;
  SendWqe too_many_sges = wqe(0, WrOpcode::Send, 8);
  too_many_sges.num_sge = kMaxSge + 1;
  SendWqe misaligned = wqe(0, WrOpcode::AtomicFetchAdd, 8);
  misaligned.remote_addr = kRemote + 4;
  const Case cases[] = {
      {"UD WRITE", QpType::Ud, wqe(0, WrOpcode::RdmaWrite, 8), WcStatus::LocQpOpErr},
      {"UC READ", QpType::Uc, wqe(0, WrOpcode::RdmaRead, 8), WcStatus::LocQpOpErr},
      {"inline too long", QpType::Rc, long_inline, WcStatus::LocQpOpErr},
      {"inline READ", QpType::Rc, wqe(0, WrOpcode::RdmaRead, 8, kSendInline), WcStatus::LocQpOpErr},
      {"five SGEs", QpType::Rc, too_many_sges, WcStatus::LocQpOpErr},
      {"atomic of 4 bytes", QpType::Rc, wqe(0, WrOpcode::AtomicCmpSwap, 4), WcStatus::LocLenErr},
      {"misaligned atomic", QpType::Rc, misaligned, WcStatus::LocLenErr},
      {"UD longer than the MTU", QpType::Ud, wqe(0, WrOpcode::Send, kMtu + 1), WcStatus::LocLenErr},
  };
  uint32_t qpn = 0x20;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    QpContext& q = qp(c.type, qpn);
    SendWqe w = c.w;
    w.wr_id = qpn;
    completions.sends.clear();
    errors.fatal.clear();
    post(q, w);
    ASSERT_EQ(completions.sends.size(), 1u);
    EXPECT_EQ(completions.sends[0].wr_id, qpn);
    EXPECT_EQ(completions.sends[0].status, c.status);
    ASSERT_EQ(errors.fatal.size(), 1u);
    EXPECT_EQ(errors.fatal[0].qpn, qpn);
    EXPECT_EQ(errors.fatal[0].status, WcStatus::WrFlushErr);
    EXPECT_TRUE(q.send_entries.empty());
    ++qpn;
  }
  EXPECT_TRUE(transmit.sent.empty());
}

TEST_F(RequesterTest, AWqeForAQpInErrorIsFlushed) {
  QpContext& q = qp(QpType::Rc, 0x11, QpState::Err);
  post(q, wqe(4, WrOpcode::Send, 8));
  ASSERT_EQ(completions.sends.size(), 1u);
  EXPECT_EQ(completions.sends[0].wr_id, 4u);
  EXPECT_EQ(completions.sends[0].status, WcStatus::WrFlushErr);
  EXPECT_TRUE(errors.fatal.empty()) << "already broken";
  EXPECT_TRUE(transmit.sent.empty());
}

TEST_F(RequesterTest, ABufferWithABadLkeyBreaksTheQpWithAProtectionError) {
  QpContext& q = qp();
  SendWqe w = wqe(1, WrOpcode::Send, 8);
  w.sge[0].lkey = packet::Lkey(w.sge[0].lkey.value() ^ 0x5A5A00);
  post(q, w);
  EXPECT_TRUE(transmit.sent.empty());
  ASSERT_EQ(errors.fatal.size(), 1u);
  EXPECT_EQ(errors.fatal[0].status, WcStatus::LocProtErr);
}

TEST_F(RequesterTest, AFullPipelineStopsTheRequesterUntilThereIsRoom) {
  QpContext& q = qp();
  transmit.room = false;
  post(q, wqe(1, WrOpcode::Send, 3 * kMtu));
  EXPECT_TRUE(transmit.sent.empty());
  transmit.room = true;
  requester.room_available();
  b.run();
  EXPECT_EQ(psns(), (std::vector<uint32_t>{0, 1, 2}));
}

TEST_F(RequesterTest, QpsWithWorkTakeTurnsPacketByPacket) {
  QpContext& a = qp(QpType::Rc, 0x11);
  QpContext& c = qp(QpType::Rc, 0x12);
  requester.accept_wqe(a, wqe(1, WrOpcode::Send, 2 * kMtu));
  requester.accept_wqe(c, wqe(2, WrOpcode::Send, 2 * kMtu));
  b.run();
  std::vector<uint32_t> order;
  for (const SentFrame& s : transmit.sent) order.push_back(s.qpn);
  EXPECT_EQ(order, (std::vector<uint32_t>{0x11, 0x12, 0x11, 0x12}));
}

TEST_F(RequesterTest, RewindSendsAgainFromThePsnOn) {
  QpContext& q = qp();
  post(q, wqe(1, WrOpcode::RdmaWrite, 3 * kMtu));
  requester.rewind(q, Psn(1));
  b.run();
  EXPECT_EQ(psns(), (std::vector<uint32_t>{0, 1, 2, 1, 2}));
  EXPECT_EQ(opcodes(), (std::vector<uint8_t>{0x06, 0x07, 0x08, 0x07, 0x08}));
  EXPECT_EQ(q.retransmitted_packets, 2u);
  EXPECT_EQ(b.stats.retransmitted_packets, 2u);
  requester.rewind(q, Psn(9));  // no WQE has it: nothing
  b.run();
  EXPECT_EQ(transmit.sent.size(), 5u);
}

TEST_F(RequesterTest, ARewindIntoAReadAsksOnlyForWhatIsMissing) {
  QpContext& q = qp();
  post(q, wqe(1, WrOpcode::RdmaRead, 3 * kMtu));
  requester.rewind(q, Psn(1));  // the first response arrived
  b.run();
  EXPECT_EQ(psns(), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(q.retransmitted_packets, 1u) << "one request asked again, not the two response PSNs";
  ASSERT_EQ(transmit.sent.size(), 2u);
  EXPECT_EQ(*transmit.sent[1].fields.reth, (packet::RethFields{kRemote + kMtu, kRkeyOnWire, 2 * kMtu}));
  EXPECT_EQ(q.rd_atomic_inflight, 1u) << "asked again, counted once";
  EXPECT_EQ(q.next_psn, Psn(3));
}

TEST_F(RequesterTest, ResendSendsOnePacketOnceAndGoesOnWhereItWas) {
  QpContext& q = qp();
  post(q, wqe(1, WrOpcode::RdmaWrite, 3 * kMtu));
  requester.resend(q, Psn(1));
  requester.resend(q, Psn(1));  // already queued
  b.run();
  EXPECT_EQ(psns(), (std::vector<uint32_t>{0, 1, 2, 1}));
  EXPECT_EQ(opcodes().back(), 0x07);
  EXPECT_EQ(q.next_psn, Psn(3));
  EXPECT_EQ(q.retransmitted_packets, 1u);
}

// Known bug, disabled until fixed: resend() passes over READs and atomics, so
// with selective repeat a lost READ or atomic request is never sent again (the
// responder keeps NAKing its PSN, each timeout resends it, and nothing goes
// out) until the retries run out and the QP fails with RetryExcErr.
TEST_F(RequesterTest, ResendOfALostReadOrAtomicRequestSendsItAgain) {
  QpContext& q = qp();
  q.max_rd_atomic = 2;
  requester.accept_wqe(q, wqe(1, WrOpcode::RdmaRead, 100));            // PSN 0
  requester.accept_wqe(q, wqe(2, WrOpcode::AtomicFetchAdd, 8, 0, 8));  // PSN 1
  b.run();
  requester.resend(q, Psn(0));
  requester.resend(q, Psn(1));
  b.run();
  EXPECT_EQ(opcodes(), (std::vector<uint8_t>{0x0C, 0x14, 0x0C, 0x14}));
}

void small_window(NicParams& p) {
  p.ack_coalesce_packets = 2;
  p.max_inflight_psns = 2;
}
using RequesterSmallWindowTest = Tuned<RequesterTest, small_window>;

TEST_F(RequesterSmallWindowTest, APacketAsksForAnAckEveryNPacketsAndTheWindowBoundsWhatIsOut) {
  QpContext& q = qp();
  post(q, wqe(1, WrOpcode::Send, 5 * kMtu));
  EXPECT_EQ(psns(), (std::vector<uint32_t>{0, 1})) << "two PSNs unacknowledged at most";
  q.una = Psn(2);
  requester.kick(q);
  b.run();
  EXPECT_EQ(psns().size(), 4u);
  q.una = Psn(4);
  requester.kick(q);
  b.run();
  EXPECT_EQ(psns(), (std::vector<uint32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(ack_reqs(), (std::vector<bool>{false, true, false, true, true}));
}

// Reading a message in chunks of 4 packets (tx_read_chunk_bytes): a chunk's
// first packet reads the rest of the chunk too (its frame leaves when all of it
// has landed), the chunk's other packets take their bytes from the NIC. A
// chunk ends at the message's end; a packet sent again reads its own bytes, and
// a rewind starts a chunk where it goes back to.
void chunks_of_four(NicParams& p) { p.tx_read_chunk_bytes = 4 * kMtu; }
using RequesterChunkTest = Tuned<RequesterTest, chunks_of_four>;

TEST_F(RequesterChunkTest, AChunksFirstPacketReadsItAllAndTheOthersTakeTheirBytesFromTheNic) {
  QpContext& q = qp();
  post(q, wqe(1, WrOpcode::RdmaWrite, 6 * kMtu + 100));
  ASSERT_EQ(transmit.sent.size(), 7u);
  auto ahead_bytes = [&](size_t i) {
    uint32_t n = 0;
    for (const DmaPiece& d : transmit.sent[i].ahead) n += d.length;
    return n;
  };
  EXPECT_EQ(ahead_bytes(0), 3 * kMtu);
  ASSERT_EQ(transmit.sent[0].ahead.size(), 1u);
  EXPECT_EQ(transmit.sent[0].ahead[0].host_addr, buffer->addr + kMtu) << "the chunk's rest, after its own bytes";
  EXPECT_EQ(ahead_bytes(4), kMtu + 100) << "the last chunk ends with the message";
  for (size_t i : {1, 2, 3, 5, 6}) {
    EXPECT_TRUE(transmit.sent[i].buffered) << i;
    EXPECT_EQ(ahead_bytes(i), 0u) << i;
    EXPECT_EQ(transmit.sent[i].pieces.size(), 1u) << "it still names its bytes: " << i;
  }
  EXPECT_FALSE(transmit.sent[0].buffered);
  EXPECT_FALSE(transmit.sent[4].buffered);

  requester.resend(q, Psn(1));
  b.run();
  ASSERT_EQ(transmit.sent.size(), 8u);
  EXPECT_FALSE(transmit.sent[7].buffered) << "sent again: reads its own bytes";
  EXPECT_EQ(ahead_bytes(7), 0u);

  requester.rewind(q, Psn(2));
  b.run();
  ASSERT_EQ(transmit.sent.size(), 13u);
  EXPECT_EQ(ahead_bytes(8), 3 * kMtu) << "a chunk starts where the rewind goes back to";
  for (size_t i : {9, 10, 11}) EXPECT_TRUE(transmit.sent[i].buffered) << i;
  EXPECT_FALSE(transmit.sent[12].buffered) << "the message's last packet, alone in its chunk";
  EXPECT_EQ(ahead_bytes(12), 0u);
}

TEST_F(RequesterTest, WithoutChunksEveryPacketReadsItsOwnBytes) {
  QpContext& q = qp();
  post(q, wqe(1, WrOpcode::RdmaWrite, 3 * kMtu));
  ASSERT_EQ(transmit.sent.size(), 3u);
  for (const SentFrame& s : transmit.sent) {
    EXPECT_FALSE(s.buffered);
    EXPECT_TRUE(s.ahead.empty());
  }
}

}  // namespace
}  // namespace rnicsim::nictest
