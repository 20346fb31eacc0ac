// DCQCN: the reaction point's rate arithmetic against hand-computed values, the
// notification point's CNP pacing, and the whole loop between two NICs: marked
// packets bring CNPs, CNPs bring the sender's rate down, and it recovers after.
#include <gtest/gtest.h>

#include "nic_fixture.hpp"
#include "nic_model/dcqcn.hpp"
#include "packet/packet.hpp"

using namespace rnicsim;
using namespace rnicsim::nictest;
using sim::Duration;
using sim::Time;

namespace {

constexpr uint64_t k100G = 100'000'000'000;

CongestionParams dcqcn_defaults() {
  CongestionParams p;
  p.algorithm = *cc_algorithm_named("dcqcn");
  return p;
}

Time at_us(int64_t us) { return Time() + Duration::us(us); }

// The state the NIC keeps for a QP under DCQCN.
const DcqcnState& state(const QpContext& qp) { return static_cast<const DcqcnState&>(*qp.cc); }

TEST(Dcqcn, FirstCnpStartsTheLimiterAndCutsByHalfAlpha) {
  Dcqcn cc(dcqcn_defaults(), k100G);
  DcqcnState s;
  EXPECT_EQ(cc.send_time(s, at_us(0)), at_us(0));
  cc.on_cnp(s, at_us(10));
  ASSERT_TRUE(s.limited);
  // alpha = 1023/1024; the cut is Rc * 1023 / 2^11.
  EXPECT_EQ(s.current_rate, k100G - k100G * 1023 / 2048);
  EXPECT_EQ(s.target_rate, k100G);
  EXPECT_EQ(s.rate_cuts, 1u);
}

TEST(Dcqcn, OneCutPerMonitorPeriod) {
  Dcqcn cc(dcqcn_defaults(), k100G);
  DcqcnState s;
  cc.on_cnp(s, at_us(0));
  const uint64_t after_first = s.current_rate;
  cc.on_cnp(s, at_us(3));  // within rate_reduce_monitor_period (4 us)
  EXPECT_EQ(s.current_rate, after_first);
  EXPECT_EQ(s.rate_cuts, 1u);
  cc.on_cnp(s, at_us(5));
  EXPECT_LT(s.current_rate, after_first);
  EXPECT_EQ(s.rate_cuts, 2u);
}

TEST(Dcqcn, AlphaDecaysWithoutCnpsSoLaterCutsAreSmaller) {
  Dcqcn cc(dcqcn_defaults(), k100G);
  DcqcnState a, b;
  cc.on_cnp(a, at_us(0));
  cc.on_cnp(b, at_us(0));
  // a: the next CNP 5 us later; b: 200 us later (alpha has decayed by 1019/1024 per us).
  const uint64_t ra = a.current_rate, rb = b.current_rate;
  cc.on_cnp(a, at_us(5));
  cc.on_cnp(b, at_us(200));
  const double cut_a = 1.0 - static_cast<double>(a.current_rate) / static_cast<double>(ra);
  const double cut_b = 1.0 - static_cast<double>(b.current_rate) / static_cast<double>(rb);
  EXPECT_GT(cut_a, 0.45);
  EXPECT_LT(cut_b, cut_a * 0.5);
}

TEST(Dcqcn, TimerIncreaseIsFastRecoveryTowardsTheTarget) {
  Dcqcn cc(dcqcn_defaults(), k100G);
  DcqcnState s;
  cc.on_cnp(s, at_us(0));
  const uint64_t rc = s.current_rate, rt = s.target_rate;
  cc.send_time(s, at_us(299));
  EXPECT_EQ(s.current_rate, rc);
  cc.send_time(s, at_us(300));  // rpg_time_reset: one timer event, fast recovery
  EXPECT_EQ(s.current_rate, (rt + rc) / 2);
  EXPECT_EQ(s.target_rate, rt);
}

TEST(Dcqcn, ByteCounterIncreaseAndPacing) {
  Dcqcn cc(dcqcn_defaults(), k100G);
  DcqcnState s;
  cc.on_cnp(s, at_us(0));
  const uint64_t rc = s.current_rate;
  cc.on_sent(s, CcSent{Psn(0), 4096, false}, at_us(0));
  // The next packet waits for 4096 B at the current rate.
  const auto wait = Duration::ps(static_cast<int64_t>(4096ull * 8 * 1'000'000'000'000 / rc));
  EXPECT_EQ(cc.send_time(s, at_us(0)), at_us(0) + wait);
  // 32767 bytes in all make one byte-counter event.
  for (int i = 0; i < 6; ++i) cc.on_sent(s, CcSent{Psn(0), 4096, false}, at_us(1));
  EXPECT_EQ(s.current_rate, rc);  // 28672 bytes
  cc.on_sent(s, CcSent{Psn(0), 4096, false}, at_us(2));     // 32768
  EXPECT_EQ(s.current_rate, (s.target_rate + rc) / 2);
}

TEST(Dcqcn, RateRecoversFullyAndTheLimiterTurnsOff) {
  Dcqcn cc(dcqcn_defaults(), k100G);
  DcqcnState s;
  cc.on_cnp(s, at_us(0));
  for (int i = 0; i < 200 && s.limited; ++i) cc.on_sent(s, CcSent{Psn(0), 4096, false}, at_us(1 + i));
  EXPECT_FALSE(s.limited);
  EXPECT_EQ(cc.send_time(s, at_us(500)), at_us(500));
}

TEST(Dcqcn, FloorsMinDecFacAndMinRate) {
  CongestionParams p = dcqcn_defaults();
  p.rpg_gd = 10;  // a cut would remove alpha (nearly all) of the rate
  Dcqcn cc(p, k100G);
  DcqcnState s;
  cc.on_cnp(s, at_us(0));
  EXPECT_EQ(s.current_rate, k100G / 2);  // rpg_min_dec_fac 50 %
  p.rpg_min_dec_fac = 0;
  p.rpg_min_rate = 30'000'000'000;
  Dcqcn floor(p, k100G);
  DcqcnState t;
  floor.on_cnp(t, at_us(0));
  EXPECT_EQ(t.current_rate, 30'000'000'000u);
}

TEST(Dcqcn, NotificationPointPacesCnpsPerQp) {
  Dcqcn cc(dcqcn_defaults(), k100G);
  DcqcnState s;
  EXPECT_TRUE(cc.on_marked_packet(s, at_us(0)));
  EXPECT_FALSE(cc.on_marked_packet(s, at_us(3)));
  EXPECT_TRUE(cc.on_marked_packet(s, at_us(4)));
}

// Marks every request packet towards host b Congestion Experienced while `on`.
struct EcnMarkingFilter : fabric::FrameSink {
  fabric::FrameSink* next = nullptr;
  bool on = true;
  uint64_t marked = 0;
  void receive(fabric::Frame&& f) override {
    if (on && packet::mark_congestion_experienced(f.bytes())) ++marked;
    next->receive(std::move(f));
  }
};

struct MarkedBed {
  TestBed bed;
  EcnMarkingFilter to_b;
  explicit MarkedBed(const NicParams& params)
      : bed(0.0, 0.0, 7, k100G, Duration::us(1), params) {
    to_b.next = bed.b().nic.get();
    bed.b().port->set_receiver(&to_b);
  }
};

NicParams with_dcqcn() {
  NicParams p;
  p.congestion = dcqcn_defaults();
  return p;
}

// Sends `writes` 1 MiB WRITEs; returns when the last completed.
Time stream(TestBed& bed, Endpoint& x, Endpoint& y, int writes) {
  for (int i = 0; i < writes; ++i) x.post_send(x.write_wqe(static_cast<uint64_t>(i), 0, 1 << 20, y, 0));
  bed.run();
  EXPECT_EQ(x.cqes.size(), static_cast<size_t>(writes));
  for (const auto& c : x.cqes) EXPECT_EQ(c.cqe.status, WcStatus::Success);
  return x.cqes.back().at;
}

TEST(DcqcnLoop, MarkedPacketsBringCnpsAndASlowerSender) {
  QpOptions o;
  o.sq_entries = 64;
  // Reference: the same stream with marking but no congestion control.
  MarkedBed plain{NicParams{}};
  auto [px, py] = plain.bed.pair(o);
  const Time plain_done = stream(plain.bed, *px, *py, 8);
  EXPECT_EQ(plain.bed.b().nic->stats().cnps_sent, 0u);
  EXPECT_GT(plain.bed.b().nic->rx_pipeline().counters().ecn_ce, 2000u);

  MarkedBed cc{with_dcqcn()};
  auto [x, y] = cc.bed.pair(o);
  const Time cc_done = stream(cc.bed, *x, *y, 8);
  const auto& nb = cc.bed.b().nic->stats();
  EXPECT_EQ(cc.bed.b().nic->rx_pipeline().counters().ecn_ce, cc.to_b.marked);
  // One CNP per min_time_between_cnps (4 us) at most, never more than marked
  // packets, and (with every packet marked) one at the first chance: a CNP
  // for every marked packet that came 4 us or more after the last CNP.
  const double span_us = static_cast<double>((cc_done - Time()).picoseconds()) / 1e6;
  EXPECT_LE(static_cast<double>(nb.cnps_sent), span_us / 4.0 + 1.0);
  EXPECT_LE(nb.cnps_sent, cc.to_b.marked);
  EXPECT_GT(nb.cnps_sent, 100u);
  EXPECT_EQ(cc.bed.a().nic->rx_pipeline().counters().cnps, nb.cnps_sent);
  // Constant marking holds the sender well below line rate.
  EXPECT_GT(static_cast<double>((cc_done - Time()).picoseconds()),
            2.0 * static_cast<double>((plain_done - Time()).picoseconds()));
  EXPECT_TRUE(std::equal(x->bytes(0, 1 << 20).begin(), x->bytes(0, 1 << 20).end(), y->bytes(0, 1 << 20).begin()));
}

TEST(DcqcnLoop, RateRecoversWhenMarkingStops) {
  QpOptions o;
  o.sq_entries = 64;
  MarkedBed cc{with_dcqcn()};
  auto [x, y] = cc.bed.pair(o);
  stream(cc.bed, *x, *y, 2);  // marked: the limiter is on
  QpContext* qp = cc.bed.a().nic->qp(x->qpn);
  ASSERT_NE(qp, nullptr);
  ASSERT_TRUE(state(*qp).limited);
  const uint64_t cut_rate = state(*qp).current_rate;
  EXPECT_LT(cut_rate, k100G / 2);
  cc.to_b.on = false;
  x->cqes.clear();
  stream(cc.bed, *x, *y, 8);
  EXPECT_GT(state(*qp).current_rate, cut_rate);
  const uint64_t cnps = cc.bed.b().nic->stats().cnps_sent;
  x->cqes.clear();
  stream(cc.bed, *x, *y, 8);
  EXPECT_EQ(cc.bed.b().nic->stats().cnps_sent, cnps);
  EXPECT_FALSE(state(*qp).limited);  // back at line rate
}

}  // namespace

namespace {

// An algorithm that only listens: what the NIC tells any algorithm.
struct Listening final : CongestionControl {
  explicit Listening() : CongestionControl(CongestionParams{}) {}
  std::unique_ptr<CcQpState> new_qp_state() const override { return std::make_unique<CcQpState>(); }
  sim::Time send_time(CcQpState&, sim::Time now) override { return now; }
  void on_sent(CcQpState&, const CcSent& p, sim::Time) override { p.retransmission ? ++resent : ++sent; }
  void on_ack(CcQpState&, const CcAck& a, sim::Time) override {
    ++acks;
    if (a.rtt > Duration()) rtts.push_back(a.rtt);
  }
  bool on_marked_packet(CcQpState&, sim::Time) override { return false; }
  CcSummary summary(const CcQpState&) const override { return {}; }
  uint64_t sent = 0, resent = 0, acks = 0;
  std::vector<Duration> rtts;
};

// Four 1 MiB WRITEs from a to b (`loss` of a's frames lost) with the
// listening algorithm in a's NIC.
struct ListenedStream {
  TestBed bed;
  Listening* cc = nullptr;
  std::unique_ptr<Endpoint> x, y;
  Time done;
  const QpContext* qp = nullptr;
  ListenedStream(double loss, uint64_t seed) : bed(loss, 0.0, seed, k100G, Duration::us(1), NicParams{}) {
    auto owned = std::make_unique<Listening>();
    cc = owned.get();
    bed.a().nic->set_congestion(std::move(owned));
    QpOptions o;
    o.sq_entries = 64;
    std::tie(x, y) = bed.pair(o);
    done = stream(bed, *x, *y, 4);
    qp = bed.a().nic->qp(x->qpn);
  }
};

// Every packet is told; ACKs come with an RTT sample for each probe, at least
// the fabric's round trip (two 1 us links) and less than the stream's length.
TEST(CongestionHooks, PacketsAndAcksWithRttSamples) {
  ListenedStream s(0.0, 7);
  const Listening& cc = *s.cc;
  EXPECT_EQ(cc.sent, s.qp->tx_packets);
  EXPECT_EQ(cc.resent, 0u);
  EXPECT_GT(cc.acks, 0u);
  ASSERT_FALSE(cc.rtts.empty());
  EXPECT_LE(cc.rtts.size(), cc.acks);
  for (Duration rtt : cc.rtts) {
    EXPECT_GE(rtt, Duration::us(2));
    EXPECT_LT(rtt, s.done - Time());
  }
}

// After a loss the resent packets are told as such, and no RTT sample comes
// from a probe that was sent again.
TEST(CongestionHooks, ResentPacketsAreToldAndNeverTimed) {
  ListenedStream s(0.02, 11);
  const Listening& cc = *s.cc;
  EXPECT_GT(s.qp->retransmitted_packets, 0u);
  // Told "resent" is every packet built again; the retransmission count leaves
  // out those a rewind took back from the transmit buffer before the wire.
  EXPECT_GE(cc.resent, s.qp->retransmitted_packets);
  EXPECT_EQ(cc.sent + cc.resent, s.qp->tx_packets);
  for (Duration rtt : cc.rtts) EXPECT_LT(rtt, Duration::ms(1));  // never a timeout's length
}

}  // namespace
