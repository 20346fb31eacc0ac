// Jitter: off, the model is exact (every message of a ping takes the same
// time); on, latencies spread around the mean the preset gives, the same for
// the same seed.
#include <gtest/gtest.h>

#include <algorithm>

#include "nic_fixture.hpp"
#include "nic_model/jitter.hpp"

using namespace rnicsim;
using namespace rnicsim::nictest;

namespace {

TEST(Jitter, OffDrawsNothing) {
  Jitter j(sim::Duration::zero(), sim::RandomStream(1, "nic.jitter"));
  EXPECT_FALSE(j.on());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(j.draw(), sim::Duration::zero());
}

TEST(Jitter, DrawsAroundItsMeanTheSameForTheSameStream) {
  Jitter a(sim::Duration::ns(20), sim::RandomStream(1, "nic.jitter"));
  Jitter b(sim::Duration::ns(20), sim::RandomStream(1, "nic.jitter"));
  Jitter other(sim::Duration::ns(20), sim::RandomStream(1, "other.jitter"));
  int64_t sum = 0;
  bool all_same = true, differs = false;
  constexpr int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) {
    const sim::Duration d = a.draw();
    all_same = all_same && d == b.draw();
    differs = differs || d != other.draw();
    EXPECT_GE(d, sim::Duration::zero());
    sum += d.picoseconds();
  }
  EXPECT_TRUE(all_same);
  EXPECT_TRUE(differs);
  EXPECT_NEAR(static_cast<double>(sum) / kDraws, 20'000.0, 600.0);  // exponential: sd/sqrt(n) = 141 ps
}

// Post-to-completion times of `n` 8-byte WRITEs sent one after the other (each
// posted when the last completed), with `mean` jitter and `seed`; the first,
// which misses the NICs' caches, left out.
std::vector<int64_t> ping(sim::Duration mean, uint64_t seed, int n = 200) {
  NicParams p;
  p.jitter_mean = mean;
  TestBed bed(0, 0, seed, 100'000'000'000, sim::Duration::ns(100), p);
  auto [x, y] = bed.pair();
  std::vector<int64_t> times;
  for (int i = 0; i < n; ++i) {
    const sim::Time start = bed.sim.now();
    x->post_send(x->write_wqe(i, 0, 8, *y, 0));
    bed.run();
    EXPECT_EQ(x->cqes.size(), static_cast<size_t>(i + 1));
    if (i > 0) times.push_back((x->cqes.back().at - start).picoseconds());
  }
  return times;
}

TEST(Jitter, OffEveryMessageTakesTheSameTime) {
  const auto t = ping(sim::Duration::zero(), 7);
  EXPECT_EQ(*std::min_element(t.begin(), t.end()), *std::max_element(t.begin(), t.end()));
}

TEST(Jitter, OnLatenciesSpreadTheSameForASeed) {
  const auto exact = ping(sim::Duration::zero(), 7);
  const auto t = ping(sim::Duration::ns(20), 7);
  EXPECT_EQ(t, ping(sim::Duration::ns(20), 7)) << "a seed gives the same latencies";
  EXPECT_NE(t, ping(sim::Duration::ns(20), 8)) << "another seed, other latencies";
  const int64_t lo = *std::min_element(t.begin(), t.end()), hi = *std::max_element(t.begin(), t.end());
  EXPECT_GE(lo, exact[0]) << "jitter only adds";
  EXPECT_GT(hi - lo, 50'000) << "a spread of tens of ns: each packet draws twice each way";
  // Each completion follows 3 draws of 20 ns on average: the WRITE's transmit
  // pass (hidden under its payload's DMA read, as the transmit latency is) and
  // receive pass, and the ACK's receive pass (ACKs leave without the transmit
  // pipeline).
  double mean = 0;
  for (int64_t v : t) mean += static_cast<double>(v - exact[0]);
  mean /= static_cast<double>(t.size());
  EXPECT_GT(mean, 30'000.0);
  EXPECT_LT(mean, 60'000.0);
}

}  // namespace
