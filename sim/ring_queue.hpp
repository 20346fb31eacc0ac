// A FIFO over a power-of-two ring that grows when full and never shrinks, so that a
// queue in steady state allocates nothing (std::deque frees and reallocates blocks).
// An empty queue that was never pushed to holds no ring.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace rnicsim::sim {

template <class T>
class RingQueue {
public:
  // The ring is allocated by the first push: a world of many QPs holds many
  // queues that never see an entry. Until then mask_ holds the first size - 1.
  explicit RingQueue(size_t initial_capacity = 16) : mask_(round_up(initial_capacity) - 1) {}

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // Slots held now (0 before the first push).
  size_t capacity() const { return slots_.size(); }
  T& front() { return slots_[head_]; }
  const T& front() const { return slots_[head_]; }
  T& back() { return slots_[(head_ + size_ - 1) & mask_]; }
  T& operator[](size_t i) { return slots_[(head_ + i) & mask_]; }
  const T& operator[](size_t i) const { return slots_[(head_ + i) & mask_]; }

  void push_back(T v) { emplace_back() = std::move(v); }
  // Appends a slot and returns it for the caller to fill: a slot that was used
  // before holds a value-initialised T (every pop leaves it so).
  T& emplace_back() {
    if (size_ == slots_.size()) grow();
    T& slot = slots_[(head_ + size_) & mask_];
    ++size_;
    return slot;
  }
  T pop_front() {
    if (size_ == 0) [[unlikely]] throw std::logic_error("pop from an empty queue");
    T v = std::move(slots_[head_]);
    drop_front();
    return v;
  }
  // Removes the front element without returning it. Popping an empty queue
  // (either way) throws std::logic_error.
  void pop() { drop_front(); }
  void clear() {
    while (!empty()) drop_front();
  }

private:
  static size_t round_up(size_t n) {
    size_t c = 1;
    while (c < n) c <<= 1;
    return c;
  }
  void drop_front() {
    if (size_ == 0) [[unlikely]] throw std::logic_error("pop from an empty queue");
    // Leave the slot as a fresh T, so that what it held (a frame, a buffer) is
    // released now and a later emplace_back finds it clean. Made in place, not
    // assigned from a temporary: an assignment copies a temporary just written
    // field by field with wider loads, which stall on the stores before them.
    static_assert(std::is_nothrow_default_constructible_v<T>, "a popped slot is made anew in place");
    T& slot = slots_[head_];
    std::destroy_at(&slot);
    ::new (static_cast<void*>(&slot)) T();
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  void grow() {
    std::vector<T> bigger(slots_.empty() ? mask_ + 1 : slots_.size() * 2);
    for (size_t i = 0; i < size_; ++i) bigger[i] = std::move((*this)[i]);
    slots_ = std::move(bigger);
    mask_ = slots_.size() - 1;
    head_ = 0;
  }

  std::vector<T> slots_;
  size_t mask_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace rnicsim::sim
