// The NIC's on-chip context caches (QP contexts, memory translation entries):
// which keys are resident, not their contents (those live in the model's
// context structures); the cache decides what an access costs. Organised as
// hardware caches are: sets of `ways` entries, a key's set chosen by a hash of
// it, the least recently used entry of a full set replaced. A set of 8 is one
// cache line of keys in recency order, so an access touches one line of the
// simulator's memory, where an exact LRU over every entry touched several.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

namespace rnicsim::nic {

// Which key of a full set a miss replaces: the least recently used, or one
// picked by a hash of the key and the miss count (pseudo-random, reproducible),
// under which a working set a little larger than the cache still hits often
// (under LRU a cyclic one misses every time).
enum class Replacement : uint8_t { Lru, Random };

class SetCache {
public:
  static constexpr uint32_t kDefaultWays = 8;
  static constexpr uint32_t kMaxWays = 64;
  // capacity 0: everything always hits (an unlimited cache). The capacity is
  // rounded up to whole sets; a capacity of `ways` or fewer is one set, an
  // exact LRU. The keys' memory is taken at the first access, untouched
  // until used: a world of many NICs that few QPs or pages reach stays small.
  explicit SetCache(uint32_t capacity = 0, uint32_t ways = kDefaultWays, Replacement replacement = Replacement::Lru)
      : ways_(std::clamp<uint32_t>(std::min(ways, capacity), 1, kMaxWays)),
        sets_(capacity == 0 ? 0 : (capacity + ways_ - 1) / ways_),
        replacement_(replacement) {}

  // Touches `key`; true on a hit. A miss brings the key in, in place of its
  // set's least recently used key if the set is full.
  bool access(uint64_t key) {
    if (sets_ == 0) {
      ++hits_;
      return true;
    }
    if (keys_ == nullptr) allocate();
    auto [k, n] = set_for(key);
    for (uint32_t i = 0; i < n; ++i) {
      if (k[i] != key) continue;
      std::memmove(k + 1, k, i * sizeof *k);  // to the front: the most recent
      k[0] = key;
      ++hits_;
      return true;
    }
    ++misses_;
    // A full set drops its last (LRU) or a picked one; the new key goes first.
    const uint32_t kept = n < ways_ ? n++ : replacement_ == Replacement::Lru ? ways_ - 1 : victim(key);
    std::memmove(k + 1, k, kept * sizeof *k);
    k[0] = key;
    return false;
  }
  // Forgets `key` (its context is gone); a no-op if it is not resident.
  void erase(uint64_t key) {
    if (sets_ == 0 || keys_ == nullptr) return;
    auto [k, n] = set_for(key);
    for (uint32_t i = 0; i < n; ++i) {
      if (k[i] != key) continue;
      std::memmove(k + i, k + i + 1, (n - i - 1) * sizeof *k);
      --n;
      return;
    }
  }

  // The set a key lives in: the top bits of the key times the golden ratio
  // (Fibonacci hashing), scaled to the set count. Callers' keys count up
  // (pages of a region, QP numbers) and land in sets spread evenly.
  size_t set_of(uint64_t key) const {
    using Wide = unsigned __int128;
    return static_cast<size_t>((Wide{key * 0x9E3779B97F4A7C15ull} * sets_) >> 64);
  }
  uint32_t capacity() const { return sets_ * ways_; }
  uint32_t ways() const { return ways_; }
  uint32_t sets() const { return sets_; }
  // The bytes its bookkeeping holds.
  size_t memory_bytes() const { return keys_ == nullptr ? 0 : size_t{sets_} * ways_ * sizeof(uint64_t) + fill_.size(); }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

private:
  static constexpr std::align_val_t kLine{64};
  struct LineDelete {
    void operator()(uint64_t* p) const { ::operator delete[](p, kLine); }
  };
  // The keys of `key`'s set, most recent first, and how many it holds.
  struct Set {
    uint64_t* keys;
    uint8_t& fill;
  };
  Set set_for(uint64_t key) {
    const size_t set = set_of(key);
    return {keys_.get() + set * ways_, fill_[set]};
  }
  void allocate() {
    keys_.reset(static_cast<uint64_t*>(::operator new[](size_t{sets_} * ways_ * sizeof(uint64_t), kLine)));
    fill_.assign(sets_, 0);
  }

  uint32_t victim(uint64_t key) const {
    return static_cast<uint32_t>((((key ^ misses_) * 0x9E3779B97F4A7C15ull) >> 32) % ways_);
  }

  uint32_t ways_;
  uint32_t sets_;
  Replacement replacement_;
  std::unique_ptr<uint64_t[], LineDelete> keys_;  // sets_ x ways_, each set most recent first
  std::vector<uint8_t> fill_;                     // keys in each set
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace rnicsim::nic
