// RDMA READ, atomics, UD, SRQ, SEND WITH INVALIDATE and receive-side length errors:
// the data in the target memory (or the value returned) and every completion field.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "nic_fixture.hpp"

using namespace rnicsim;
using namespace rnicsim::nictest;

namespace {

SendWqe read_wqe(const Endpoint& x, uint64_t wr_id, uint64_t offset, uint32_t len, const Endpoint& target,
                 uint64_t remote_offset) {
  SendWqe w = x.write_wqe(wr_id, offset, len, target, remote_offset);
  w.opcode = WrOpcode::RdmaRead;
  return w;
}

SendWqe atomic_wqe(const Endpoint& x, uint64_t wr_id, uint64_t offset, const Endpoint& target, uint64_t remote_offset,
                   WrOpcode op, uint64_t compare_add, uint64_t swap = 0) {
  SendWqe w = x.write_wqe(wr_id, offset, 8, target, remote_offset);
  w.opcode = op;
  w.compare_add = compare_add;
  w.swap = swap;
  return w;
}

uint64_t load_u64(std::span<const std::byte> s) {
  uint64_t v;
  std::memcpy(&v, s.data(), 8);
  return v;
}
void store_u64(std::span<std::byte> s, uint64_t v) { std::memcpy(s.data(), &v, 8); }

class ReadSizes : public ::testing::TestWithParam<std::pair<uint32_t, uint32_t>> {};

TEST_P(ReadSizes, RdmaReadBringsTheRemoteBytes) {
  const auto [size, mtu] = GetParam();
  TestBed bed;
  QpOptions o;
  o.path_mtu = mtu;
  auto [x, y] = bed.pair(o);
  fill_random(y->bytes(100, size), size);
  x->post_send(read_wqe(*x, 9, 3, size, *y, 100));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  const Cqe& c = x->cqes[0].cqe;
  EXPECT_EQ(c.status, WcStatus::Success);
  EXPECT_EQ(c.opcode, WcOpcode::RdmaRead);
  EXPECT_EQ(c.byte_len, size);
  EXPECT_EQ(c.wr_id, 9u);
  EXPECT_EQ(c.qp_num, x->qpn);
  EXPECT_TRUE(std::equal(y->bytes(100, size).begin(), y->bytes(100, size).end(), x->bytes(3, size).begin()));
  EXPECT_TRUE(all_zero(x->bytes(3 + size, 64))) << "nothing past the READ's buffer";
  EXPECT_TRUE(y->cqes.empty()) << "a READ completes nothing at the responder";
  EXPECT_EQ(y->nic().responder().counters().read_responses, (size + mtu - 1) / mtu);
  // The requester's PSNs advanced by the number of responses.
  EXPECT_EQ(x->nic().qp(x->qpn)->una, Psn((size + mtu - 1) / mtu));
}

INSTANTIATE_TEST_SUITE_P(Read, ReadSizes,
                         ::testing::Values(std::pair{1u, 1024u}, std::pair{1024u, 1024u}, std::pair{1025u, 1024u},
                                           std::pair{65536u, 4096u}, std::pair{1u << 20, 4096u},
                                           std::pair{300000u, 1024u}));

TEST(Read, ManyReadsWithinOrdAndWritesInterleaved) {
  TestBed bed;
  QpOptions o;
  o.max_rd_atomic = 2;
  o.max_dest_rd_atomic = 2;
  auto [x, y] = bed.pair(o);
  fill_random(y->bytes(0, 1 << 20), 5);
  fill_random(x->bytes(1 << 20, 4096), 6);
  for (uint64_t i = 0; i < 8; ++i) x->post_send(read_wqe(*x, i, i * 65536, 65536, *y, i * 65536));
  x->post_send(x->write_wqe(100, 1 << 20, 4096, *y, 1 << 20));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 9u);
  for (uint64_t i = 0; i < 9; ++i) {
    EXPECT_EQ(x->cqes[i].cqe.status, WcStatus::Success);
    EXPECT_EQ(x->cqes[i].cqe.wr_id, i < 8 ? i : 100u) << "completions in posting order";
  }
  EXPECT_TRUE(std::equal(y->bytes(0, 8 * 65536).begin(), y->bytes(0, 8 * 65536).end(), x->bytes(0, 8 * 65536).begin()));
  EXPECT_TRUE(std::equal(x->bytes(1 << 20, 4096).begin(), x->bytes(1 << 20, 4096).end(), y->bytes(1 << 20, 4096).begin()));
}

