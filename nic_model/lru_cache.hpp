// A least-recently-used set of keys with a fixed capacity: the behaviour of the
// NIC's on-chip context caches (QP contexts, memory translation entries). It
// tracks which keys are resident, not their contents: the contents live in the
// model's context structures; the cache decides what an access costs.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rnicsim::nic {

class LruCache {
public:
  // capacity 0: everything always hits (an unlimited cache).
  // The memory grows with the keys brought in, not with the capacity: a
  // world of many NICs, each with caches of thousands of entries that few
  // QPs or pages reach, would otherwise zero (and fault in) all of them.
  explicit LruCache(uint32_t capacity = 0) : capacity_(capacity) {
    if (capacity_ > 0) index_.assign(std::min<uint64_t>(kFirstIndex, full_index()), Entry{});
  }

  // Touches `key`; true on a hit. A miss brings the key in, evicting the least
  // recently used one if the cache is full.
  bool access(uint64_t key) {
    if (capacity_ == 0) {
      ++hits_;
      return true;
    }
    if (head_ != kNone && nodes_[head_].key == key) {  // the most recent key again: nothing moves
      ++hits_;
      return true;
    }
    size_t at = find(key);
    if (index_[at].slot != kNone) {
      move_to_front(index_[at].slot);
      ++hits_;
      return true;
    }
    ++misses_;
    uint32_t slot;
    if (used_ < capacity_) {
      slot = used_++;
      nodes_.emplace_back();
      if (uint64_t{used_} * 2 > index_.size()) {
        grow_index();
        at = find(key);
      }
    } else {
      slot = tail_;
      unlink(slot);
      remove_from_index(nodes_[slot].key);
      at = find(key);  // the removal may have moved entries
    }
    nodes_[slot].key = key;
    push_front(slot);
    index_[at] = Entry{key, slot};
    return false;
  }
  void erase(uint64_t key) {
    if (capacity_ == 0) return;
    const size_t at = find(key);
    const uint32_t slot = index_[at].slot;
    if (slot == kNone) return;
    // Leave the slot in the list with a key nobody asks for; it ages out.
    remove_at(at);
    nodes_[slot].key = UINT64_MAX - slot;
  }

  uint32_t capacity() const { return capacity_; }
  // The bytes its bookkeeping holds now.
  size_t memory_bytes() const { return nodes_.capacity() * sizeof(Node) + index_.capacity() * sizeof(Entry); }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Node {
    uint64_t key = 0;
    uint32_t prev = kNone, next = kNone;
  };
  // The index: open addressing with linear probing, keys beside their slots.
  struct Entry {
    uint64_t key = 0;
    uint32_t slot = kNone;  // kNone: empty
  };
  static constexpr uint64_t kFirstIndex = 16;
  // At most half full, so that probe sequences stay short.
  uint64_t full_index() const { return std::bit_ceil(uint64_t{capacity_} * 2); }
  void grow_index() {
    std::vector<Entry> old(std::min(index_.size() * 2, full_index()), Entry{});
    old.swap(index_);
    for (const Entry& e : old)
      if (e.slot != kNone) index_[find(e.key)] = e;
  }
  // Where a key's probe sequence starts: the top bits of the key times the
  // golden ratio (Fibonacci hashing). The callers' keys count up (pages of a
  // region, QP numbers); placed in order they would form one long run of
  // taken entries, which every other key landing in it would walk to its end.
  size_t home(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - std::countr_zero(index_.size())));
  }
  // The entry holding `key`, or the empty one where it would go.
  size_t find(uint64_t key) const {
    const size_t mask = index_.size() - 1;
    size_t i = home(key);
    while (index_[i].slot != kNone && index_[i].key != key) i = (i + 1) & mask;
    return i;
  }
  // Removes `key` if present.
  void remove_from_index(uint64_t key) {
    const size_t at = find(key);
    if (index_[at].slot != kNone) remove_at(at);
  }
  // Empties the entry at `gap`; later entries of its probe sequence move back
  // into the gap (no tombstones).
  void remove_at(size_t gap) {
    const size_t mask = index_.size() - 1;
    for (size_t j = (gap + 1) & mask; index_[j].slot != kNone; j = (j + 1) & mask) {
      const size_t h = home(index_[j].key);
      // The entry at j may fill the gap unless its home lies cyclically in (gap, j].
      const bool stays = gap <= j ? (gap < h && h <= j) : (gap < h || h <= j);
      if (stays) continue;
      index_[gap] = index_[j];
      gap = j;
    }
    index_[gap] = Entry{};
  }
  void unlink(uint32_t i) {
    Node& n = nodes_[i];
    if (n.prev != kNone) nodes_[n.prev].next = n.next; else head_ = n.next;
    if (n.next != kNone) nodes_[n.next].prev = n.prev; else tail_ = n.prev;
    n.prev = n.next = kNone;
  }
  void push_front(uint32_t i) {
    Node& n = nodes_[i];
    n.prev = kNone;
    n.next = head_;
    if (head_ != kNone) nodes_[head_].prev = i;
    head_ = i;
    if (tail_ == kNone) tail_ = i;
  }
  void move_to_front(uint32_t i) {
    if (head_ == i) return;
    unlink(i);
    push_front(i);
  }

  uint32_t capacity_;
  uint32_t used_ = 0;
  uint32_t head_ = kNone, tail_ = kNone;
  std::vector<Node> nodes_;
  std::vector<Entry> index_;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace rnicsim::nic
