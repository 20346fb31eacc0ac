// The barrier between the phases of a window (partitions.hpp). Windows are
// short (a microsecond of simulated time, tens of microseconds of work), so a
// barrier that puts its waiters to sleep at once costs a futex wake-up per
// thread per phase, about as much as the window's work. This one spins
// first, then yields the core (to whatever else the machine runs), and only
// then sleeps: threads that each hold a core meet without a system call,
// and a machine with more threads than cores loses at most the spin.
#pragma once

#include <atomic>
#include <cstdint>

namespace rnicsim::sim {

class WindowBarrier {
public:
  explicit WindowBarrier(unsigned threads);
  WindowBarrier(const WindowBarrier&) = delete;
  WindowBarrier& operator=(const WindowBarrier&) = delete;

  // Waits until every thread has arrived; the last to arrive runs
  // `completion` before any is let go, and everything each thread did before
  // arriving is visible to every thread after.
  template <class F>
  void arrive_and_wait(F&& completion) {
    const uint32_t generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      completion();
      release(generation);
    } else {
      wait_for(generation);
    }
  }

private:
  void release(uint32_t generation);
  void wait_for(uint32_t generation);

  const unsigned threads_;
  alignas(64) std::atomic<unsigned> arrived_{0};
  alignas(64) std::atomic<uint32_t> generation_{0};
  std::atomic<unsigned> sleepers_{0};
};

}  // namespace rnicsim::sim