TEST(Read, LostResponsesAreAskedAgain) {
  TestBed bed(0.0, 0.05, 11);  // responses from b to a are lost
  QpOptions o;
  o.path_mtu = 1024;
  o.timeout = 8;
  auto [x, y] = bed.pair(o);
  fill_random(y->bytes(0, 1 << 20), 8);
  for (uint64_t i = 0; i < 4; ++i) x->post_send(read_wqe(*x, i, i * 262144, 262144, *y, i * 262144));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 4u);
  for (const auto& c : x->cqes) EXPECT_EQ(c.cqe.status, WcStatus::Success);
  EXPECT_TRUE(std::equal(y->bytes(0, 1 << 20).begin(), y->bytes(0, 1 << 20).end(), x->bytes(0, 1 << 20).begin()));
  EXPECT_GT(y->nic().responder().counters().duplicates, 0u) << "READs were asked again";
}

// Go-back-N resends READs whose answers are still queued at the responder: the
// duplicates replace them, they do not count against the responder's limit
// (once a REM_INV_REQ_ERR here).
TEST(Read, DuplicatesOfQueuedReadsUnderLossComplete) {
  TestBed bed(0.1, 0.1, 3);
  QpOptions o;
  o.timeout = 8;
  o.sq_entries = 128;
  auto [x, y] = bed.pair(o);
  fill_random(y->bytes(0, 1 << 20), 9);
  constexpr uint64_t kReads = 64, kSize = 16384;
  for (uint64_t i = 0; i < kReads; ++i) x->post_send(read_wqe(*x, i, i * kSize, kSize, *y, i * kSize));
  bed.run(sim::Duration::s(10));
  ASSERT_EQ(x->cqes.size(), kReads);
  for (const auto& c : x->cqes) EXPECT_EQ(c.cqe.status, WcStatus::Success) << c.cqe.wr_id;
  EXPECT_TRUE(same(y->bytes(0, kReads * kSize), x->bytes(0, kReads * kSize)));
  EXPECT_GT(y->nic().responder().counters().duplicates, 0u);
  EXPECT_EQ(y->nic().responder().counters().invalid_requests, 0u);
}

TEST(Read, WithoutRemoteReadAccessIsRefused) {
  TestBed bed;
  QpOptions ox, oy;
  oy.access = kAccessRemoteWrite;  // the responder QP does not allow READ
  auto [x, y] = bed.pair(ox, oy);
  x->post_send(read_wqe(*x, 1, 0, 64, *y, 0));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::RemAccessErr);
  EXPECT_TRUE(all_zero(x->bytes(0, 64)));
}

TEST(Atomic, FetchAddReturnsTheOldValueAndAdds) {
  TestBed bed;
  auto [x, y] = bed.pair();
  store_u64(y->bytes(64, 8), 1000);
  x->post_send(atomic_wqe(*x, 1, 0, *y, 64, WrOpcode::AtomicFetchAdd, 5));
  x->post_send(atomic_wqe(*x, 2, 8, *y, 64, WrOpcode::AtomicFetchAdd, 7));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 2u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_EQ(x->cqes[0].cqe.opcode, WcOpcode::FetchAdd);
  EXPECT_EQ(x->cqes[0].cqe.byte_len, 8u);
  EXPECT_EQ(x->cqes[1].cqe.opcode, WcOpcode::FetchAdd);
  EXPECT_EQ(load_u64(x->bytes(0, 8)), 1000u);
  EXPECT_EQ(load_u64(x->bytes(8, 8)), 1005u);
  EXPECT_EQ(load_u64(y->bytes(64, 8)), 1012u);
}

