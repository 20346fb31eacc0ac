// The windowed engine: partitions on threads fire what one scheduler fires,
// empty stretches cost no windows, and an event that throws on a worker
// thread reaches the caller instead of leaving the others waiting.
#include "sim/partitions.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

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

// The outside's events fire between windows, before every event of their time,
// with each partition's clock at that time: as one scheduler would fire them.
TEST(Partitions, TheOutsideActsAsInOneSchedulerForAnyPartitioning) {
  const Ring::Options outside{.outside = true};
  const auto one = Ring(1, 1, outside).run(Time::zero() + 600_ns);
  const auto& first = one[1];
  const auto at = [&](const std::string& line) { return std::find(first.begin(), first.end(), line) - first.begin(); };
  ASSERT_LT(at("37000 outside"), static_cast<long>(first.size()));
  EXPECT_LT(at("37000 outside"), at("40000 poked"));
  EXPECT_LT(at("333000 outside"), static_cast<long>(first.size()));  // the last, at 9 x 37 ns
  for (uint32_t partitions : {2u, 3u, 5u})
    for (unsigned threads : {1u, 2u}) {
      EXPECT_EQ(Ring(partitions, threads, outside).run(Time::zero() + 600_ns), one) << partitions << " on " << threads;
    }
}

namespace {

// The time of a log line ("<ps> what").
int64_t time_of(const std::string& line) { return std::stoll(line.substr(0, line.find(' '))); }

}  // namespace

// A stage ends at the end of the instant its last share finished in, and the
// next begins there, wherever the shares ran.
TEST(Partitions, StagesEndAtOneInstantForAnyPartitioning) {
  const Ring::Options staged{.stages = true};
  Ring ring(1, 1, staged);
  const auto one = ring.run(Time::zero() + 600_ns);
  EXPECT_TRUE(ring.engine().ended());
  for (uint32_t a = 1; a <= Ring::kActors; ++a) {
    const auto& log = one[a];
    const auto first_end = std::find_if(log.begin(), log.end(), [](const std::string& l) { return l.find("stage 10 ends") != std::string::npos; });
    ASSERT_NE(first_end, log.end());
    ASSERT_NE(log.back().find("stage 30 ends"), std::string::npos) << "nothing after the run's end";
    const int64_t instant = std::stoll(first_end->substr(first_end->rfind(' ') + 1));
    EXPECT_EQ(time_of(*first_end), instant);
    // Nothing of a later time before the stage's end; the instant itself is whole.
    for (auto it = log.begin(); it != first_end; ++it) EXPECT_LE(time_of(*it), instant) << *it;
    for (auto it = first_end + 1; it != log.end(); ++it) EXPECT_GT(time_of(*it), instant) << *it;
  }
  for (uint32_t partitions : {2u, 3u, 5u})
    for (unsigned threads : {1u, 2u}) {
      Ring split(partitions, threads, staged);
      EXPECT_EQ(split.run(Time::zero() + 600_ns), one) << partitions << " on " << threads;
      EXPECT_TRUE(split.engine().ended());
    }
  const Ring::Options both{.outside = true, .stages = true};
  const auto with_outside = Ring(1, 1, both).run(Time::zero() + 600_ns);
  EXPECT_EQ(Ring(3, 2, both).run(Time::zero() + 600_ns), with_outside);
}
