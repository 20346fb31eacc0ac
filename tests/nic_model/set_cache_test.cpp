// The context caches against plain reference models: one exact LRU when a set
// holds every entry, and an LRU per set otherwise; the same hits, misses and
// evictions for any sequence of accesses and erasures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <list>
#include <random>
#include <vector>

#include "nic_model/set_cache.hpp"

namespace rnicsim::nic {
namespace {

TEST(SetCache, UnlimitedAlwaysHits) {
  SetCache c(0);
  for (uint64_t k = 0; k < 100; ++k) EXPECT_TRUE(c.access(k * 7919));
  c.erase(5);
  EXPECT_EQ(c.hits(), 100u);
  EXPECT_EQ(c.misses(), 0u);
  EXPECT_EQ(c.memory_bytes(), 0u);
}

TEST(SetCache, OneSetEvictsTheLeastRecentlyUsed) {
  SetCache c(3);
  EXPECT_EQ(c.sets(), 1u);
  EXPECT_FALSE(c.access(1));
  EXPECT_FALSE(c.access(2));
  EXPECT_FALSE(c.access(3));
  EXPECT_TRUE(c.access(1));   // order now 1 3 2
  EXPECT_FALSE(c.access(4));  // evicts 2
  EXPECT_TRUE(c.access(3));
  EXPECT_TRUE(c.access(1));
  EXPECT_FALSE(c.access(2));  // evicts 4
  EXPECT_FALSE(c.access(4));  // evicts 3
  EXPECT_EQ(c.hits(), 3u);
  EXPECT_EQ(c.misses(), 6u);
}

// A cyclic working set one larger than the cache: LRU always drops the key
// needed next, a pseudo-random victim often keeps it; both the same each run.
TEST(SetCache, RandomReplacementKeepsPartOfACycleThatLruLosesWhole) {
  auto hits_of_cycle = [](Replacement r) {
    SetCache c(8, 8, r);
    for (int round = 0; round < 100; ++round)
      for (uint64_t k = 0; k < 9; ++k) c.access(k);
    return c.hits();
  };
  EXPECT_EQ(hits_of_cycle(Replacement::Lru), 0u);
  const uint64_t random = hits_of_cycle(Replacement::Random);
  EXPECT_GT(random, 200u) << "of 900 accesses";
  EXPECT_LT(random, 891u);
  EXPECT_EQ(hits_of_cycle(Replacement::Random), random) << "reproducible";
}

TEST(SetCache, AnErasedKeyMissesAndFreesItsWay) {
  SetCache c(2);
  c.access(10);
  c.access(20);
  c.erase(10);
  EXPECT_FALSE(c.access(10));  // gone: a miss, into the way it freed
  EXPECT_TRUE(c.access(20));   // nothing was evicted for it
  EXPECT_TRUE(c.access(10));
  c.erase(99);  // not there: nothing happens
  EXPECT_TRUE(c.access(20));
}

// The capacity is rounded up to whole sets of `ways`.
TEST(SetCache, CapacityIsWholeSets) {
  EXPECT_EQ(SetCache(8192, 8).sets(), 1024u);
  EXPECT_EQ(SetCache(500, 8).capacity(), 504u);
  EXPECT_EQ(SetCache(5, 8).ways(), 5u);
  EXPECT_EQ(SetCache(5, 8).sets(), 1u);
}

// Every access of a random workload, with erasures among them, agrees with an
// LRU list per set (each set found with the cache's own set_of).
TEST(SetCache, MatchesAnLruPerSet) {
  for (auto [capacity, ways] : {std::pair{1u, 8u}, {7u, 8u}, {64u, 8u}, {64u, 4u}, {500u, 8u}, {96u, 64u}}) {
    std::mt19937_64 rng(capacity * 100 + ways);
    SetCache c(capacity, ways);
    std::vector<std::list<uint64_t>> sets(c.sets());  // most recent first
    for (int i = 0; i < 20000; ++i) {
      // Keys that share low bits and keys close together.
      const uint64_t key = (rng() % 4 == 0) ? (rng() % (3 * capacity + 1)) << 40 : rng() % (2 * capacity + 3);
      std::list<uint64_t>& set = sets[c.set_of(key)];
      auto it = std::find(set.begin(), set.end(), key);
      if (rng() % 6 == 0) {
        if (it != set.end()) set.erase(it);
        c.erase(key);
        continue;
      }
      const bool hit = it != set.end();
      if (hit) set.erase(it);
      else if (set.size() == c.ways()) set.pop_back();
      set.push_front(key);
      ASSERT_EQ(c.access(key), hit) << "capacity " << capacity << " ways " << ways << " access " << i;
    }
  }
}

// Keys that count up (pages of a region, QP numbers) spread over the sets
// nearly evenly, 7 to 10 to a set of 8 at the capacity: a cyclic sweep's hit
// rate falls as the sets overflow one by one, not all at once at the capacity
// as with one exact LRU.
TEST(SetCache, ASweepPastTheCapacityMissesAsSetsOverflow) {
  auto hit_rate = [](uint32_t keys) {
    SetCache c(2048, 8);
    for (int round = 0; round < 4; ++round)
      for (uint64_t k = 0; k < keys; ++k) c.access((uint64_t{7} << 40) | k);
    return static_cast<double>(c.hits()) / (3.0 * keys);  // the first sweep only fills
  };
  const double half = hit_rate(1024), full = hit_rate(2048), past = hit_rate(2304), far = hit_rate(8192);
  EXPECT_EQ(half, 1.0);
  EXPECT_GT(full, 0.5);
  EXPECT_LT(full, 1.0);
  EXPECT_GT(past, 0.05);
  EXPECT_LT(past, full);
  EXPECT_LT(far, 0.01);
}

// Memory is taken at the first access only; filled, the cache holds all of its
// keys when they spread evenly over the sets.
TEST(SetCache, MemoryIsTakenAtTheFirstAccess) {
  SetCache c(65536, 8);
  EXPECT_EQ(c.memory_bytes(), 0u);
  c.access(1);
  EXPECT_GE(c.memory_bytes(), 65536u * 8);
  EXPECT_LT(c.memory_bytes(), 65536u * 8 + 16384);
}

}  // namespace
}  // namespace rnicsim::nic