TEST(Atomic, CompareSwapSwapsOnlyOnMatch) {
  TestBed bed;
  auto [x, y] = bed.pair();
  store_u64(y->bytes(0, 8), 42);
  x->post_send(atomic_wqe(*x, 1, 0, *y, 0, WrOpcode::AtomicCmpSwap, 41, 99));  // no match
  x->post_send(atomic_wqe(*x, 2, 8, *y, 0, WrOpcode::AtomicCmpSwap, 42, 77));  // match
  bed.run();
  ASSERT_EQ(x->cqes.size(), 2u);
  EXPECT_EQ(x->cqes[0].cqe.opcode, WcOpcode::CompSwap);
  EXPECT_EQ(load_u64(x->bytes(0, 8)), 42u);
  EXPECT_EQ(load_u64(x->bytes(8, 8)), 42u);
  EXPECT_EQ(load_u64(y->bytes(0, 8)), 77u);
}

TEST(Atomic, SeesAnEarlierWriteToTheSameAddress) {
  TestBed bed;
  auto [x, y] = bed.pair();
  store_u64(x->bytes(256, 8), 500);
  x->post_send(x->write_wqe(1, 256, 8, *y, 0));
  x->post_send(atomic_wqe(*x, 2, 0, *y, 0, WrOpcode::AtomicFetchAdd, 1));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 2u);
  EXPECT_EQ(load_u64(x->bytes(0, 8)), 500u);
  EXPECT_EQ(load_u64(y->bytes(0, 8)), 501u);
}

// The requester's WQE cache (context_cache.hpp): an atomic's ACK is placed by its WQE.
TEST(WqeCache, AnAtomicsAnswerNeedsItsWqeToo) {
  NicParams p;
  p.wqe_cache_entries = 16;
  TestBed bed(0, 0, 7, 100'000'000'000, sim::Duration::ns(100), p);
  QpOptions o;
  o.buffer_size = 4096;
  auto [xs, ys] = bed.pairs(32, o);
  for (uint32_t r = 0; r < 4; ++r)  // 128 atomics under way against room for 16 WQEs
    for (uint32_t i = 0; i < 32; ++i) xs[i]->post_send(atomic_wqe(*xs[i], r, 8 * r, *ys[i], 0, WrOpcode::AtomicFetchAdd, 1));
  bed.run();
  for (uint32_t i = 0; i < 32; ++i) {
    ASSERT_EQ(xs[i]->cqes.size(), 4u);
    EXPECT_EQ(xs[i]->cqes.back().cqe.status, WcStatus::Success);
    EXPECT_EQ(load_u64(ys[i]->bytes(0, 8)), 4u) << "each executed once";
  }
  EXPECT_GT(bed.a().nic->rx_pipeline().counters().wqe_refetches, 0u);
}

TEST(Atomic, RetransmittedRequestIsAnsweredNotExecutedAgain) {
  // Every answer from b is lost until the requester gives up once; the retried
  // atomic must be answered from the replay cache: the value is added once.
  TestBed bed(0.0, 0.3, 21);
  QpOptions o;
  o.timeout = 6;
  auto [x, y] = bed.pair(o);
  store_u64(y->bytes(0, 8), 10);
  for (uint64_t i = 0; i < 20; ++i) x->post_send(atomic_wqe(*x, i, 8 * i, *y, 0, WrOpcode::AtomicFetchAdd, 1));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 20u);
  for (const auto& c : x->cqes) EXPECT_EQ(c.cqe.status, WcStatus::Success);
  EXPECT_EQ(load_u64(y->bytes(0, 8)), 30u) << "each atomic executed exactly once";
  for (uint64_t i = 0; i < 20; ++i) EXPECT_EQ(load_u64(x->bytes(8 * i, 8)), 10 + i);
  EXPECT_GT(y->nic().responder().counters().duplicates, 0u);
}

TEST(Atomic, MisalignedOrUnauthorisedIsRefused) {
  TestBed bed;
  QpOptions ox, oy;
  oy.access = kAccessRemoteWrite | kAccessRemoteRead;  // no atomics
  auto [x, y] = bed.pair(ox, oy);
  x->post_send(atomic_wqe(*x, 1, 0, *y, 0, WrOpcode::AtomicFetchAdd, 1));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::RemAccessErr);

  TestBed bed2;
  auto [p, q] = bed2.pair();
  p->post_send(atomic_wqe(*p, 1, 0, *q, 4, WrOpcode::AtomicFetchAdd, 1));  // not 8-byte aligned
  bed2.run();
  ASSERT_EQ(p->cqes.size(), 1u);
  EXPECT_NE(p->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_TRUE(all_zero(q->bytes(0, 16)));
}

