// When `rnicsim run` starts itself again with glibc's huge-page tunable: only
// where huge pages come on request, and never twice or over the user's choice.
#include <gtest/gtest.h>

#include "cli/huge_pages.hpp"

namespace rnicsim::cli {
namespace {

constexpr const char* kMadvise = "always [madvise] never\n";

TEST(HugePages, OnRequestTheTunableIsAddedToWhatIsSet) {
  EXPECT_EQ(tunables_for_huge_pages(kMadvise, nullptr), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(tunables_for_huge_pages(kMadvise, ""), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(tunables_for_huge_pages(kMadvise, "glibc.malloc.arena_max=2"),
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
}

TEST(HugePages, NoRestartWhereItWouldChangeNothing) {
  // Huge pages given to every process, or to none.
  EXPECT_FALSE(tunables_for_huge_pages("[always] madvise never\n", nullptr));
  EXPECT_FALSE(tunables_for_huge_pages("always madvise [never]\n", nullptr));
  EXPECT_FALSE(tunables_for_huge_pages("", nullptr));  // no such file: no THP
  // The start before set it, or the user chose a value.
  EXPECT_FALSE(tunables_for_huge_pages(kMadvise, "glibc.malloc.hugetlb=1"));
  EXPECT_FALSE(tunables_for_huge_pages(kMadvise, "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0"));
}

}  // namespace
}  // namespace rnicsim::cli
