// perftest's peak bandwidth: the hull search gives exactly the minimum that the
// search over every (post, completion) pair gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "scenario/perftest.hpp"

namespace rnicsim::scenario {
namespace {

double every_pair(const std::vector<sim::Time>& posted, const std::vector<sim::Time>& completed,
                  const std::vector<uint64_t>& completed_at, uint64_t step) {
  double best = std::numeric_limits<double>::infinity();
  for (uint64_t i = 0; i < posted.size(); i += step)
    for (uint64_t j : completed_at)
      if (j >= i)
        best = std::min(best, (static_cast<double>(completed[j].picoseconds()) -
                               static_cast<double>(posted[i].picoseconds())) /
                                  static_cast<double>(j - i + 1));
  return best;
}

TEST(PerftestPeak, HullSearchEqualsEveryPair) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 400; ++round) {
    const uint64_t n = 1 + rng() % 300;
    const uint64_t step = 1 + rng() % 4;
    // Posts in order, each completion after its post and in order; bursts and
    // stalls, and repeated times, so that ties and collinear points occur.
    std::vector<sim::Time> posted(n), completed(n);
    int64_t t = 0, c = 0;
    for (uint64_t k = 0; k < n; ++k) {
      t += (rng() % 3 == 0) ? 0 : static_cast<int64_t>(rng() % (rng() % 2 ? 1000 : 1'000'000));
      posted[k] = sim::Time::from_ps(t);
      c = std::max(c, t) + static_cast<int64_t>(rng() % 5 == 0 ? 0 : rng() % 700'000);
      completed[k] = sim::Time::from_ps(c);
    }
    std::vector<uint64_t> completed_at;
    for (uint64_t k = 0; k < n; ++k)
      if (rng() % 3 != 0 || k + 1 == n) completed_at.push_back(k);
    const double expected = every_pair(posted, completed, completed_at, step);
    EXPECT_EQ(best_stretch_ps(posted, completed, completed_at, step), expected) << "round " << round;
  }
}

TEST(PerftestPeak, NoPairIsInfinity) {
  const std::vector<sim::Time> posted{sim::Time::from_ps(5), sim::Time::from_ps(9)};
  EXPECT_EQ(best_stretch_ps(posted, posted, {}, 1), std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace rnicsim::scenario
