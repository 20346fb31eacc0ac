// Adding a congestion-control algorithm takes one file and one table row: this
// file is the whole of "ramp", a test-only algorithm, and kTable below its row.
// Ramp starts every QP at a quarter of the line rate and doubles the rate on
// each tick of the QP's timer until it reaches the line rate: it uses the
// send, timer and summary hooks the NIC gives every algorithm.
#include <gtest/gtest.h>

#include "nic_fixture.hpp"

namespace rnicsim::nictest {
namespace {

using sim::Duration;
using sim::Time;

constexpr uint64_t k100G = 100'000'000'000;
constexpr Duration kTick = Duration::us(20);

struct RampState final : CcQpState {
  uint64_t rate = 0;  // bits/s
  Time next_send;
  bool ticking = false;
  uint32_t ticks = 0;
};

class Ramp final : public CongestionControl {
public:
  Ramp(const CongestionParams& p, uint64_t line_rate_bps) : CongestionControl(p), line_(line_rate_bps) {}
  std::unique_ptr<CcQpState> new_qp_state() const override {
    auto s = std::make_unique<RampState>();
    s->rate = line_ / 4;
    return s;
  }
  Time send_time(CcQpState& s, Time now) override { return std::max(now, state(s).next_send); }
  void on_sent(CcQpState& cs, const CcSent& p, Time now) override {
    RampState& s = state(cs);
    s.next_send = std::max(now, s.next_send) + Duration::ps(static_cast<int64_t>(p.bytes * 8'000'000'000'000ull / s.rate));
    if (!s.ticking && s.rate < line_) {
      s.ticking = true;
      arm_timer(s, now + kTick);
    }
  }
  void on_timer(CcQpState& cs, Time now) override {
    RampState& s = state(cs);
    ++s.ticks;
    s.rate = std::min(line_, s.rate * 2);
    s.ticking = s.rate < line_;
    if (s.ticking) arm_timer(s, now + kTick);
  }
  bool on_marked_packet(CcQpState&, Time) override { return false; }
  CcSummary summary(const CcQpState& cs) const override {
    const auto& s = static_cast<const RampState&>(cs);
    return {.limited = s.rate < line_, .rate = s.rate, .rate_cuts = 0};
  }

private:
  static RampState& state(CcQpState& s) { return static_cast<RampState&>(s); }
  uint64_t line_;
};

// The one row: the built-in algorithms and ramp.
const std::vector<CcAlgorithmEntry> kTable = cc_algorithms_with({"ramp", &make_algorithm<Ramp>});

// One translation entry maps the whole buffer: a paced packet waits for its
// send time, and then for any translation miss, which would blur the timing.
NicParams one_page() {
  NicParams p;
  p.mtt_page_bytes = 1u << 30;
  return p;
}

NicParams with_ramp() {
  NicParams p = one_page();
  p.congestion.algorithm = *cc_algorithm_named("ramp", kTable);
  return p;
}

// `writes` WRITEs of 1 MiB from a to b: when the last completes, and a's QP.
std::pair<Time, const QpContext*> stream(TestBed& bed, int writes) {
  QpOptions o;
  o.sq_entries = 64;
  auto [x, y] = bed.pair(o);
  for (int i = 0; i < writes; ++i) x->post_send(x->write_wqe(static_cast<uint64_t>(i), 0, 1 << 20, *y, 0));
  bed.run();
  EXPECT_EQ(x->cqes.size(), static_cast<size_t>(writes));
  return {x->cqes.empty() ? Time() : x->cqes.back().at, bed.a().nic->qp(x->qpn)};
}

TEST(CcRamp, TheTableRowNamesAndMakesIt) {
  EXPECT_EQ(cc_algorithm_names(" | ", kTable), "none | dcqcn | ramp");
  EXPECT_FALSE(cc_algorithm_named("ramp").has_value()) << "the built-in table stays as it is";
  const NicParams p = with_ramp();
  EXPECT_EQ(to_string(p.congestion.algorithm, kTable), "ramp");
  TestBed bed(0.0, 0.0, 7, k100G, Duration::us(1), p, kTable);
  EXPECT_NE(dynamic_cast<const Ramp*>(bed.a().nic->congestion()), nullptr);
}

// The timer ticks twice (25 % -> 50 % -> 100 %) and stops; the stream is slower
// than at line rate by about the time spent below it.
TEST(CcRamp, TimerTicksRaiseTheRateToTheLineRate) {
  TestBed plain(0.0, 0.0, 7, k100G, Duration::us(1), one_page());
  const Time line = stream(plain, 4).first;
  TestBed ramped(0.0, 0.0, 7, k100G, Duration::us(1), with_ramp(), kTable);
  const auto [slower, qp] = stream(ramped, 4);
  ASSERT_NE(qp, nullptr);
  const auto& s = static_cast<const RampState&>(*qp->cc);
  EXPECT_EQ(s.ticks, 2u);
  EXPECT_EQ(s.rate, k100G);
  EXPECT_FALSE(ramped.a().nic->congestion()->summary(*qp->cc).limited);
  // 20 us at 25 % and 20 us at 50 % send what line rate sends in 15 us: 25 us lost.
  const Duration lost = slower - line;
  EXPECT_GT(lost, Duration::us(22));
  EXPECT_LT(lost, Duration::us(28));
}

}  // namespace
}  // namespace rnicsim::nictest
