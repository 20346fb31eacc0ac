// A least-recently-used set of keys with a fixed capacity: the behaviour of the
// NIC's on-chip context caches (QP contexts, memory translation entries). It
// tracks which keys are resident, not their contents: the contents live in the
// model's context structures; the cache decides what an access costs.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace rnicsim::nic {

class LruCache {
public:
  // capacity 0: everything always hits (an unlimited cache).
  explicit LruCache(uint32_t capacity = 0) : capacity_(capacity) {
    if (capacity_ > 0) {
      nodes_.resize(capacity_);
      index_.reserve(capacity_ * 2);
    }
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
    auto it = index_.find(key);
    if (it != index_.end()) {
      move_to_front(it->second);
      ++hits_;
      return true;
    }
    ++misses_;
    uint32_t slot;
    if (used_ < capacity_) {
      slot = used_++;
    } else {
      slot = tail_;
      unlink(slot);
      index_.erase(nodes_[slot].key);
    }
    nodes_[slot].key = key;
    push_front(slot);
    index_.emplace(key, slot);
    return false;
  }
  void erase(uint64_t key) {
    auto it = index_.find(key);
    if (it == index_.end()) return;
    // Leave the slot in the list with a key nobody asks for; it ages out.
    nodes_[it->second].key = UINT64_MAX - it->second;
    index_.erase(it);
  }

  uint32_t capacity() const { return capacity_; }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Node {
    uint64_t key = 0;
    uint32_t prev = kNone, next = kNone;
  };
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
  std::unordered_map<uint64_t, uint32_t> index_;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace rnicsim::nic
