// The windowed engine: partitions on threads fire what one scheduler fires,
// empty stretches cost no windows, and an event that throws on a worker
// thread reaches the caller instead of leaving the others waiting.
#include "sim/partitions.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "ring_world.hpp"

using namespace rnicsim::sim;
using namespace rnicsim::sim::literals;

TEST(Partitions, AnyPartitionAndThreadCountGivesWhatOneSchedulerGives) {
  const auto one = Ring(1, 1).run(Time::zero() + 600_ns);
  EXPECT_GT(one[1].size(), 150u);
  for (uint32_t partitions : {2u, 3u, 5u})
    for (unsigned threads : {1u, 2u, 3u}) {
      EXPECT_EQ(Ring(partitions, threads).run(Time::zero() + 600_ns), one) << partitions << " on " << threads;
    }
}

// A run cut at a time and taken up again is the run in one go.
TEST(Partitions, ARunTakenUpAgainIsTheRunInOneGo) {
  const auto whole = Ring(3, 2).run(Time::zero() + 600_ns);
  Ring ring(3, 2);
  const auto part = ring.run(Time::zero() + 237_ns);
  EXPECT_LT(part[1].size(), whole[1].size());
  EXPECT_EQ(ring.run(Time::zero() + 600_ns), whole);
}

TEST(Partitions, EmptyStretchesAreSkipped) {
  Scheduler a, b;
  int fired = 0;
  Event early([&] { ++fired; }), late([&] { ++fired; });
  a.schedule(early, Time::zero() + 5_ns);
  b.schedule(late, Time::zero() + 1_s);
  Partitions engine(1_us, 2);
  for (Scheduler* s : {&a, &b}) engine.add({s, [] {}, [] {}});
  engine.run_until(Time::max());
  EXPECT_EQ(fired, 2);
  EXPECT_EQ(engine.windows(), 2u);  // not a million of 1 us
  EXPECT_EQ(b.now(), Time::zero() + 1_s);
}

TEST(Partitions, AnEventThatThrowsOnAWorkerReachesTheCaller) {
  Scheduler a, b;
  int ticks = 0;
  Event tick([&] {
    if (++ticks < 1000) a.schedule_in(tick, 1_us);
  });
  Event bad([] { throw std::runtime_error("broken model"); });
  a.schedule(tick, Time::zero());
  b.schedule(bad, Time::zero() + 10_us);  // b is the worker thread's
  Partitions engine(1_us, 2);
  for (Scheduler* s : {&a, &b}) engine.add({s, [] {}, [] {}});
  EXPECT_THROW(engine.run_until(Time::max()), std::runtime_error);
  EXPECT_LT(ticks, 1000);  // the run stopped at the window after it
  EXPECT_THROW(Partitions(Duration::zero(), 1), std::invalid_argument);
  EXPECT_THROW(Partitions(1_us, 0), std::invalid_argument);
}
