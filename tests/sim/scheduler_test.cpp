#include "sim/scheduler.hpp"

#include <gtest/gtest.h>

#include <memory>
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

TEST(Scheduler, EventsForThePresentFireAfterEarlierOnesOfTheSameTime) {
  // Events scheduled for the present skip the heap; the order stays (time,
  // order of scheduling): `again`, scheduled for 10 ns before time got there,
  // fires before c and e, scheduled at 10 ns; cancelled d never fires.
  Scheduler s;
  std::vector<std::string> order;
  Event b([&] { order.push_back("b"); }), c([&] { order.push_back("c"); }), d([&] { order.push_back("d"); }),
      e([&] { order.push_back("e"); }), late([&] { order.push_back("late"); });
  Event a([&] {
    order.push_back("a");
    s.schedule(c, s.now());  // now: after b, which was scheduled for this time before
    s.schedule(d, s.now());
    s.schedule(e, s.now());
    s.cancel(d);
    s.schedule(late, s.now() + 1_ns);
  });
  Event again([&] {
    order.push_back("again");
    s.schedule(b, s.now());  // b fired already at this time: it comes again, last
  });
  s.schedule(a, Time::zero() + 10_ns);
  s.schedule(b, Time::zero() + 10_ns);
  s.run_until(Time::zero() + 5_ns);
  EXPECT_EQ(s.pending(), 2u);
  s.schedule(again, Time::zero() + 10_ns);
  s.run_until(Time::zero() + 10_ns);
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "again", "c", "e", "b"}));
  EXPECT_FALSE(d.scheduled());
  EXPECT_EQ(s.now(), Time::zero() + 10_ns);
  EXPECT_EQ(s.pending(), 1u);
  EXPECT_EQ(s.next_time(), Time::zero() + 11_ns);
  s.run_until(Time::max());
  EXPECT_EQ(order.back(), "late");
  EXPECT_TRUE(s.empty());
}

TEST(Scheduler, CancelledAndDestroyedEventsOfThePresent) {
  Scheduler s;
  int fired = 0;
  auto a = std::make_unique<Event>([&] { ++fired; });
  Event b([&] { fired += 10; });
  s.schedule(*a, s.now());
  s.schedule(b, s.now());
  EXPECT_EQ(s.pending(), 2u);
  a.reset();  // leaves the queue
  EXPECT_EQ(s.pending(), 1u);
  s.cancel(b);
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.next_time(), Time::max());
  s.schedule(b, s.now());
  s.run_until(Time::max());
  EXPECT_EQ(fired, 10);
  // A scheduler destroyed with events waiting leaves them idle.
  Event c([] {});
  {
    Scheduler t;
    t.schedule(c, t.now());
  }
  EXPECT_FALSE(c.scheduled());
}
