// One rank: an exchange gives back the rank's own part, the reductions are
// the value itself.
#include <gtest/gtest.h>

#include "sim/rank_link.hpp"

namespace rnicsim::sim {
namespace {

TEST(SingleRank, AnExchangeReturnsItsOwnPart) {
  SingleRank one;
  const std::vector<std::byte> mine = {std::byte{1}, std::byte{2}, std::byte{3}};
  const std::span<const std::byte> parts[] = {mine};
  const auto got = one.exchange(parts);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], mine);
  EXPECT_EQ(one.rank(), 0);
  EXPECT_EQ(one.ranks(), 1);
}

TEST(SingleRank, AnExchangeTakesOnePart) {
  SingleRank one;
  const std::span<const std::byte> parts[2] = {};
  EXPECT_THROW(one.exchange(parts), std::invalid_argument);
}

TEST(SingleRank, TheReductionsAreTheValue) {
  SingleRank one;
  EXPECT_EQ(one.min(-5), -5);
  EXPECT_EQ(one.max(INT64_MAX), INT64_MAX);
}

TEST(SingleRank, AbortEndsTheProcessWithItsReason) {
  EXPECT_EXIT(SingleRank().abort("a partition failed"), testing::ExitedWithCode(1), "rnicsim: a partition failed");
}

}  // namespace
}  // namespace rnicsim::sim
