// The context caches' LRU set against a plain reference model: the same hits,
// misses and evictions for any sequence of accesses and erasures, including keys
// that collide in the index and erasures in the middle of probe sequences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <list>
#include <random>

#include "nic_model/lru_cache.hpp"

namespace rnicsim::nic {
namespace {

TEST(LruCache, UnlimitedAlwaysHits) {
  LruCache c(0);
  for (uint64_t k = 0; k < 100; ++k) EXPECT_TRUE(c.access(k * 7919));
  c.erase(5);
  EXPECT_EQ(c.hits(), 100u);
  EXPECT_EQ(c.misses(), 0u);
}

TEST(LruCache, EvictsTheLeastRecentlyUsed) {
  LruCache c(3);
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

TEST(LruCache, ErasedKeyMissesAndItsSlotAgesOut) {
  LruCache c(2);
  c.access(10);
  c.access(20);
  c.erase(10);
  EXPECT_FALSE(c.access(10));  // gone: a miss, which evicts the least recent slot (10's old one)
  EXPECT_TRUE(c.access(20));
  EXPECT_TRUE(c.access(10));
  c.erase(99);  // not there: nothing happens
  EXPECT_TRUE(c.access(20));
}

// Every access of a random workload (keys from a small range, so the index is
// crowded and probe sequences long) agrees with a straightforward LRU.
TEST(LruCache, MatchesAStraightforwardLru) {
  for (uint32_t capacity : {1u, 2u, 7u, 64u, 500u}) {
    std::mt19937_64 rng(capacity);
    LruCache c(capacity);
    std::list<uint64_t> lru;  // most recent first
    for (int i = 0; i < 20000; ++i) {
      // Keys that share low bits and keys spread out, so some collide in the index.
      const uint64_t key = (rng() % 4 == 0) ? (rng() % (3 * capacity + 1)) << 40 : rng() % (2 * capacity + 3);
      auto it = std::find(lru.begin(), lru.end(), key);
      const bool hit = it != lru.end();
      if (hit) lru.erase(it);
      else if (lru.size() == capacity) lru.pop_back();
      lru.push_front(key);
      ASSERT_EQ(c.access(key), hit) << "capacity " << capacity << " access " << i;
    }
  }
}

// Erasures interleaved with accesses: an erased key misses next time, and the
// keys left keep hitting as the reference says.
TEST(LruCache, ErasuresKeepTheIndexConsistent) {
  std::mt19937_64 rng(7);
  const uint32_t capacity = 32;
  LruCache c(capacity);
  std::list<uint64_t> lru;  // keys present, most recent first; erased slots as kGone
  constexpr uint64_t kGone = UINT64_MAX;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t key = rng() % 80;
    if (rng() % 5 == 0) {
      auto it = std::find(lru.begin(), lru.end(), key);
      if (it != lru.end()) *it = kGone;  // the slot stays where it is and ages out
      c.erase(key);
      continue;
    }
    auto it = std::find(lru.begin(), lru.end(), key);
    const bool hit = it != lru.end();
    if (hit) lru.erase(it);
    else if (lru.size() == capacity) lru.pop_back();
    lru.push_front(key);
    ASSERT_EQ(c.access(key), hit) << "access " << i;
  }
}

// A large cache that few keys reach keeps little memory; filled, it holds
// all its keys at once.
TEST(LruCache, MemoryGrowsWithTheKeysBroughtIn) {
  LruCache c(65536);
  for (uint64_t k = 0; k < 10; ++k) c.access(k);
  EXPECT_LT(c.memory_bytes(), 4096u);
  for (uint64_t k = 0; k < 65536; ++k) c.access(k << 32 | k);
  for (uint64_t k = 0; k < 65536; ++k) ASSERT_TRUE(c.access(k << 32 | k)) << k;
  EXPECT_GE(c.memory_bytes(), 65536u * 16);
}

}  // namespace
}  // namespace rnicsim::nic