TEST(SendWithInvalidate, InvalidatesTheRkeyAndReportsIt) {
  TestBed bed;
  auto [x, y] = bed.pair();
  const MemoryRegion victim = y->nic().reg_mr(y->pd, y->buffer + 65536, 4096, kAccessLocalWrite | kAccessRemoteWrite);
  y->post_recv(y->recv_wqe(5, 0, 256));
  SendWqe s = x->send_wqe(1, 0, 100);
  s.opcode = WrOpcode::SendWithInv;
  s.imm_data = victim.rkey.value();
  x->post_send(s);
  bed.run();
  ASSERT_EQ(y->cqes.size(), 1u);
  EXPECT_EQ(y->cqes[0].cqe.opcode, WcOpcode::Recv);
  EXPECT_EQ(y->cqes[0].cqe.wc_flags & kWcWithInv, kWcWithInv);
  EXPECT_EQ(y->cqes[0].cqe.imm_data, victim.rkey.value());
  // The invalidated rkey no longer gives access.
  SendWqe w = x->write_wqe(2, 0, 64, *y, 0);
  w.remote_addr = victim.addr;
  w.rkey = victim.rkey;
  x->post_send(w);
  bed.run();
  ASSERT_EQ(x->cqes.size(), 2u);
  EXPECT_EQ(x->cqes[1].cqe.status, WcStatus::RemAccessErr);
}

TEST(RecvTooSmall, LocalLengthErrorAndRemoteInvalidRequest) {
  TestBed bed;
  auto [x, y] = bed.pair();
  y->post_recv(y->recv_wqe(3, 0, 100));
  x->post_send(x->send_wqe(1, 0, 200));
  bed.run();
  ASSERT_EQ(y->cqes.size(), 1u);
  EXPECT_EQ(y->cqes[0].cqe.wr_id, 3u);
  EXPECT_EQ(y->cqes[0].cqe.status, WcStatus::LocLenErr);
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::RemInvReqErr);
}

TEST(RecvBufferOutsideItsRegion, LocalProtectionErrorAndRemoteOperationalError) {
  TestBed bed;
  auto [x, y] = bed.pair();
  RecvWqe r = y->recv_wqe(4, 0, 100);
  r.sge[0].lkey = packet::Lkey(r.sge[0].lkey.value() ^ 0x100);  // another region's key: not this buffer's
  y->post_recv(r);
  x->post_send(x->send_wqe(1, 0, 64));
  bed.run();
  ASSERT_EQ(y->cqes.size(), 1u);
  EXPECT_EQ(y->cqes[0].cqe.status, WcStatus::LocProtErr);
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::RemOpErr);
}

