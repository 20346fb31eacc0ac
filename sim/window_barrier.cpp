#include "sim/window_barrier.hpp"

#include <sched.h>

#include <chrono>
#include <stdexcept>

namespace rnicsim::sim {

namespace {

// How long a waiter spins, then yields, before it sleeps. The spin covers the
// usual difference between two partitions' work in a window; the yielding
// covers a slow window while letting another program have the core.
constexpr auto kSpin = std::chrono::microseconds(20);
constexpr auto kYield = std::chrono::milliseconds(2);

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

WindowBarrier::WindowBarrier(unsigned threads) : threads_(threads) {
  if (threads == 0) throw std::invalid_argument("a barrier needs at least one thread");
}

void WindowBarrier::release(uint32_t generation) {
  arrived_.store(0, std::memory_order_relaxed);  // ordered before the waiters' next arrival by the store below
  generation_.store(generation + 1, std::memory_order_seq_cst);
  // A sleeper counts itself before it checks the generation, and the
  // generation moved before this reads the count: one of the two sees the other.
  if (sleepers_.load(std::memory_order_seq_cst) > 0) generation_.notify_all();
}

void WindowBarrier::wait_for(uint32_t generation) {
  auto moved = [&] { return generation_.load(std::memory_order_acquire) != generation; };
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  for (unsigned i = 1; !moved(); ++i) {
    if (i % 64 != 0) {
      relax();
      continue;
    }
    const Clock::duration waited = Clock::now() - start;
    if (waited >= kSpin + kYield) break;
    if (waited >= kSpin) sched_yield();
  }
  if (moved()) return;
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  while (generation_.load(std::memory_order_seq_cst) == generation) generation_.wait(generation, std::memory_order_seq_cst);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace rnicsim::sim
