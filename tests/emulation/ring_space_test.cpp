#include "emulation/ring_space.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace rnicsim::emulation {
namespace {

constexpr uint64_t kPage = RingSpace::kPage;

TEST(RingSpace, HandsOutPagesFirstFitAndRefusesWhatDoesNotFit) {
  RingSpace s(kPage, 5 * kPage);
  EXPECT_EQ(s.allocate(1), kPage);
  EXPECT_EQ(s.allocate(kPage + 1), 2 * kPage);  // two pages
  EXPECT_EQ(s.allocate(2 * kPage), 0u);         // one page left
  EXPECT_EQ(s.allocate(kPage), 4 * kPage);
  EXPECT_EQ(s.allocate(0), 0u);
  EXPECT_EQ(s.free_bytes(), 0u);
}

TEST(RingSpace, ARangeComesBackOnlyOnceTheWritesIssuedBeforeItsReleaseAreMade) {
  RingSpace s(kPage, 3 * kPage);
  const uint64_t a = s.allocate(2 * kPage);
  s.release(a, 10);
  std::vector<std::pair<uint64_t, uint64_t>> dropped;
  auto drop = [&](uint64_t at, uint64_t bytes) { dropped.emplace_back(at, bytes); };
  s.reclaim(9, drop);
  EXPECT_EQ(s.allocate(2 * kPage), 0u) << "reused while a write to it was in flight";
  EXPECT_TRUE(dropped.empty());
  s.reclaim(10, drop);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0], std::make_pair(a, 2 * kPage));
  EXPECT_EQ(s.allocate(2 * kPage), a);
}

TEST(RingSpace, NeighboursMergeSoCyclesNeverFragmentTheSpace) {
  RingSpace s(kPage, 65 * kPage);
  for (int cycle = 0; cycle < 10'000; ++cycle) {
    const uint64_t cq = s.allocate(8 * kPage), sq = s.allocate(3 * kPage), rq = s.allocate(kPage);
    ASSERT_NE(cq, 0u);
    ASSERT_NE(sq, 0u);
    ASSERT_NE(rq, 0u);
    s.release(sq, 0);
    s.release(cq, 0);
    s.release(rq, 0);
    s.reclaim(0, [](uint64_t, uint64_t) {});
  }
  EXPECT_EQ(s.free_bytes(), 64 * kPage);
  EXPECT_EQ(s.allocate(64 * kPage), kPage) << "the whole space is one range again";
}

TEST(RingSpace, ReleasingWhatWasNotHandedOutChangesNothing) {
  RingSpace s(kPage, 2 * kPage);
  s.release(kPage, 0);
  s.reclaim(0, [](uint64_t, uint64_t) { ADD_FAILURE() << "dropped a range nobody had"; });
  EXPECT_EQ(s.free_bytes(), kPage);
}

}  // namespace
}  // namespace rnicsim::emulation
