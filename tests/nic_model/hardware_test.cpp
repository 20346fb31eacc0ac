// The hardware blocks' timing: QP-context and translation caches, completion
// events with interrupt moderation, WQEs carried by the doorbell.
#include <gtest/gtest.h>

#include "nic_fixture.hpp"

using namespace rnicsim;
using namespace rnicsim::nictest;

namespace {

// round_robin_ops's 64-byte WRITEs with a QP-context cache of `cache` entries
// (and `prefetch` contexts read ahead on a miss).
sim::Duration round_robin_writes(uint32_t qps, uint32_t cache, uint64_t* misses = nullptr, uint32_t prefetch = 0) {
  NicParams p;
  p.qpc_cache_entries = cache;
  p.qpc_prefetch = prefetch;
  TestBed bed(0, 0, 7, 100'000'000'000, sim::Duration::ns(100), p);
  const sim::Duration d = round_robin_ops(bed, qps);
  if (misses) *misses = bed.a().nic->qpc_cache().misses() + bed.b().nic->qpc_cache().misses();
  return d;
}

TEST(QpContextCache, ThroughputFallsWhenQpsOutgrowTheCache) {
  uint64_t misses_fit = 0, misses_spill = 0;
  const sim::Duration fits = round_robin_writes(32, 64, &misses_fit);      // 32 QPs, room for 64
  const sim::Duration spills = round_robin_writes(128, 64, &misses_spill);  // 128 QPs round-robin, room for 64
  const sim::Duration unlimited = round_robin_writes(128, 0);
  // Fitting: each QP's context misses once per NIC side and stays.
  EXPECT_LE(misses_fit, 2u * 32 * 2);
  // Spilling: LRU with a round-robin larger than the cache misses on every access.
  EXPECT_GT(misses_spill, 512u);
  EXPECT_GT(spills.picoseconds(), fits.picoseconds() * 3 / 2) << "the same 512 writes take much longer";
  EXPECT_LT(unlimited.picoseconds(), spills.picoseconds());
}

TEST(QpContextCache, PrefetchedContextsArriveWhenTheirReadLands) {
  NicParams p;
  p.qpc_cache_entries = 64;
  PcieLink pcie(p.pcie);
  MemoryTranslation translation;
  ContextCache cache(p, pcie, translation);
  const sim::Time t0 = sim::Time::zero();
  const sim::Time first = cache.context_ready(Qpn(1), t0);  // a miss: a DMA read
  EXPECT_GT(first, t0);
  cache.prefetch(Qpn(2), t0);
  const sim::Time second = cache.context_ready(Qpn(2), t0);
  EXPECT_GT(second, t0) << "prefetched, but its read has not landed";
  EXPECT_LT(second - t0, (first - t0) * 2) << "the two reads overlap";
  EXPECT_EQ(cache.context_ready(Qpn(2), second), second) << "landed: a hit";
  EXPECT_EQ(cache.qpc().misses(), 2u);
}

TEST(QpContextCache, PrefetchOverlapsTheMissesOfQpsThatOutgrowTheCache) {
  uint64_t misses = 0, misses_prefetching = 0;
  const sim::Duration waiting = round_robin_writes(128, 64, &misses);
  const sim::Duration prefetching = round_robin_writes(128, 64, &misses_prefetching, 7);
  EXPECT_GT(misses_prefetching, 512u) << "as many misses";
  EXPECT_LT(prefetching.picoseconds() * 2, waiting.picoseconds()) << "but read side by side";
  // QPs that fit miss once each, at the start: those first reads overlap too.
  EXPECT_LE(round_robin_writes(32, 64, nullptr, 7).picoseconds(), round_robin_writes(32, 64).picoseconds());
}

// round_robin_ops's 64-byte operations `op` with a WQE cache of `wqes` entries;
// the answers that read their WQE again into `refetches`.
sim::Duration round_robin_with_wqe_cache(uint32_t qps, uint32_t wqes, WrOpcode op, uint64_t& refetches,
                                         uint32_t prefetch = 0) {
  NicParams p;
  p.wqe_cache_entries = wqes;
  p.wqe_prefetch = prefetch;
  TestBed bed(0, 0, 7, 100'000'000'000, sim::Duration::ns(100), p);
  const sim::Duration d = round_robin_ops(bed, qps, op);
  refetches = bed.a().nic->rx_pipeline().counters().wqe_refetches;
  return d;
}

TEST(WqeCache, ReadsWhoseWqesWereDroppedWaitForThemAndWritesDoNot) {
  uint64_t fits = 0, spills = 0, unlimited = 0, writes = 0;
  // 512 READs over 64 QPs, all posted at once: 512 WQEs under way against room for 64.
  const sim::Duration fitting = round_robin_with_wqe_cache(64, 1024, WrOpcode::RdmaRead, fits);
  const sim::Duration spilling = round_robin_with_wqe_cache(64, 64, WrOpcode::RdmaRead, spills);
  round_robin_with_wqe_cache(64, 0, WrOpcode::RdmaRead, unlimited);
  EXPECT_EQ(fits, 0u);
  EXPECT_EQ(unlimited, 0u);
  EXPECT_GT(spills, 256u) << "most answers find their WQE dropped";
  EXPECT_GT(spilling.picoseconds(), fitting.picoseconds() * 3 / 2) << "and wait for it";
  // A WRITE's ACK places nothing: WRITEs never read their WQE again.
  const sim::Duration w_small = round_robin_with_wqe_cache(64, 64, WrOpcode::RdmaWrite, writes);
  uint64_t unused = 0;
  EXPECT_EQ(writes, 0u);
  EXPECT_EQ(w_small, round_robin_with_wqe_cache(64, 0, WrOpcode::RdmaWrite, unused));
}

TEST(WqeCache, ReadingTheWqesBehindAMissOverlapsTheReads) {
  uint64_t waiting = 0, reading_ahead = 0;
  const sim::Duration one_by_one = round_robin_with_wqe_cache(64, 64, WrOpcode::RdmaRead, waiting);
  const sim::Duration ahead = round_robin_with_wqe_cache(64, 64, WrOpcode::RdmaRead, reading_ahead, 7);
  EXPECT_GT(waiting, 256u);
  EXPECT_LT(reading_ahead, waiting) << "the answers behind a miss find their WQE read ahead";
  EXPECT_LT(ahead.picoseconds() * 3, one_by_one.picoseconds() * 2);
}

TEST(TranslationCache, ManyPagesCostMisses) {
  auto run = [](uint32_t entries) {
    NicParams p;
    p.mtt_cache_entries = entries;
    TestBed bed(0, 0, 7, 100'000'000'000, sim::Duration::ns(100), p);
    QpOptions o;
    o.buffer_size = 8u << 20;
    o.sq_entries = 512;  // all 512 WQEs are posted at once
    auto [x, y] = bed.pair(o);
    const sim::Time start = bed.sim.now();
    // 256 writes of 4 KiB, each from and to its own page, twice over.
    for (int pass = 0; pass < 2; ++pass)
      for (uint64_t i = 0; i < 256; ++i) x->post_send(x->write_wqe(i, i * 32768, 4096, *y, i * 32768));
    bed.run();
    EXPECT_EQ(x->cqes.size(), 512u);
    return std::pair{x->cqes.back().at - start, bed.a().nic->translation().cache().misses()};
  };
  const auto [small_time, small_misses] = run(64);
  const auto [big_time, big_misses] = run(4096);
  EXPECT_EQ(big_misses, 256u) << "each page misses once, then stays";
  EXPECT_EQ(small_misses, 512u) << "with 64 entries every page is gone by its second use";
  EXPECT_GT(small_time, big_time);
}

struct EventCounter : CompletionListener {
  std::vector<sim::Time> events;
  sim::Simulator* sim = nullptr;
  void on_completion(Cqn) override {}
  void on_event(Cqn) override { events.push_back(sim->now()); }
};

TEST(CompletionEvents, ArmedCqFiresOnceAndModerationBatches) {
  for (uint32_t count : {1u, 4u}) {
    NicParams p;
    p.cq_moderation_count = count;
    p.cq_moderation_period = sim::Duration::us(50);
    TestBed bed(0, 0, 7, 100'000'000'000, sim::Duration::ns(100), p);
    auto [x, y] = bed.pair();
    // A second CQ on host b with its own listener, used only for events.
    EventCounter ev;
    ev.sim = &bed.sim;
    CqContext* cq = bed.b().nic->cq(y->cqn);
    ASSERT_NE(cq, nullptr);
    cq->listener = &ev;  // events (and polling notices) for y's CQ now come here
    ASSERT_TRUE(bed.b().nic->arm_cq(y->cqn, false));
    for (uint64_t i = 0; i < 8; ++i) y->post_recv(y->recv_wqe(i, i * 64, 64));
    for (uint64_t i = 0; i < 8; ++i) x->post_send(x->send_wqe(i, 0, 64));
    bed.run();
    ASSERT_EQ(ev.events.size(), 1u) << "an armed CQ raises one event, then must be re-armed";
    EXPECT_EQ(cq->written, 8u);
    if (count == 1) {
      const sim::Time first = ev.events[0];
      // Re-armed: the next completion raises the next event.
      ASSERT_TRUE(bed.b().nic->arm_cq(y->cqn, false));
      y->post_recv(y->recv_wqe(9, 0, 64));
      x->post_send(x->send_wqe(9, 0, 64));
      bed.run();
      ASSERT_EQ(ev.events.size(), 2u);
      EXPECT_GT(ev.events[1], first);
    }
  }
}

TEST(CompletionEvents, SolicitedOnlyWaitsForTheSolicitedMessage) {
  TestBed bed;
  auto [x, y] = bed.pair();
  EventCounter ev;
  ev.sim = &bed.sim;
  bed.b().nic->cq(y->cqn)->listener = &ev;
  ASSERT_TRUE(bed.b().nic->arm_cq(y->cqn, true));
  for (uint64_t i = 0; i < 3; ++i) y->post_recv(y->recv_wqe(i, i * 64, 64));
  x->post_send(x->send_wqe(0, 0, 64));
  x->post_send(x->send_wqe(1, 0, 64));
  bed.run();
  EXPECT_TRUE(ev.events.empty()) << "unsolicited messages raise no event";
  SendWqe s = x->send_wqe(2, 0, 64);
  s.send_flags |= kSendSolicited;
  x->post_send(s);
  bed.run();
  EXPECT_EQ(ev.events.size(), 1u);
}

TEST(DoorbellWithWqe, SkipsTheWqeFetchAndLowersLatency) {
  auto one_write = [](bool with_wqe) {
    TestBed bed(0, 0, 7, 100'000'000'000, sim::Duration::ns(100));
    auto [x, y] = bed.pair();
    // Warm the context caches, then time one 8-byte WRITE.
    x->post_send(x->write_wqe(0, 0, 8, *y, 0));
    bed.run();
    const sim::Time start = bed.sim.now();
    const SendWqe w = x->write_wqe(1, 0, 8, *y, 0);
    if (with_wqe) {
      x->post_send_with_doorbell_wqe(w);
    } else {
      x->post_send(w);
    }
    bed.run();
    EXPECT_EQ(x->cqes.size(), 2u);
    EXPECT_EQ(bed.a().nic->stats().tx_packets, 2u);
    return std::pair{x->cqes.back().at - start, bed.a().nic->wqe_fetcher().wqes_fetched()};
  };
  const auto [fetched_time, fetched] = one_write(false);
  const auto [bf_time, bf_fetched] = one_write(true);
  EXPECT_EQ(fetched, 2u);
  EXPECT_EQ(bf_fetched, 1u) << "the second WQE came with its doorbell";
  // The saved DMA read is a PCIe round trip (2 x 250 ns + host memory 80 ns) less
  // the longer MMIO write.
  EXPECT_LT(bf_time.picoseconds() + 400'000, fetched_time.picoseconds());
}

}  // namespace

namespace {

// Pipeline latency is separate from occupancy: it delays each packet by a fixed
// time without changing what the pipelines can carry.
// Post to completion of one 8-byte inline WRITE (or SEND), caches warm.
sim::Duration one_write_time(uint32_t tx_latency, uint32_t rx_latency, uint32_t rkey_check = 0,
                             WrOpcode op = WrOpcode::RdmaWrite) {
  NicParams p;
  p.tx_latency_cycles = tx_latency;
  p.rx_latency_cycles = rx_latency;
  p.rkey_check_cycles = rkey_check;
  TestBed bed(0, 0, 7, 100'000'000'000, sim::Duration::ns(100), p);
  auto [x, y] = bed.pair();
  for (uint64_t i = 0; i < 2; ++i) y->post_recv(y->recv_wqe(i, 0, 64));
  SendWqe w = x->write_wqe(0, 0, 8, *y, 0);
  w.opcode = op;
  x->post_send(w);  // warms the caches
  bed.run();
  const sim::Time start = bed.sim.now();
  // Inline: no payload DMA for the transmit latency to overlap with.
  w.wr_id = 1;
  w.send_flags |= kSendInline;
  w.inline_len = 8;
  x->post_send(w);
  bed.run();
  EXPECT_EQ(x->cqes.size(), 2u);
  return x->cqes.back().at - start;
}

TEST(PipelineLatency, ARequestNamingRemoteMemoryTakesItsRkeyCheckLonger) {
  // 50 cycles at 500 MHz, once: at the responder, for the WRITE (its ACK names no memory).
  EXPECT_EQ(one_write_time(0, 0, 50) - one_write_time(0, 0), sim::Duration::ns(100));
  EXPECT_EQ(one_write_time(0, 0, 50, WrOpcode::Send), one_write_time(0, 0, 0, WrOpcode::Send))
      << "a SEND's buffer comes with its receive WQE";
}

TEST(PipelineLatency, AddsExactlyItsTimeToEachPacket) {
  // (With a payload to read, the transmit latency overlaps the DMA read.)
  const sim::Duration base = one_write_time(0, 0);
  // 100 cycles at 500 MHz = 200 ns on the WRITE's way out.
  EXPECT_EQ(one_write_time(100, 0) - base, sim::Duration::ns(200));
  // On receive: once at the responder (the WRITE), once at the requester (its ACK).
  EXPECT_EQ(one_write_time(0, 100) - base, sim::Duration::ns(400));
}

}  // namespace

// IBTA 11.4.2.2: an arm raises an event for the next CQE the host had not seen.
// A CQE it saw before arming (ibv_get_cq_event, ibv_req_notify_cq, then poll)
// raises none; one written between its last look and the arm raises it at once.
TEST(CompletionEvents, AnArmBehindCqesTheHostSawRaisesNoEvent) {
  TestBed bed;
  auto [x, y] = bed.pair();
  EventCounter ev;
  ev.sim = &bed.sim;
  CqContext* cq = bed.b().nic->cq(y->cqn);
  cq->listener = &ev;
  for (uint64_t i = 0; i < 3; ++i) y->post_recv(y->recv_wqe(i, i * 64, 64));
  x->post_send(x->send_wqe(0, 0, 64));
  bed.run();
  ASSERT_EQ(cq->written, 1u);
  ASSERT_TRUE(bed.b().nic->arm_cq(y->cqn, false, 1));  // saw it, did not poll it yet
  bed.run();
  EXPECT_TRUE(ev.events.empty()) << "the CQE the host saw before arming raised an event";
  x->post_send(x->send_wqe(1, 0, 64));
  bed.run();
  EXPECT_EQ(ev.events.size(), 1u) << "the next CQE raises the event";
  x->post_send(x->send_wqe(2, 0, 64));
  bed.run();
  ASSERT_EQ(cq->written, 3u);
  ASSERT_TRUE(bed.b().nic->arm_cq(y->cqn, false, 2));  // the third came after its last look
  EXPECT_EQ(ev.events.size(), 2u) << "a CQE the host had not seen raises the event at once";
  ASSERT_TRUE(bed.b().nic->arm_cq(y->cqn, true, 2));
  EXPECT_EQ(ev.events.size(), 2u) << "solicited only: an unsolicited CQE raises nothing";
}