TEST(Ud, SendCarriesGrhQkeyAndSourceQp) {
  TestBed bed;
  QpOptions o;
  o.type = QpType::Ud;
  auto [x, y] = bed.pair(o);
  const uint32_t ah = x->nic().create_ah(bed.b().address);
  fill_random(x->bytes(0, 1000), 3);
  y->post_recv(y->recv_wqe(8, 0, 40 + 1000));
  SendWqe s = x->send_wqe(1, 0, 1000);
  s.opcode = WrOpcode::SendWithImm;
  s.imm_data = __builtin_bswap32(0xABCD);
  s.ud_ah = ah;
  s.ud_remote_qpn = y->qpn;
  s.ud_remote_qkey = packet::Qkey(o.qkey);
  x->post_send(s);
  // A wrong Q_Key is dropped silently.
  SendWqe bad = s;
  bad.wr_id = 2;
  bad.ud_remote_qkey = packet::Qkey(0x1234);
  x->post_send(bad);
  bed.run();
  ASSERT_EQ(x->cqes.size(), 2u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  ASSERT_EQ(y->cqes.size(), 1u);
  const Cqe& c = y->cqes[0].cqe;
  EXPECT_EQ(c.opcode, WcOpcode::Recv);
  EXPECT_EQ(c.byte_len, 1040u) << "40 bytes of GRH in front of the data";
  EXPECT_EQ(c.src_qp, x->qpn);
  EXPECT_EQ(c.wc_flags & (kWcGrh | kWcWithImm), kWcGrh | kWcWithImm);
  EXPECT_EQ(c.imm_data, __builtin_bswap32(0xABCD));
  EXPECT_TRUE(std::equal(x->bytes(0, 1000).begin(), x->bytes(0, 1000).end(), y->bytes(40, 1000).begin()));
  // RoCEv2 over IPv4: the IPv4 header sits in the last 20 bytes of the GRH area.
  const auto grh = y->bytes(0, 40);
  EXPECT_EQ(static_cast<uint8_t>(grh[20]), 0x45);
  EXPECT_EQ(static_cast<uint8_t>(grh[32]), 10);  // source 10.0.0.1
  EXPECT_EQ(static_cast<uint8_t>(grh[35]), 1);
  EXPECT_EQ(c.sl, 0x8 | 0x2) << "the CQE's SL is the packet type, as mlx5's says: UDP, IPv4";
  EXPECT_EQ(y->nic().responder().counters().dropped, 1u);
}

// The host's receive doorbell records, as a test sets them.
struct Records : RecvDoorbellRecords {
  std::map<WorkQueue, uint64_t> producers;
  std::optional<uint64_t> recv_producer(WorkQueue q) override {
    auto it = producers.find(q);
    return it == producers.end() ? std::nullopt : std::optional(it->second);
  }
};

// A receive posted before the SEND arrived but whose doorbell the NIC has not
// seen (the daemon scans doorbell records) is read from its record, as mlx5
// reads the RQ's; over UD the SEND would otherwise be dropped.
TEST(Ud, ASendFindsAReceiveThatOnlyItsDoorbellRecordHolds) {
  TestBed bed;
  QpOptions o;
  o.type = QpType::Ud;
  auto [x, y] = bed.pair(o);
  Records records;
  y->nic().set_doorbell_records(&records);
  const uint32_t ah = x->nic().create_ah(bed.b().address);
  fill_random(x->bytes(0, 100), 4);
  SendWqe s = x->send_wqe(1, 0, 100);
  s.ud_ah = ah;
  s.ud_remote_qpn = y->qpn;
  s.ud_remote_qkey = packet::Qkey(o.qkey);
  x->post_send(s);  // nothing posted: dropped
  bed.run();
  EXPECT_EQ(y->nic().responder().counters().dropped, 1u);
  records.producers[WorkQueue::recv(y->qpn)] = y->recv_unrung(y->recv_wqe(8, 0, 40 + 100));
  s.wr_id = 2;
  x->post_send(s);
  bed.run();
  ASSERT_EQ(y->cqes.size(), 1u);
  EXPECT_EQ(y->cqes[0].cqe.wr_id, 8u);
  EXPECT_EQ(y->cqes[0].cqe.byte_len, 140u);
  EXPECT_TRUE(std::equal(x->bytes(0, 100).begin(), x->bytes(0, 100).end(), y->bytes(40, 100).begin()));
  EXPECT_EQ(y->nic().responder().counters().dropped, 1u);
  EXPECT_EQ(y->nic().responder().counters().record_reads, 1u);
  // The doorbell that arrives after it changes nothing.
  y->nic().ring_doorbell(WorkQueue::recv(y->qpn), 1);
  bed.run();
  EXPECT_EQ(y->cqes.size(), 1u);
}

// The priorities of the frames leaving a port.
struct Priorities : fabric::EgressListener {
  std::vector<uint8_t> seen;
  void dequeued(const fabric::Frame& f) override { seen.push_back(f.meta().priority); }
};

// A QP's frames go out on the priority the fabric gives their DSCP (the
// default map: DSCP / 8), whatever the SL says, as mlx5 trusting DSCP sends
// them: UCX's traffic class 106 (DSCP 26) on priority 3, its ACKs too. A
// pause of that priority then stops them.
TEST(Priority, FramesGoOutOnThePriorityTheFabricGivesTheirDscp) {
  TestBed bed;
  QpOptions o;
  o.traffic_class = 106;
  auto [x, y] = bed.pair(o);
  Priorities a, b;
  bed.a().port->set_egress_listener(&a);
  bed.b().port->set_egress_listener(&b);
  x->post_send(x->write_wqe(1, 0, 100, *y, 0));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(a.seen, (std::vector<uint8_t>{3})) << "the WRITE";
  EXPECT_EQ(b.seen, (std::vector<uint8_t>{3})) << "its ACK";
}

TEST(Ud, LargerThanMtuIsALocalLengthError) {
  TestBed bed;
  QpOptions o;
  o.type = QpType::Ud;
  auto [x, y] = bed.pair(o);
  SendWqe s = x->send_wqe(1, 0, 5000);
  s.ud_ah = x->nic().create_ah(bed.b().address);
  s.ud_remote_qpn = y->qpn;
  s.ud_remote_qkey = packet::Qkey(o.qkey);
  x->post_send(s);
  bed.run();
  ASSERT_GE(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::LocLenErr);
}

struct SrqEvents : AsyncEventListener {
  std::vector<std::pair<AsyncEvent, uint32_t>> events;
  void on_async_event(AsyncEvent e, AsyncObject about) override { events.emplace_back(e, number_of(about)); }
};

// Two hosts; host b has an SRQ of 16 entries (limit 1) and a listener for its
// NIC's async events.
struct SrqBed {
  static constexpr uint32_t kEntries = 16;
  TestBed bed;
  Nic& nb = *bed.b().nic;
  const uint64_t ring = bed.b().memory.allocate(kEntries * kMinWqeStride, 4096);
  const Srqn srqn = nb.create_srq(Pdn(1), WorkRing{ring, kEntries});
  SrqEvents listener;
  SrqBed() { nb.set_async_listener(&listener); }
  // A pair whose b side takes its receives from the SRQ.
  auto pair_on_srq() {
    QpOptions ox, oy;
    oy.srq = srqn;
    return bed.pair(ox, oy);
  }
};

TEST(Srq, QpsShareItsReceivesAndTheLimitEventFiresOnce) {
  SrqBed t;
  TestBed& bed = t.bed;
  Nic& nb = t.nb;
  const SrqEvents& listener = t.listener;
  const uint64_t ring = t.ring;
  const Srqn srqn = t.srqn;
  const uint32_t entries = SrqBed::kEntries;
  auto [x1, y1] = t.pair_on_srq();
  auto [x2, y2] = t.pair_on_srq();
  // Post 8 receives into the SRQ (pointing into y1's buffer, registered in y1's PD).
  WqeRingWriter<RecvWqe> srq_ring(bed.b().memory.span(ring, entries * kMinWqeStride), entries);
  uint64_t producer = 0;
  for (uint64_t i = 0; i < 8; ++i) {
    RecvWqe r = y1->recv_wqe(i, i * 1024, 1024);
    producer = srq_ring.post(r);
  }
  // The SRQ's PD must be the QPs': both QPs of host b use their own PD here, so
  // register the receive buffer in y2's PD as well.
  (void)y2;
  ASSERT_TRUE(nb.arm_srq_limit(srqn, 5));
  nb.ring_doorbell(WorkQueue::srq(srqn), producer);
  fill_random(x1->bytes(0, 4096), 1);
  x1->post_send(x1->send_wqe(1, 0, 500));
  x1->post_send(x1->send_wqe(2, 500, 500));
  x1->post_send(x1->send_wqe(3, 1000, 500));
  x1->post_send(x1->send_wqe(4, 1500, 500));
  bed.run();
  // Both y QPs take from one queue; y1 got all four here.
  ASSERT_EQ(y1->cqes.size(), 4u);
  for (uint64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(y1->cqes[i].cqe.wr_id, i) << "SRQ WQEs are taken in posting order";
    EXPECT_EQ(y1->cqes[i].cqe.byte_len, 500u);
  }
  ASSERT_EQ(listener.events.size(), 1u) << "8 posted, 4 taken: fewer than 5 remain once, after the 4th";
  EXPECT_EQ(listener.events[0].first, AsyncEvent::SrqLimitReached);
  EXPECT_EQ(listener.events[0].second, srqn.value());
  EXPECT_TRUE(std::equal(x1->bytes(0, 500).begin(), x1->bytes(0, 500).end(), y1->bytes(0, 500).begin()));
}

// A QP on an SRQ that goes to ERR raises Last WQE Reached, once; a QP with a
// receive queue of its own raises nothing.
TEST(Srq, AQpEnteringErrorRaisesLastWqeReached) {
  SrqBed t;
  Nic& nb = t.nb;
  const SrqEvents& listener = t.listener;
  auto [x1, y1] = t.pair_on_srq();
  auto [x2, y2] = t.bed.pair();
  QpAttr err;
  err.state = QpState::Err;
  ASSERT_EQ(nb.modify_qp(y2->qpn, err, kQpState), 0);
  EXPECT_TRUE(listener.events.empty());
  ASSERT_EQ(nb.modify_qp(y1->qpn, err, kQpState), 0);
  ASSERT_EQ(nb.modify_qp(y1->qpn, err, kQpState), 0);  // already in ERR: no second event
  ASSERT_EQ(listener.events.size(), 1u);
  EXPECT_EQ(listener.events[0], std::make_pair(AsyncEvent::QpLastWqeReached, y1->qpn.value()));
  (void)x1;
  (void)x2;
}

// A QP on an SRQ that breaks on its own (a request with a wrong R_Key reaches
// its responder) raises the access error, then Last WQE Reached, once each.
TEST(Srq, AQpBreakingOnItsOwnRaisesLastWqeReached) {
  SrqBed t;
  Nic& nb = t.nb;
  const SrqEvents& listener = t.listener;
  auto [x, y] = t.pair_on_srq();
  SendWqe bad = x->write_wqe(1, 0, 64, *y, 0);
  bad.rkey = packet::Rkey(y->mr.rkey.value() ^ 0x100);  // no such region
  x->post_sends({bad});
  t.bed.run();
  ASSERT_EQ(nb.qp(y->qpn)->state, QpState::Err);
  ASSERT_EQ(listener.events.size(), 2u);
  EXPECT_EQ(listener.events[0], std::make_pair(AsyncEvent::QpAccessErr, y->qpn.value()));
  EXPECT_EQ(listener.events[1], std::make_pair(AsyncEvent::QpLastWqeReached, y->qpn.value()));
  QpAttr err;
  err.state = QpState::Err;
  ASSERT_EQ(nb.modify_qp(y->qpn, err, kQpState), 0);  // already in ERR: nothing new
  EXPECT_EQ(listener.events.size(), 2u);
}

}  // namespace

