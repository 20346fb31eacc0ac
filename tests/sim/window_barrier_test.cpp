// The window barrier: no thread passes before all arrive, the last one's
// completion runs once a phase before any is let go, and what each wrote
// before arriving is seen by all after; and a waiter that slept is woken.
#include "sim/window_barrier.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

using rnicsim::sim::WindowBarrier;

TEST(WindowBarrier, EveryPhaseSeesAllWritesAndOneCompletion) {
  constexpr unsigned kThreads = 3;
  constexpr int kPhases = 2000;
  WindowBarrier barrier(kThreads);
  std::vector<int> written(kThreads, -1);  // plain memory: the barrier orders it
  std::vector<int> completions;
  std::vector<int> wrong(kThreads, 0);
  auto body = [&](unsigned t) {
    for (int phase = 0; phase < kPhases; ++phase) {
      written[t] = phase;
      barrier.arrive_and_wait([&] {
        int sum = 0;
        for (int w : written) sum += w;
        completions.push_back(sum);
      });
      for (int w : written) wrong[t] += w != phase;
      if (completions.size() != static_cast<size_t>(phase) + 1) ++wrong[t];
      barrier.arrive_and_wait([] {});  // nobody writes again before all have read
    }
  };
  {
    std::vector<std::jthread> threads;
    for (unsigned t = 1; t < kThreads; ++t) threads.emplace_back(body, t);
    body(0);
  }
  for (unsigned t = 0; t < kThreads; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
  ASSERT_EQ(completions.size(), static_cast<size_t>(kPhases));
  for (int phase = 0; phase < kPhases; ++phase) EXPECT_EQ(completions[phase], phase * static_cast<int>(kThreads));
}

// A phase longer than the spin and the yielding: the waiter sleeps, and the
// last arrival wakes it.
TEST(WindowBarrier, ASleepingWaiterIsWoken) {
  WindowBarrier barrier(2);
  bool done = false;
  std::jthread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    done = true;
    barrier.arrive_and_wait([] {});
  });
  barrier.arrive_and_wait([] {});
  EXPECT_TRUE(done);
}

TEST(WindowBarrier, NeedsAThread) { EXPECT_THROW(WindowBarrier(0), std::invalid_argument); }
