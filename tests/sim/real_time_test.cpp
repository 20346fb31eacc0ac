#include "sim/real_time.hpp"

#include <gtest/gtest.h>

#include <thread>

using namespace rnicsim::sim;
using namespace rnicsim::sim::literals;

TEST(Scheduler, AdvanceToMovesTheClockPastTheLastEvent) {
  Scheduler s;
  int fired = 0;
  Event e([&] { ++fired; });
  s.schedule(e, Time::zero() + 5_ns);
  s.advance_to(Time::zero() + 20_ns);
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(s.now(), Time::zero() + 20_ns);
  s.advance_to(Time::zero() + 10_ns);  // never backwards
  EXPECT_EQ(s.now(), Time::zero() + 20_ns);
}

TEST(RealTimeExecutor, EventsFireNoEarlierThanTheirWallDeadline) {
  // Before the executor starts its clock: whatever the set-up below costs
  // (more under a sanitizer), the event is due 2 ms after the executor began.
  const auto t0 = RealTimeExecutor::Clock::now();
  Scheduler s;
  RealTimeExecutor x(s, 1.0);
  bool fired = false;
  Event e([&] { fired = true; });
  s.schedule(e, Time::zero() + 2_ms);
  while (!fired) {
    x.run_due();
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  EXPECT_GE(RealTimeExecutor::Clock::now() - t0, std::chrono::microseconds(1900));
  EXPECT_GE(s.now(), Time::zero() + 2_ms);
}

TEST(RealTimeExecutor, DilationStretchesWallTime) {
  Scheduler s;
  RealTimeExecutor x(s, 10.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const Time t = x.wall_time();
  EXPECT_GE(t, Time::zero() + 450_us);
  EXPECT_LT(t, Time::zero() + 5_ms);
}

TEST(RealTimeExecutor, InboxRunsPostedWorkAtThePresentAndLagIsMeasured) {
  Scheduler s;
  RealTimeExecutor x(s, 1.0);
  int late_fired = 0;
  Event late([&] { ++late_fired; });
  s.schedule(late, Time::zero() + 1_us);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the event is now ~2 ms late
  Time seen;
  std::thread other([&] { x.post([&] { seen = s.now(); }); });
  other.join();
  x.run_due();
  EXPECT_EQ(late_fired, 1);
  EXPECT_GE(seen, Time::zero() + 1_ms);
  EXPECT_GE(x.max_lag(), 1_ms);
  EXPECT_EQ(x.lag_ps().count(), 1u);
}
