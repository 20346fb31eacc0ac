// Tasks side by side: each runs once whatever the thread count, and a task
// that throws reaches the caller after the others have stopped; and the
// cores a thread may use.
#include "sim/tasks.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <stdexcept>
#include <vector>

using rnicsim::sim::run_tasks;

TEST(RunTasks, EachTaskRunsOnceOnAnyThreadCount) {
  for (unsigned threads : {0u, 1u, 2u, 5u, 40u}) {
    std::vector<int> runs(17, 0);  // each slot written by its own task only
    std::vector<std::function<void()>> tasks;
    for (size_t i = 0; i < runs.size(); ++i) tasks.emplace_back([&runs, i] { ++runs[i]; });
    run_tasks(tasks, threads);
    EXPECT_EQ(runs, std::vector<int>(runs.size(), 1)) << threads << " threads";
  }
  run_tasks({}, 2);  // nothing to do
}

TEST(RunTasks, AThrowingTaskReachesTheCaller) {
  std::atomic<int> ran{0};
  std::vector<std::function<void()>> tasks = {[&] { ++ran; }, [] { throw std::runtime_error("disk full"); },
                                              [&] { ++ran; }};
  EXPECT_THROW(run_tasks(tasks, 1), std::runtime_error);
  EXPECT_EQ(ran.load(), 1);  // one thread takes them in order, and stops at the throw
  EXPECT_THROW(run_tasks(tasks, 2), std::runtime_error);
}

// A thread bound to one core (as mpirun binds a rank) may use one; unbound,
// every core it may run on.
TEST(UsableCores, AreTheCoresTheThreadIsBoundTo) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  EXPECT_EQ(rnicsim::sim::usable_cores(), static_cast<unsigned>(CPU_COUNT(&all)));
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(rnicsim::sim::usable_cores(), 1u);
  ASSERT_EQ(sched_setaffinity(0, sizeof all, &all), 0);
}