// The one table of which transport carries which work request (IBTA 9.8.1).
TEST(WrCarriage, EachTransportCarriesWhatIbtaSays) {
  for (WrOpcode wr : {WrOpcode::RdmaWrite, WrOpcode::RdmaWriteWithImm, WrOpcode::Send, WrOpcode::SendWithImm,
                      WrOpcode::RdmaRead, WrOpcode::AtomicCmpSwap, WrOpcode::AtomicFetchAdd, WrOpcode::SendWithInv})
    EXPECT_TRUE(carries(QpType::Rc, wr)) << static_cast<int>(wr);
  EXPECT_TRUE(carries(QpType::Uc, WrOpcode::RdmaWriteWithImm));
  EXPECT_FALSE(carries(QpType::Uc, WrOpcode::RdmaRead));
  EXPECT_FALSE(carries(QpType::Uc, WrOpcode::AtomicFetchAdd));
  EXPECT_TRUE(carries(QpType::Ud, WrOpcode::SendWithImm));
  EXPECT_FALSE(carries(QpType::Ud, WrOpcode::RdmaWrite));
  EXPECT_FALSE(carries(QpType::Rc, WrOpcode::LocalInv));  // memory windows: not modelled
  EXPECT_FALSE(carries(QpType::Rc, WrOpcode::BindMw));
  EXPECT_FALSE(is_qp_type(1));  // no RD
  EXPECT_TRUE(is_qp_type(4));
}
