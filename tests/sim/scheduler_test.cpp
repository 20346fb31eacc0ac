#include "sim/scheduler.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/simulator.hpp"

using namespace rnicsim::sim;
using namespace rnicsim::sim::literals;

TEST(Scheduler, FiresInTimeOrderWithTiesInInsertionOrder) {
  Scheduler s;
  std::vector<std::string> order;
  Event a([&] { order.push_back("a"); }), b([&] { order.push_back("b"); }), c([&] { order.push_back("c"); }),
      d([&] { order.push_back("d"); });
  s.schedule(a, Time::zero() + 10_ns);
  s.schedule(b, Time::zero() + 5_ns);
  s.schedule(c, Time::zero() + 10_ns);
  s.schedule(d, Time::zero() + 10_ns);
  s.run_until(Time::max());
  EXPECT_EQ(order, (std::vector<std::string>{"b", "a", "c", "d"}));
  EXPECT_EQ(s.now(), Time::zero() + 10_ns);
  EXPECT_EQ(s.events_fired(), 4u);
}

TEST(Scheduler, CancelAndReschedule) {
  Scheduler s;
  int fired = 0;
  Event a([&] { ++fired; }), b([&] { fired += 10; });
  s.schedule(a, Time::zero() + 1_us);
  s.schedule(b, Time::zero() + 2_us);
  s.cancel(a);
  EXPECT_FALSE(a.scheduled());
  s.reschedule(b, Time::zero() + 3_us);
  s.run_until(Time::zero() + 2500_ns);
  EXPECT_EQ(fired, 0);
  s.run_until(Time::max());
  EXPECT_EQ(fired, 10);
  EXPECT_EQ(s.now(), Time::zero() + 3_us);
}

TEST(Scheduler, SelfReschedulingEventAndRunUntilBound) {
  Scheduler s;
  int ticks = 0;
  Event* self = nullptr;
  Event tick([&] {
    ++ticks;
    s.schedule_in(*self, 1_us);
  });
  self = &tick;
  s.schedule(tick, Time::zero());
  s.run_until(Time::zero() + 10_us);
  EXPECT_EQ(ticks, 11);  // t = 0, 1, ..., 10 us
  EXPECT_TRUE(tick.scheduled());
}

TEST(Scheduler, RejectsDoubleScheduleAndPast) {
  Scheduler s;
  Event a([] {}), b([] {});
  s.schedule(a, Time::zero() + 1_us);
  EXPECT_THROW(s.schedule(a, Time::zero() + 2_us), std::logic_error);
  s.run_until(Time::max());
  EXPECT_THROW(s.schedule(b, Time::zero()), std::logic_error);
}

TEST(Scheduler, DestroyedEventLeavesQueue) {
  Scheduler s;
  int fired = 0;
  {
    Event gone([&] { ++fired; });
    s.schedule(gone, Time::zero() + 1_us);
  }
  EXPECT_TRUE(s.empty());
  s.run_until(Time::max());
  EXPECT_EQ(fired, 0);
}

TEST(Scheduler, ManyEventsStayOrdered) {
  Scheduler s;
  RandomStream r(7, "test");
  std::vector<std::unique_ptr<Event>> events;
  Time last = Time::zero();
  bool ordered = true;
  for (int i = 0; i < 2000; ++i) {
    events.push_back(std::make_unique<Event>([&] {
      if (s.now() < last) ordered = false;
      last = s.now();
    }));
    s.schedule(*events.back(), Time::from_ps(static_cast<int64_t>(r.uniform(1'000'000))));
  }
  for (int i = 0; i < 2000; i += 3) s.cancel(*events[static_cast<size_t>(i)]);
  s.run_until(Time::max());
  EXPECT_TRUE(ordered);
  EXPECT_EQ(s.events_fired(), 2000u - 667u);
}
