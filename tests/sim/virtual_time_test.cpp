#include "sim/virtual_time.hpp"

#include <gtest/gtest.h>

#include <thread>

using namespace rnicsim::sim;
using namespace rnicsim::sim::literals;
using std::chrono::milliseconds;

TEST(VirtualTimeExecutor, NearEventsFireAtOnceWhateverTheWallClock) {
  Scheduler s;
  VirtualTimeExecutor x(s, 1_ms, milliseconds(500), milliseconds(0));
  int fired = 0;
  // A chain of events, each 400 us after the last: 2 ms of simulated time that
  // must not wait for 2 ms of wall time.
  Event e([&] {
    if (++fired < 5) s.schedule_in(e, 400_us);
  });
  s.schedule(e, Time::zero() + 400_us);
  const auto t0 = VirtualTimeExecutor::Clock::now();
  EXPECT_EQ(x.run_due(), 5u);
  EXPECT_EQ(fired, 5);
  EXPECT_EQ(s.now(), Time::zero() + 2_ms);
  EXPECT_LT(VirtualTimeExecutor::Clock::now() - t0, milliseconds(400));
  EXPECT_EQ(x.until_next(), VirtualTimeExecutor::Clock::duration::max());
}

TEST(VirtualTimeExecutor, TheClockStandsStillWithoutEvents) {
  Scheduler s;
  VirtualTimeExecutor x(s);
  std::this_thread::sleep_for(milliseconds(3));
  EXPECT_EQ(x.run_due(), 0u);
  EXPECT_EQ(s.now(), Time::zero());
}

TEST(VirtualTimeExecutor, ATimerWaitsUntilTheProgramsAreQuiet) {
  Scheduler s;
  VirtualTimeExecutor x(s, 1_ms, milliseconds(200), milliseconds(0));
  bool fired = false;
  Event timer([&] { fired = true; });
  s.schedule(timer, Time::zero() + 67_ms);  // a retransmission timeout
  x.touch();
  EXPECT_EQ(x.run_due(), 0u);
  EXPECT_FALSE(fired);
  EXPECT_GT(x.until_next(), milliseconds(0));
  EXPECT_LE(x.until_next(), milliseconds(200));
  while (!fired) {
    x.run_due();
    std::this_thread::sleep_for(milliseconds(2));
  }
  EXPECT_EQ(s.now(), Time::zero() + 67_ms);
  EXPECT_EQ(x.timers_fired(), 1u);
}

// A program that is quiet only because a loaded machine gives it no CPU has
// not been waiting: the timer (a CM request's retry, 6.4 s later) waits for it
// past the grace, and fires once the programs wait. (Before, quiet wall time
// alone fired it, and a starved rping server's reply came after the retry.)
TEST(VirtualTimeExecutor, ATimerWaitsForProgramsThatAreOnlySlow) {
  Scheduler s;
  VirtualTimeExecutor x(s, 1_ms, milliseconds(5), milliseconds(0));
  bool waiting = false, fired = false;
  int asked = 0;
  x.set_waiting([&] { return ++asked, waiting; });
  Event timer([&] { fired = true; });
  s.schedule(timer, Time::zero() + 6_s);
  x.touch();
  std::this_thread::sleep_for(milliseconds(10));  // past the grace
  EXPECT_EQ(x.run_due(), 0u);
  EXPECT_FALSE(fired);
  EXPECT_GT(asked, 0);
  EXPECT_EQ(x.until_next(), VirtualTimeExecutor::kRecheck);  // not zero: the daemon must not spin
  std::this_thread::sleep_for(milliseconds(10));
  EXPECT_EQ(x.run_due(), 0u);
  waiting = true;
  EXPECT_EQ(x.run_due(), 1u);
  EXPECT_TRUE(fired);
  EXPECT_EQ(x.timers_fired(), 1u);
}

TEST(VirtualTimeExecutor, AProgramThatActsHoldsBackTheTimerAndItsDoorbellsSettle) {
  Scheduler s;
  VirtualTimeExecutor x(s, 1_ms, milliseconds(100), milliseconds(20));
  bool fired = false;
  Event timer([&] { fired = true; });
  s.schedule(timer, Time::zero() + 10_ms);
  x.touch();
  EXPECT_TRUE(x.settling());
  for (int i = 0; i < 6; ++i) {  // 60 ms of a program acting every 10 ms
    std::this_thread::sleep_for(milliseconds(10));
    x.touch();
    x.run_due();
  }
  EXPECT_FALSE(fired);
  std::this_thread::sleep_for(milliseconds(25));
  EXPECT_FALSE(x.settling());
}

TEST(VirtualTimeExecutor, InboxWorkRunsAtThePresent) {
  Scheduler s;
  VirtualTimeExecutor x(s);
  Event e([] {});
  s.schedule(e, Time::zero() + 5_us);
  x.run_due();
  Time seen;
  std::thread other([&] { x.post([&] { seen = s.now(); }); });
  other.join();
  x.run_due();
  EXPECT_EQ(seen, Time::zero() + 5_us);
}
