// The responder alone, on fakes of the completion, error, fetch, transmit,
// receive and wire ports: requests executed in PSN order into host memory and
// receive WQEs, ACKs, NAKs and RNR NAKs on the wire, READ responses and atomic
// ACKs through the transmit pipeline, and the checks that refuse a request.
#include "nic_model/responder.hpp"

#include <cstring>

#include "block_fixture.hpp"

namespace rnicsim::nictest {
namespace {

using packet::Opcode;

constexpr uint32_t kMtu = 256;
constexpr Cqn kCq(5);
constexpr uint32_t kRemoteAccess = kAccessRemoteWrite | kAccessRemoteRead | kAccessRemoteAtomic;

class ResponderTest : public ::testing::Test {
protected:
  explicit ResponderTest(NicParams params = {}) : b(params), responder(b.ctx) {
    responder.connect({.completions = &completions,
                       .errors = &errors,
                       .fetch = &fetch,
                       .transmit = &transmit,
                       .receive = &receive,
                       .wire = &wire});
    mem = &b.region(Pdn(1), 16 * 1024, kAccessLocalWrite | kRemoteAccess);
  }
  QpContext& qp(QpType type = QpType::Rc, uint32_t qpn = 0x11, QpState state = QpState::Rts) {
    QpContext& q = b.add_qp(qpn, state);
    q.type = type;
    q.pd = Pdn(1);
    q.path_mtu = kMtu;
    q.access_flags = kRemoteAccess;
    q.recv_cq = kCq;
    q.dest_qpn = Qpn(0x22);
    return q;
  }
  static RecvWqe recv_wqe(uint64_t wr_id, uint64_t addr, uint32_t len, uint32_t lkey) {
    RecvWqe w{};
    w.wr_id = wr_id;
    w.num_sge = 1;
    w.sge[0] = Sge{addr, len, packet::Lkey(lkey)};
    return w;
  }
  // SRQ 3 with `count` WQEs posted and fetched: wr_id 1 up, each `len` bytes,
  // one after the other in the registered memory.
  SrqContext& add_srq(uint64_t count, uint32_t len) {
    auto srq = std::make_unique<SrqContext>();
    srq->srqn = Srqn(3);
    srq->pd = Pdn(1);
    srq->ring.producer = srq->ring.fetched = static_cast<uint32_t>(count);
    for (uint64_t id = 1; id <= count; ++id)
      srq->wqes.push_back(recv_wqe(id, mem->addr + (id - 1) * len, len, mem->lkey.value()));
    return b.tables.add_srq(std::move(srq));
  }
  // A receive WQE of `len` bytes at `offset` into the registered memory.
  void post_recv(QpContext& q, uint64_t wr_id, uint32_t offset, uint32_t len) {
    q.recv_wqes.push_back(recv_wqe(wr_id, mem->addr + offset, len, mem->lkey.value()));
  }
  static packet::PacketFields req(Opcode op, uint32_t psn, bool ack_req = false) {
    packet::PacketFields f;
    f.opcode = op;
    f.psn = packet::Psn(psn);
    f.ack_req = ack_req;
    return f;
  }
  // The RETH of an access to `len` bytes at `offset` into the registered memory.
  packet::RethFields reth(uint32_t offset, uint32_t len) const { return {mem->addr + offset, mem->rkey, len}; }
  Responder::Verdict request(QpContext& q, packet::PacketFields f, std::span<const std::byte> payload = {}) {
    f.dest_qp = q.qpn;
    InPacket in = make_packet(b.pool, f, payload);
    return responder.receive(q, in.p, in.frame);
  }
  packet::PacketFields read_request(uint32_t psn) const {
    packet::PacketFields f = req(Opcode::RcRdmaReadRequest, psn);
    f.reth = reth(0, 8);
    return f;
  }
  packet::PacketFields atomic(Opcode op, uint32_t psn, uint32_t offset, uint64_t swap_add, uint64_t compare = 0) const {
    packet::PacketFields f = req(op, psn);
    f.atomic_eth = packet::AtomicEthFields{mem->addr + offset, mem->rkey, swap_add, compare};
    return f;
  }
  uint64_t load64(uint32_t offset) {
    uint64_t v = 0;
    const std::vector<std::byte> bytes = b.read(mem->addr + offset, 8);
    std::memcpy(&v, bytes.data(), 8);
    return v;
  }
  void store64(uint32_t offset, uint64_t v) {
    ASSERT_TRUE(b.memory.write(mem->addr + offset, bytes_of(v)));
  }
  // The wire's frames as (syndrome, PSN).
  std::vector<std::pair<Syndrome, uint32_t>> acks() const {
    std::vector<std::pair<Syndrome, uint32_t>> v;
    for (const packet::PacketFields& f : wire.sent) {
      EXPECT_EQ(f.opcode, Opcode::RcAcknowledge);
      v.emplace_back(f.aeth ? f.aeth->syndrome : Syndrome(0xFF), f.psn.value());
    }
    return v;
  }
  using Acks = std::vector<std::pair<Syndrome, uint32_t>>;
  // An RDMA WRITE ONLY of `len` pattern bytes, to where `r` says.
  Responder::Verdict write_only(QpContext& q, uint32_t psn, packet::RethFields r, size_t len, bool ack_req = true) {
    packet::PacketFields f = req(Opcode::RcRdmaWriteOnly, psn, ack_req);
    f.reth = r;
    return request(q, f, pattern(len));
  }
  // A class C error: the NAK alone on the wire, the asynchronous event, and qp_fatal.
  void expect_class_c(NakCode code, uint32_t psn) const {
    EXPECT_EQ(acks(), (Acks{{Syndrome::nak(code), psn}}));
    const AsyncEvent event = code == NakCode::RemoteAccessError ? AsyncEvent::QpAccessErr : AsyncEvent::QpReqErr;
    ASSERT_EQ(errors.events.size(), 1u);
    EXPECT_EQ(errors.events[0], std::make_pair(event, 0x11u));
    ASSERT_EQ(errors.fatal.size(), 1u);
    EXPECT_EQ(errors.fatal[0].status, WcStatus::WrFlushErr);
  }

  BlockContext b;
  FakeCompletions completions;
  FakeErrors errors;
  FakeFetch fetch;
  FakeTransmit transmit;
  FakeReceive receive;
  FakeWire wire;
  Responder responder;
  const MemoryRegion* mem = nullptr;
};

TEST_F(ResponderTest, ASendLandsInAReceiveWqeAndCompletesIt) {
  QpContext& q = qp();
  post_recv(q, 1, 0, 1024);
  packet::PacketFields f = req(Opcode::RcSendOnlyWithImmediate, 0, true);
  f.solicited = true;
  f.imm = 0x01020304;
  const std::vector<std::byte> data = pattern(100);
  EXPECT_EQ(request(q, f, data), RequestVerdict::Done);
  ASSERT_EQ(completions.posted.size(), 1u);
  const auto& c = completions.posted[0];
  EXPECT_EQ(c.cqn, kCq);
  EXPECT_TRUE(c.solicited);
  EXPECT_EQ(c.cqe.wr_id, 1u);
  EXPECT_EQ(c.cqe.status, WcStatus::Success);
  EXPECT_EQ(c.cqe.opcode, WcOpcode::Recv);
  EXPECT_EQ(c.cqe.byte_len, 100u);
  EXPECT_EQ(c.cqe.qp_num.value(), 0x11u);
  EXPECT_EQ(c.cqe.src_qp.value(), 0x22u);
  EXPECT_TRUE(c.cqe.wc_flags & kWcWithImm);
  EXPECT_EQ(c.cqe.imm_data, __builtin_bswap32(0x01020304)) << "network order";
  EXPECT_EQ(acks(), (Acks{{Syndrome::ack(), 0}}));
  EXPECT_EQ(wire.sent[0].aeth->msn, 1u);
  EXPECT_EQ(q.epsn, Psn(1));
  EXPECT_TRUE(q.recv_wqes.empty());
  b.run();
  EXPECT_EQ(b.read(mem->addr, 100), data);
}

TEST_F(ResponderTest, AMultiPacketSendFillsOneWqe) {
  QpContext& q = qp();
  post_recv(q, 1, 0, 1024);
  post_recv(q, 2, 2048, 1024);
  const std::vector<std::byte> data = pattern(2 * kMtu + 10);
  const std::span<const std::byte> all(data);
  request(q, req(Opcode::RcSendFirst, 0), all.subspan(0, kMtu));
  request(q, req(Opcode::RcSendMiddle, 1), all.subspan(kMtu, kMtu));
  EXPECT_TRUE(completions.posted.empty());
  EXPECT_TRUE(wire.sent.empty());
  request(q, req(Opcode::RcSendLast, 2, true), all.subspan(2 * kMtu));
  ASSERT_EQ(completions.posted.size(), 1u);
  EXPECT_EQ(completions.posted[0].cqe.wr_id, 1u);
  EXPECT_EQ(completions.posted[0].cqe.byte_len, 2 * kMtu + 10);
  EXPECT_FALSE(completions.posted[0].solicited);
  EXPECT_EQ(acks(), (Acks{{Syndrome::ack(), 2}}));
  EXPECT_EQ(q.recv_wqes.size(), 1u);
  EXPECT_EQ(q.msn, Msn(1)) << "one message";
  b.run();
  EXPECT_EQ(b.read(mem->addr, data.size()), data);
}

TEST_F(ResponderTest, AWriteIsPlacedWhereItsRethSays) {
  QpContext& q = qp();
  const std::vector<std::byte> data = pattern(kMtu + 44, 9);
  const std::span<const std::byte> all(data);
  packet::PacketFields first = req(Opcode::RcRdmaWriteFirst, 0);
  first.reth = reth(512, kMtu + 44);
  request(q, first, all.subspan(0, kMtu));
  request(q, req(Opcode::RcRdmaWriteLast, 1, true), all.subspan(kMtu));
  EXPECT_TRUE(completions.posted.empty()) << "a WRITE consumes no receive WQE";
  EXPECT_EQ(acks(), (Acks{{Syndrome::ack(), 1}}));
  EXPECT_EQ(q.payload_bytes_accepted, kMtu + 44u);
  b.run();
  EXPECT_EQ(b.read(mem->addr + 512, data.size()), data);
}

TEST_F(ResponderTest, AWriteLongerThanItsRethIsAnInvalidRequest) {
  QpContext& q = qp();
  write_only(q, 0, reth(0, 8), 16);
  expect_class_c(NakCode::InvalidRequest, 0);
}

TEST_F(ResponderTest, ASendWithInvalidateRevokesTheRkey) {
  QpContext& q = qp();
  post_recv(q, 1, 0, 64);
  const MemoryRegion& other = b.region(Pdn(1), 4096, kAccessLocalWrite | kAccessRemoteWrite);
  packet::PacketFields f = req(Opcode::RcSendOnlyWithInvalidate, 0, true);
  f.ieth = packet::IethFields{other.rkey};
  request(q, f, pattern(8));
  ASSERT_EQ(completions.posted.size(), 1u);
  EXPECT_TRUE(completions.posted[0].cqe.wc_flags & kWcWithInv);
  EXPECT_EQ(completions.posted[0].cqe.imm_data, other.rkey.value());
  write_only(q, 1, packet::RethFields{other.addr, other.rkey, 8}, 8);
  EXPECT_EQ(acks().back(), std::make_pair(Syndrome::nak(NakCode::RemoteAccessError), 1u));
}

TEST_F(ResponderTest, AWriteWithImmediateConsumesAReceiveWqe) {
  QpContext& q = qp();
  post_recv(q, 4, 0, 64);
  packet::PacketFields f = req(Opcode::RcRdmaWriteOnlyWithImmediate, 0, true);
  f.reth = reth(4096, 16);
  f.imm = 7;
  request(q, f, pattern(16));
  ASSERT_EQ(completions.posted.size(), 1u);
  EXPECT_EQ(completions.posted[0].cqe.wr_id, 4u);
  EXPECT_EQ(completions.posted[0].cqe.opcode, WcOpcode::RecvRdmaWithImm);
  EXPECT_EQ(completions.posted[0].cqe.byte_len, 16u);
  b.run();
  EXPECT_EQ(b.read(mem->addr + 4096, 16), pattern(16));
  EXPECT_EQ(b.read(mem->addr, 1), std::vector<std::byte>{std::byte{0}}) << "not into the receive buffer";
}

TEST_F(ResponderTest, ABadRkeyIsARemoteAccessErrorThatBreaksTheQp) {
  QpContext& q = qp();
  packet::RethFields bad = reth(0, 16);
  bad.rkey = Rkey(bad.rkey.value() ^ 0x100);
  write_only(q, 0, bad, 16);
  expect_class_c(NakCode::RemoteAccessError, 0);
  EXPECT_EQ(responder.counters().access_errors, 1u);
  EXPECT_EQ(q.epsn, Psn(0));
  b.run();
  EXPECT_EQ(b.read(mem->addr, 1), std::vector<std::byte>{std::byte{0}});
}

// A zero-length WRITE or READ names no memory, so its R_Key is not checked
// (UCX flushes an RC QP with a zero-byte WRITE to R_Key 0).
TEST_F(ResponderTest, AZeroLengthWriteOrReadNeedsNoValidRkey) {
  QpContext& q = qp();
  write_only(q, 0, packet::RethFields{0, packet::Rkey(0), 0}, 0);
  EXPECT_EQ(acks(), (Acks{{Syndrome::ack(), 0}}));
  EXPECT_EQ(responder.counters().access_errors, 0u);
  packet::PacketFields f = req(Opcode::RcRdmaReadRequest, 1);
  f.reth = packet::RethFields{0, packet::Rkey(0xDEAD), 0};
  EXPECT_EQ(request(q, f), RequestVerdict::Done);
  b.run();
  ASSERT_EQ(transmit.sent.size(), 1u);
  EXPECT_EQ(transmit.sent[0].fields.opcode, Opcode::RcRdmaReadResponseOnly);
  EXPECT_EQ(responder.counters().access_errors, 0u);
  EXPECT_EQ(q.epsn, Psn(2));
}

TEST_F(ResponderTest, AZeroLengthWriteStillNeedsTheQpsRemoteWriteAccess) {
  QpContext& q = qp();
  q.access_flags = kAccessRemoteRead;
  write_only(q, 0, packet::RethFields{0, packet::Rkey(0), 0}, 0);
  expect_class_c(NakCode::RemoteAccessError, 0);
}

TEST_F(ResponderTest, AQpWithoutRemoteWriteAccessRefusesAWrite) {
  QpContext& q = qp();
  q.access_flags = kAccessRemoteRead;
  write_only(q, 0, reth(0, 16), 16);
  expect_class_c(NakCode::RemoteAccessError, 0);
}

TEST_F(ResponderTest, UcDropsARequestWithABadRkeyQuietly) {
  QpContext& q = qp(QpType::Uc);
  packet::PacketFields f = req(Opcode::UcRdmaWriteOnly, 0);
  f.reth = reth(0, 16);
  f.reth->rkey = Rkey(f.reth->rkey.value() ^ 0x100);
  request(q, f, pattern(16));
  EXPECT_TRUE(wire.sent.empty());
  EXPECT_TRUE(errors.fatal.empty());
  EXPECT_TRUE(errors.events.empty());
  EXPECT_EQ(responder.counters().access_errors, 1u);
}

TEST_F(ResponderTest, ADuplicateIsAcknowledgedAgainAndNotExecuted) {
  QpContext& q = qp();
  post_recv(q, 1, 0, 64);
  post_recv(q, 2, 64, 64);
  request(q, req(Opcode::RcSendOnly, 0, true), pattern(8));
  request(q, req(Opcode::RcSendOnly, 0, true), pattern(8));
  EXPECT_EQ(acks(), (Acks{{Syndrome::ack(), 0}, {Syndrome::ack(), 0}}));
  EXPECT_EQ(completions.posted.size(), 1u);
  EXPECT_EQ(q.recv_wqes.size(), 1u);
  EXPECT_EQ(responder.counters().duplicates, 1u);
}

TEST_F(ResponderTest, AGapIsNakedOnceUntilTheMissingPsnArrives) {
  QpContext& q = qp();
  packet::PacketFields f = req(Opcode::RcRdmaWriteOnly, 2, true);
  f.reth = reth(0, 8);
  request(q, f, pattern(8));
  f.psn = packet::Psn(3);
  request(q, f, pattern(8));
  EXPECT_EQ(acks(), (Acks{{Syndrome::nak(NakCode::PsnSequenceError), 0}})) << "NAKed once, for the expected PSN";
  EXPECT_EQ(responder.counters().out_of_sequence, 2u);
  EXPECT_EQ(q.epsn, Psn(0));
  f.psn = packet::Psn(0);
  request(q, f, pattern(8));
  EXPECT_FALSE(q.nak_outstanding);
  EXPECT_EQ(wire.sent.size(), 2u);
  f.psn = packet::Psn(3);  // a new gap NAKs again
  request(q, f, pattern(8));
  EXPECT_EQ(acks().back(), std::make_pair(Syndrome::nak(NakCode::PsnSequenceError), 1u));
  EXPECT_TRUE(errors.fatal.empty());
}

TEST_F(ResponderTest, ASendWithNoReceiveWqeIsAnsweredWithAnRnrNak) {
  QpContext& q = qp();
  q.min_rnr_timer = 9;
  EXPECT_EQ(request(q, req(Opcode::RcSendOnly, 0, true), pattern(8)), RequestVerdict::Done);
  EXPECT_EQ(acks(), (Acks{{Syndrome::rnr_nak(9), 0}}));
  EXPECT_EQ(responder.counters().rnr_naks, 1u);
  EXPECT_EQ(q.epsn, Psn(0)) << "to be sent again";
  EXPECT_TRUE(completions.posted.empty());
  EXPECT_TRUE(fetch.kicked.empty());
}

// The packets behind an RNR-NAKed SEND were already on their way: they are no
// sign of a lost resend, whatever PSN an earlier NAK left behind (here the
// first PSN is more than half the PSN space away from 0). A resend lost after
// the requester went back is NAKed again.
TEST_F(ResponderTest, PacketsInFlightBehindAnRnrNakAreNotNakedAgain) {
  QpContext& q = qp();
  constexpr uint32_t kFirst = 0x900000;
  q.epsn = q.message_start = Psn(kFirst);
  q.min_rnr_timer = 9;
  request(q, req(Opcode::RcSendOnly, kFirst, true), pattern(8));
  request(q, req(Opcode::RcSendOnly, kFirst + 1, true), pattern(8));
  request(q, req(Opcode::RcSendOnly, kFirst + 2, true), pattern(8));
  EXPECT_EQ(acks(), (Acks{{Syndrome::rnr_nak(9), kFirst}}));
  EXPECT_EQ(responder.counters().repeated_naks, 0u);
  request(q, req(Opcode::RcSendOnly, kFirst + 1, true), pattern(8));  // the resend of kFirst was lost
  EXPECT_EQ(acks().back(), std::make_pair(Syndrome::nak(NakCode::PsnSequenceError), kFirst));
  EXPECT_EQ(responder.counters().repeated_naks, 1u);
}

// The NAK of a gap is lost: nothing shows the requester going back, so the
// NAK timer NAKs the gap again after nak_repeat_interval, then after twice
// that, until the missing PSN arrives.
TEST_F(ResponderTest, AGapStillOpenWhenTheNakTimerFiresIsNakedAgainWithBackOff) {
  QpContext& q = qp();
  q.nak_timer = std::make_unique<sim::Event>([&] { responder.on_nak_timer(q); }, "qp.nak_timer");
  const sim::Duration interval = b.ctx.params().nak_repeat_interval;
  ASSERT_GT(interval, sim::Duration::zero()) << "on by default";
  packet::PacketFields f = req(Opcode::RcRdmaWriteOnly, 2, true);
  f.reth = reth(0, 8);
  request(q, f, pattern(8));
  const sim::Time naked = b.sim.now();
  EXPECT_EQ(responder.counters().sequence_naks, 1u);
  const Acks one{{Syndrome::nak(NakCode::PsnSequenceError), 0}};
  b.sim.scheduler().run_until(naked + interval - sim::Duration::ns(1));
  EXPECT_EQ(acks(), one) << "not before the interval";
  b.sim.scheduler().run_until(naked + interval);
  EXPECT_EQ(acks().size(), 2u);
  EXPECT_EQ(acks().back(), one[0]) << "the gap at the expected PSN again";
  b.sim.scheduler().run_until(naked + interval * 3 - sim::Duration::ns(1));
  EXPECT_EQ(acks().size(), 2u) << "the second repeat waits twice as long";
  b.sim.scheduler().run_until(naked + interval * 3);
  EXPECT_EQ(acks().size(), 3u);
  EXPECT_EQ(responder.counters().repeated_naks, 2u);
  EXPECT_EQ(responder.counters().sequence_naks, 3u);
  f.psn = packet::Psn(0);  // the resend: the gap closes and the timer stops NAKing
  request(q, f, pattern(8));
  b.run();
  EXPECT_FALSE(q.nak_outstanding);
  EXPECT_EQ(responder.counters().repeated_naks, 2u);
  ASSERT_EQ(wire.sent.size(), 4u);
  EXPECT_FALSE(wire.sent.back().aeth->syndrome.is_nak());
}

TEST_F(ResponderTest, ASendWaitsForReceiveWqesBeingFetched) {
  QpContext& q = qp();
  q.rq.producer = 1;  // posted, not fetched yet
  EXPECT_EQ(request(q, req(Opcode::RcSendOnly, 0, true), pattern(8)), RequestVerdict::Stall);
  EXPECT_EQ(fetch.kicked, (std::vector<WorkQueue>{WorkQueue::recv(Qpn(0x11))}));
  q.rq.fetched = 1;
  fetch.pending = true;  // the fetch is under way
  EXPECT_EQ(request(q, req(Opcode::RcSendOnly, 0, true), pattern(8)), RequestVerdict::Stall);
  EXPECT_EQ(fetch.kicked.size(), 1u);
  EXPECT_TRUE(wire.sent.empty());
  responder.recv_wqes_arrived(packet::Qpn(0x11));
  EXPECT_EQ(receive.resumed, (std::vector<uint32_t>{0x11}));
}

TEST_F(ResponderTest, AReadIsAnsweredThroughTheTransmitPipeline) {
  QpContext& q = qp();
  q.epsn = Psn(5);
  const uint32_t len = 2 * kMtu + 88;
  packet::PacketFields f = req(Opcode::RcRdmaReadRequest, 5);
  f.reth = reth(1024, len);
  EXPECT_EQ(request(q, f), RequestVerdict::Done);
  EXPECT_EQ(q.epsn, Psn(8)) << "the responses take three PSNs";
  EXPECT_TRUE(wire.sent.empty());
  b.run();
  ASSERT_EQ(transmit.sent.size(), 3u);
  const Opcode ops[] = {Opcode::RcRdmaReadResponseFirst, Opcode::RcRdmaReadResponseMiddle,
                        Opcode::RcRdmaReadResponseLast};
  for (uint32_t i = 0; i < 3; ++i) {
    const SentFrame& s = transmit.sent[i];
    EXPECT_EQ(s.fields.opcode, ops[i]);
    EXPECT_EQ(s.fields.psn, Psn(5 + i));
    EXPECT_EQ(s.origin, TxOrigin::Response);
    EXPECT_EQ(s.fields.aeth.has_value(), i != 1);
    ASSERT_EQ(s.pieces.size(), 1u);
    EXPECT_EQ(s.pieces[0].host_addr, mem->addr + 1024 + i * kMtu);
    EXPECT_EQ(s.pieces[0].length, i < 2 ? kMtu : 88u);
  }
  EXPECT_EQ(transmit.sent[2].fields.aeth->msn, 1u);
  EXPECT_EQ(responder.counters().read_responses, 3u);
  EXPECT_EQ(q.responses_queued, 0u);
}

// A SEND behind a READ whose responses are still queued is acknowledged after
// them, through the same pipeline: an ACK ahead of them would tell the
// requester the READ was lost (UCX's rendezvous READ, then its ACK'd SEND).
TEST_F(ResponderTest, AnAckBehindQueuedReadResponsesFollowsThem) {
  QpContext& q = qp();
  post_recv(q, 1, 8192, 1024);
  packet::PacketFields f = req(Opcode::RcRdmaReadRequest, 0);
  f.reth = reth(0, 2 * kMtu);
  request(q, f);
  request(q, req(Opcode::RcSendOnly, 2, true), pattern(8));
  EXPECT_TRUE(wire.sent.empty()) << "nothing overtakes the READ responses";
  EXPECT_EQ(q.acks_queued, 1u);
  b.run();
  ASSERT_EQ(transmit.sent.size(), 3u);
  EXPECT_EQ(transmit.sent[0].fields.opcode, Opcode::RcRdmaReadResponseFirst);
  EXPECT_EQ(transmit.sent[1].fields.opcode, Opcode::RcRdmaReadResponseLast);
  EXPECT_EQ(transmit.sent[1].fields.aeth->msn, 1u);
  const SentFrame& ack = transmit.sent[2];
  EXPECT_EQ(ack.fields.opcode, Opcode::RcAcknowledge);
  EXPECT_EQ(ack.fields.psn, Psn(2));
  EXPECT_EQ(ack.fields.aeth->syndrome, Syndrome::ack());
  EXPECT_EQ(ack.fields.aeth->msn, 2u);
  EXPECT_TRUE(ack.pieces.empty());
  EXPECT_EQ(q.acks_queued, 0u);
  // With nothing queued, the next ACK goes straight to the wire again.
  write_only(q, 3, reth(0, 8), 8);
  EXPECT_EQ(acks(), (Acks{{Syndrome::ack(), 3}}));
}

// A READ executed again for a duplicate holds an answer slot the requester no
// longer counts once it asks for something new (it had the first answer): the
// new READ takes that slot, within the IRD, and no class C error breaks the QP.
TEST_F(ResponderTest, AReplayedReadGivesItsSlotToANewOneAtTheIrdLimit) {
  QpContext& q = qp();  // max_dest_rd_atomic 1
  transmit.room = false;
  packet::PacketFields f = req(Opcode::RcRdmaReadRequest, 0);
  f.reth = reth(0, 8);
  request(q, f);
  request(q, f);  // the duplicate: executed again
  EXPECT_EQ(q.responses_queued, 1u);
  f.psn = packet::Psn(1);
  f.reth = reth(64, 8);
  request(q, f);
  EXPECT_TRUE(errors.fatal.empty());
  EXPECT_TRUE(wire.sent.empty());
  EXPECT_EQ(q.responses_queued, 1u);
  transmit.room = true;
  responder.room_available();
  b.run();
  ASSERT_EQ(transmit.sent.size(), 1u);
  EXPECT_EQ(transmit.sent[0].fields.psn, Psn(1));
  EXPECT_EQ(transmit.sent[0].pieces[0].host_addr, mem->addr + 64);
}

TEST_F(ResponderTest, ADuplicateReadIsExecutedAgain) {
  QpContext& q = qp();
  packet::PacketFields f = req(Opcode::RcRdmaReadRequest, 0);
  f.reth = reth(0, 8);
  request(q, f);
  b.run();
  request(q, f);
  b.run();
  EXPECT_EQ(responder.counters().duplicates, 1u);
  ASSERT_EQ(transmit.sent.size(), 2u);
  EXPECT_EQ(transmit.sent[1].fields.opcode, Opcode::RcRdmaReadResponseOnly);
  EXPECT_EQ(transmit.sent[1].fields.psn, Psn(0));
  EXPECT_EQ(q.epsn, Psn(1));
}

TEST_F(ResponderTest, ADuplicateReadReplacesTheAnswersStillQueued) {
  QpContext& q = qp();
  transmit.room = false;
  packet::PacketFields f = req(Opcode::RcRdmaReadRequest, 0);
  f.reth = reth(0, 3 * kMtu);
  request(q, f);
  request(q, f);  // asked again before any answer left
  EXPECT_EQ(q.responses_queued, 1u);
  transmit.room = true;
  responder.room_available();
  b.run();
  EXPECT_EQ(transmit.sent.size(), 3u) << "answered once";
  EXPECT_EQ(q.responses_queued, 0u);
}

TEST_F(ResponderTest, AReadWaitsForRoomInThePipeline) {
  QpContext& q = qp();
  transmit.room = false;
  packet::PacketFields f = req(Opcode::RcRdmaReadRequest, 0);
  f.reth = reth(0, 8);
  request(q, f);
  b.run();
  EXPECT_TRUE(transmit.sent.empty());
  transmit.room = true;
  responder.room_available();
  b.run();
  ASSERT_EQ(transmit.sent.size(), 1u);
  EXPECT_EQ(transmit.sent[0].fields.opcode, Opcode::RcRdmaReadResponseOnly);
}

TEST_F(ResponderTest, AReadBeyondTheIrdLimitIsAnInvalidRequest) {
  QpContext& q = qp();  // max_dest_rd_atomic 1
  transmit.room = false;  // the first READ's answer stays queued
  packet::PacketFields f = req(Opcode::RcRdmaReadRequest, 0);
  f.reth = reth(0, 8);
  request(q, f);
  f.psn = packet::Psn(1);
  request(q, f);
  EXPECT_TRUE(wire.sent.empty()) << "the NAK follows the first READ's answer";
  ASSERT_EQ(errors.fatal.size(), 1u);
  EXPECT_EQ(errors.fatal[0].status, WcStatus::WrFlushErr);
  EXPECT_EQ(responder.counters().invalid_requests, 1u);
  q.state = QpState::Err;  // as qp_fatal leaves it: the NAK still goes, the answer not
  transmit.room = true;
  responder.room_available();
  b.run();
  ASSERT_EQ(transmit.sent.size(), 1u);
  EXPECT_EQ(transmit.sent[0].fields.opcode, Opcode::RcAcknowledge);
  EXPECT_EQ(transmit.sent[0].fields.psn, Psn(1));
  EXPECT_EQ(transmit.sent[0].fields.aeth->syndrome, Syndrome::nak(NakCode::InvalidRequest));
}

TEST_F(ResponderTest, AnAtomicWaitsForHostMemoryThenAnswersWithTheOriginal) {
  QpContext& q = qp();
  store64(2048, 10);
  EXPECT_EQ(request(q, atomic(Opcode::RcFetchAdd, 0, 2048, 5)), RequestVerdict::Done);
  EXPECT_EQ(receive.atomics_done, 0);
  b.run();
  EXPECT_EQ(load64(2048), 15u);
  EXPECT_EQ(receive.atomics_done, 1);
  EXPECT_TRUE(receive.resumed.empty());
  ASSERT_EQ(transmit.sent.size(), 1u);
  EXPECT_EQ(transmit.sent[0].fields.opcode, Opcode::RcAtomicAcknowledge);
  EXPECT_EQ(transmit.sent[0].fields.psn, Psn(0));
  EXPECT_EQ(transmit.sent[0].fields.atomic_ack_eth->orig_remote_data, 10u);
  EXPECT_EQ(q.epsn, Psn(1));
  // Compare and swap: swaps only when equal.
  EXPECT_EQ(request(q, atomic(Opcode::RcCompareSwap, 1, 2048, 99, 15)), RequestVerdict::Done);
  b.run();
  EXPECT_EQ(load64(2048), 99u);
  request(q, atomic(Opcode::RcCompareSwap, 2, 2048, 1, 15));
  b.run();
  EXPECT_EQ(load64(2048), 99u);
  ASSERT_EQ(transmit.sent.size(), 3u);
  EXPECT_EQ(transmit.sent[2].fields.atomic_ack_eth->orig_remote_data, 99u);
  EXPECT_EQ(responder.counters().atomics, 3u);
}

TEST_F(ResponderTest, WhileAnAtomicExecutesItsQpGoesOnButOnlyAtomicsOnOtherBucketsRun) {
  QpContext& q = qp();
  store64(2048, 10);
  EXPECT_EQ(request(q, atomic(Opcode::RcFetchAdd, 0, 2048, 5)), RequestVerdict::Done);
  EXPECT_EQ(q.epsn, Psn(1)) << "the QP goes on at once";
  // One bucket: the next atomic waits for it; a READ waits for the atomic's write.
  EXPECT_EQ(request(q, atomic(Opcode::RcFetchAdd, 1, 2048, 5)), RequestVerdict::Wait);
  EXPECT_EQ(request(q, read_request(1)), RequestVerdict::Wait);
  EXPECT_TRUE(transmit.sent.empty()) << "the answer waits for the value";
  b.run();
  EXPECT_EQ(receive.atomics_done, 1);
  ASSERT_EQ(transmit.sent.size(), 1u);
  EXPECT_EQ(transmit.sent[0].fields.atomic_ack_eth->orig_remote_data, 10u);
  EXPECT_EQ(request(q, atomic(Opcode::RcFetchAdd, 1, 2048, 5)), RequestVerdict::Done) << "tried again";
  b.run();
  EXPECT_EQ(load64(2048), 20u);
  ASSERT_EQ(transmit.sent.size(), 2u);
  EXPECT_EQ(transmit.sent[1].fields.psn, Psn(1));
  EXPECT_EQ(transmit.sent[1].fields.atomic_ack_eth->orig_remote_data, 15u);
  EXPECT_EQ(responder.counters().out_of_sequence, 0u);
  EXPECT_EQ(responder.counters().atomic_waits, 2u);
  EXPECT_EQ(responder.counters().atomics, 2u);
}

TEST_F(ResponderTest, WithOneBucketAtomicsOfDifferentQpsRunOneAfterTheOther) {
  QpContext& a = qp(QpType::Rc, 0x11);
  QpContext& c = qp(QpType::Rc, 0x12);
  EXPECT_EQ(request(a, atomic(Opcode::RcFetchAdd, 0, 0, 1)), RequestVerdict::Done);
  EXPECT_EQ(request(c, atomic(Opcode::RcFetchAdd, 0, 4096, 1)), RequestVerdict::Wait);
  EXPECT_EQ(request(c, read_request(0)), RequestVerdict::Done) << "only atomics wait for the bucket";
}

class AtomicBucketsTest : public ResponderTest {
protected:
  static NicParams four_buckets() {
    NicParams p;
    p.atomic_buckets = 4;
    return p;
  }
  AtomicBucketsTest() : ResponderTest(four_buckets()) {}
};

// Buckets by the 8-byte word's address: words 0 and 4 share one of four, word 1 does not.
TEST_F(AtomicBucketsTest, AtomicsOnOneBucketRunOneAfterTheOtherOnDifferentOnesAtOnce) {
  ASSERT_EQ(mem->addr % 32, 0u);
  QpContext& a = qp(QpType::Rc, 0x11);
  QpContext& c = qp(QpType::Rc, 0x12);
  QpContext& d = qp(QpType::Rc, 0x13);
  store64(0, 1);
  store64(8, 2);
  EXPECT_EQ(request(a, atomic(Opcode::RcFetchAdd, 0, 0, 10)), RequestVerdict::Done);
  EXPECT_EQ(request(c, atomic(Opcode::RcFetchAdd, 0, 32, 10)), RequestVerdict::Wait) << "word 4: the same bucket";
  EXPECT_EQ(request(d, atomic(Opcode::RcFetchAdd, 0, 8, 10)), RequestVerdict::Done) << "word 1: another bucket";
  EXPECT_EQ(responder.counters().atomics, 2u) << "two at once";
  b.run();
  EXPECT_EQ(receive.atomics_done, 2);
  EXPECT_EQ(request(c, atomic(Opcode::RcFetchAdd, 0, 32, 10)), RequestVerdict::Done);
  b.run();
  EXPECT_EQ(load64(0), 11u);
  EXPECT_EQ(load64(8), 12u);
  EXPECT_EQ(load64(32), 10u);
  // One QP's atomics on different buckets run at once (two answers may wait), and answer in PSN order.
  a.max_dest_rd_atomic = 2;
  const size_t before = transmit.sent.size();
  EXPECT_EQ(request(a, atomic(Opcode::RcFetchAdd, 1, 0, 1)), RequestVerdict::Done);
  EXPECT_EQ(request(a, atomic(Opcode::RcFetchAdd, 2, 8, 1)), RequestVerdict::Done);
  b.run();
  ASSERT_EQ(transmit.sent.size(), before + 2);
  EXPECT_EQ(transmit.sent[before].fields.psn, Psn(1));
  EXPECT_EQ(transmit.sent[before + 1].fields.psn, Psn(2));
  EXPECT_EQ(transmit.sent[before + 1].fields.atomic_ack_eth->orig_remote_data, 12u);
}

TEST_F(ResponderTest, ADuplicateAtomicIsAnsweredFromTheReplayCache) {
  QpContext& q = qp();
  store64(0, 40);
  request(q, atomic(Opcode::RcFetchAdd, 0, 0, 2));
  b.run();
  EXPECT_EQ(request(q, atomic(Opcode::RcFetchAdd, 0, 0, 2)), RequestVerdict::Done);
  b.run();
  EXPECT_EQ(load64(0), 42u) << "executed once";
  ASSERT_EQ(transmit.sent.size(), 2u);
  EXPECT_EQ(transmit.sent[1].fields.psn, Psn(0));
  EXPECT_EQ(transmit.sent[1].fields.atomic_ack_eth->orig_remote_data, 40u);
  EXPECT_EQ(responder.counters().atomics, 1u);
}

TEST_F(ResponderTest, AMisalignedAtomicIsAnInvalidRequest) {
  QpContext& q = qp();
  EXPECT_EQ(request(q, atomic(Opcode::RcFetchAdd, 0, 4, 1)), RequestVerdict::Done);
  expect_class_c(NakCode::InvalidRequest, 0);
}

TEST_F(ResponderTest, UdTakesOnlyItsQkeyAndWritesTheGrhArea) {
  QpContext& q = qp(QpType::Ud);
  q.qkey = Qkey(0x1111);
  post_recv(q, 1, 0, 1024);
  packet::PacketFields f = req(Opcode::UdSendOnly, 0);
  f.deth = packet::DethFields{packet::Qkey(0x2222), packet::Qpn(0x33)};
  request(q, f, pattern(20));
  EXPECT_EQ(responder.counters().dropped, 1u);
  EXPECT_TRUE(completions.posted.empty());
  f.deth->qkey = Qkey(0x1111);
  request(q, f, pattern(20));
  ASSERT_EQ(completions.posted.size(), 1u);
  const Cqe& c = completions.posted[0].cqe;
  EXPECT_EQ(c.src_qp.value(), 0x33u);
  EXPECT_EQ(c.byte_len, 60u) << "the GRH area and the payload";
  EXPECT_TRUE(c.wc_flags & kWcGrh);
  EXPECT_EQ(c.sl, 0xA) << "RoCEv2 over IPv4, the packet type where mlx5 puts it";
  EXPECT_TRUE(wire.sent.empty()) << "UD is not acknowledged";
  b.run();
  EXPECT_EQ(b.read(mem->addr + 40, 20), pattern(20));
  EXPECT_EQ(b.read(mem->addr + 20, 1), std::vector<std::byte>{std::byte{0x45}}) << "the IPv4 header, last";
}

TEST_F(ResponderTest, AnRcPacketOutOfOpcodeSequenceIsAnInvalidRequest) {
  QpContext& q = qp();
  post_recv(q, 1, 0, 1024);
  request(q, req(Opcode::RcSendMiddle, 0), pattern(kMtu));  // no SEND in progress
  expect_class_c(NakCode::InvalidRequest, 0);
  EXPECT_EQ(responder.counters().bad_opcode_sequence, 1u);
  EXPECT_TRUE(completions.posted.empty());
}

TEST_F(ResponderTest, UcDropsAPacketOutOfOpcodeSequence) {
  QpContext& q = qp(QpType::Uc);
  post_recv(q, 1, 0, 1024);
  request(q, req(Opcode::UcSendLast, 0), pattern(8));
  EXPECT_EQ(responder.counters().bad_opcode_sequence, 1u);
  EXPECT_EQ(q.epsn, Psn(1));
  EXPECT_TRUE(completions.posted.empty());
  EXPECT_TRUE(wire.sent.empty());
  EXPECT_TRUE(errors.fatal.empty());
}

TEST_F(ResponderTest, UcALostPacketDropsTheMessageInProgress) {
  QpContext& q = qp(QpType::Uc);
  post_recv(q, 1, 0, 1024);
  request(q, req(Opcode::UcSendFirst, 0), pattern(kMtu));
  request(q, req(Opcode::UcSendLast, 2), pattern(8));  // PSN 1 was lost
  EXPECT_TRUE(completions.posted.empty());
  EXPECT_EQ(responder.counters().out_of_sequence, 1u);
  request(q, req(Opcode::UcSendOnly, 3), pattern(8));  // the next message is taken
  ASSERT_EQ(completions.posted.size(), 1u);
  EXPECT_EQ(completions.posted[0].cqe.byte_len, 8u);
}

TEST_F(ResponderTest, AQpInResetOrInitDropsEveryRequest) {
  for (const QpState state : {QpState::Reset, QpState::Init}) {
    QpContext& q = qp(QpType::Rc, state == QpState::Reset ? 0x11 : 0x12, state);
    post_recv(q, 1, 0, 64);
    EXPECT_EQ(request(q, req(Opcode::RcSendOnly, 0, true), pattern(8)), RequestVerdict::Done);
    EXPECT_EQ(q.epsn, Psn(0));
  }
  EXPECT_EQ(responder.counters().dropped, 2u);
  EXPECT_TRUE(completions.posted.empty());
  EXPECT_TRUE(wire.sent.empty());
}

TEST_F(ResponderTest, AReceiveBufferTooShortIsTheRequestersError) {
  QpContext& q = qp();
  post_recv(q, 1, 0, 50);
  request(q, req(Opcode::RcSendOnly, 0, true), pattern(100));
  ASSERT_EQ(completions.posted.size(), 1u);
  EXPECT_EQ(completions.posted[0].cqe.status, WcStatus::LocLenErr);
  EXPECT_EQ(completions.posted[0].cqe.byte_len, 0u);
  EXPECT_EQ(acks(), (Acks{{Syndrome::nak(NakCode::InvalidRequest), 0}}));
  ASSERT_EQ(errors.fatal.size(), 1u);
}

TEST_F(ResponderTest, ACompletionThatBreaksTheQpIsNotAcknowledged) {
  QpContext& q = qp();
  post_recv(q, 1, 0, 64);
  completions.overrun = true;
  request(q, req(Opcode::RcSendOnly, 0, true), pattern(8));
  EXPECT_EQ(completions.posted.size(), 1u);
  EXPECT_TRUE(wire.sent.empty());
  EXPECT_EQ(q.epsn, Psn(0));
}

TEST_F(ResponderTest, ASharedReceiveQueueRaisesItsLimitEventOnce) {
  QpContext& q = qp();
  SrqContext& s = add_srq(3, 256);
  s.limit = 2;
  q.srq = Srqn(3);
  request(q, req(Opcode::RcSendOnly, 0, true), pattern(8));
  EXPECT_TRUE(errors.events.empty()) << "two remain, not fewer than the limit";
  request(q, req(Opcode::RcSendOnly, 1, true), pattern(8));
  EXPECT_EQ(errors.events, (std::vector<std::pair<AsyncEvent, uint32_t>>{{AsyncEvent::SrqLimitReached, 3}}));
  EXPECT_EQ(s.limit, 0u) << "disarmed";
  request(q, req(Opcode::RcSendOnly, 2, true), pattern(8));
  EXPECT_EQ(errors.events.size(), 1u);
  ASSERT_EQ(completions.posted.size(), 3u);
  EXPECT_EQ(completions.posted[2].cqe.wr_id, 3u);
  EXPECT_TRUE(q.recv_wqes.empty());
}

// Two QPs on one SRQ whose multi-packet SENDs interleave (UCX's rc_verbs: one
// SRQ for every peer): each message keeps the WQE its FIRST took, and the
// other QP's message takes the next one.
TEST_F(ResponderTest, InterleavedSendsOnOneSrqEachKeepTheWqeTheirFirstTook) {
  QpContext& a = qp(QpType::Rc, 0x11);
  QpContext& c = qp(QpType::Rc, 0x12);
  SrqContext& s = add_srq(2, 4096);
  a.srq = c.srq = Srqn(3);
  const std::vector<std::byte> da = pattern(kMtu + 8, 1), dc = pattern(kMtu + 16, 2);
  request(a, req(Opcode::RcSendFirst, 0), std::span(da).subspan(0, kMtu));
  EXPECT_EQ(s.wqes.size(), 1u) << "the FIRST took its WQE off the SRQ";
  request(c, req(Opcode::RcSendFirst, 0), std::span(dc).subspan(0, kMtu));
  request(a, req(Opcode::RcSendLast, 1, true), std::span(da).subspan(kMtu));
  request(c, req(Opcode::RcSendLast, 1, true), std::span(dc).subspan(kMtu));
  ASSERT_EQ(completions.posted.size(), 2u);
  EXPECT_EQ(completions.posted[0].cqe.qp_num.value(), 0x11u);
  EXPECT_EQ(completions.posted[0].cqe.wr_id, 1u);
  EXPECT_EQ(completions.posted[0].cqe.byte_len, kMtu + 8);
  EXPECT_EQ(completions.posted[1].cqe.qp_num.value(), 0x12u);
  EXPECT_EQ(completions.posted[1].cqe.wr_id, 2u);
  EXPECT_EQ(completions.posted[1].cqe.byte_len, kMtu + 16);
  EXPECT_TRUE(s.wqes.empty());
  EXPECT_TRUE(a.recv_wqes.empty());
  EXPECT_TRUE(c.recv_wqes.empty());
  b.run();
  EXPECT_EQ(b.read(mem->addr, da.size()), da);
  EXPECT_EQ(b.read(mem->addr + 4096, dc.size()), dc);
}

// The WQE a FIRST took is the QP's own until its message ends (so a QP that
// breaks mid-message flushes it on its own CQ, as it does its RQ's); the SRQ
// keeps the rest for the other QPs.
TEST_F(ResponderTest, AnSrqWqeTakenByAFirstIsItsQpsUntilTheMessageEnds) {
  QpContext& a = qp(QpType::Rc, 0x11);
  SrqContext& s = add_srq(2, 4096);
  a.srq = Srqn(3);
  request(a, req(Opcode::RcSendFirst, 0), pattern(kMtu));
  ASSERT_EQ(a.recv_wqes.size(), 1u);
  EXPECT_EQ(a.recv_wqes.front().wr_id, 1u);
  EXPECT_EQ(s.wqes.size(), 1u);
  EXPECT_EQ(s.wqes.front().wr_id, 2u);
}

void ack_every_three(NicParams& p) { p.ack_coalesce_packets = 3; }
using ResponderCoalescingTest = Tuned<ResponderTest, ack_every_three>;

TEST_F(ResponderCoalescingTest, AnAckGoesEveryNPacketsWithoutAckRequest) {
  QpContext& q = qp();
  for (uint32_t psn = 0; psn < 4; ++psn) write_only(q, psn, reth(psn * 8, 8), 8, false);
  EXPECT_EQ(acks(), (Acks{{Syndrome::ack(), 2}}));
  EXPECT_EQ(q.unacked_packets, 1u);
}

void selective_repeat(NicParams& p) { p.loss_recovery = LossRecovery::SelectiveRepeat; }
using ResponderSelectiveRepeatTest = Tuned<ResponderTest, selective_repeat>;

TEST_F(ResponderSelectiveRepeatTest, APacketAfterAGapIsKeptAndReinjectedInItsTurn) {
  QpContext& q = qp();
  packet::PacketFields f = req(Opcode::RcRdmaWriteOnly, 1, true);
  f.reth = reth(0, 8);
  request(q, f, pattern(8));
  EXPECT_EQ(acks(), (Acks{{Syndrome::nak(NakCode::PsnSequenceError), 0}}));
  EXPECT_EQ(q.reorder.size(), 1u);
  f.psn = packet::Psn(0);
  request(q, f, pattern(8));
  EXPECT_EQ(receive.reinjected, (std::vector<uint32_t>{1}));
  EXPECT_TRUE(q.reorder.empty());
}

TEST_F(ResponderSelectiveRepeatTest, AnotherGapAfterTheKeptPacketsIsNakedToo) {
  QpContext& q = qp();
  write_only(q, 1, reth(0, 8), 8);
  write_only(q, 3, reth(8, 8), 8);  // PSNs 0 and 2 missing
  EXPECT_EQ(acks(), (Acks{{Syndrome::nak(NakCode::PsnSequenceError), 0}}));
  write_only(q, 0, reth(16, 8), 8);
  EXPECT_EQ(receive.reinjected, (std::vector<uint32_t>{1}));
  write_only(q, 1, reth(0, 8), 8, false);  // the reinjected packet, back from the receive pipeline
  EXPECT_EQ(acks().back(), std::make_pair(Syndrome::nak(NakCode::PsnSequenceError), 2u));
  EXPECT_EQ(q.reorder.size(), 1u) << "PSN 3 still kept";
}

// The kept packets are in PSN order modulo 2^24 from the expected PSN: across
// the wrap, 0xFFFFFF comes before 0x000001 although its raw value is larger.
TEST_F(ResponderSelectiveRepeatTest, KeptPacketsAcrossThePsnWrapAreReinjectedInPsnOrder) {
  QpContext& q = qp();
  q.epsn = q.message_start = Psn(0xFFFFFE);
  write_only(q, 0xFFFFFF, reth(0, 8), 8);
  write_only(q, 0x000001, reth(8, 8), 8);  // 0xFFFFFE and 0x000000 missing
  EXPECT_EQ(q.reorder.size(), 2u);
  write_only(q, 0xFFFFFE, reth(16, 8), 8);
  EXPECT_EQ(receive.reinjected, (std::vector<uint32_t>{0xFFFFFF}));
  write_only(q, 0xFFFFFF, reth(0, 8), 8, false);  // back from the receive pipeline
  EXPECT_EQ(acks().back(), std::make_pair(Syndrome::nak(NakCode::PsnSequenceError), 0u)) << "the gap at 0 is asked for";
  EXPECT_EQ(q.reorder.size(), 1u) << "PSN 1 still kept";
}

}  // namespace
}  // namespace rnicsim::nictest
