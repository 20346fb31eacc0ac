#include "sim/scheduler.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ring_world.hpp"
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
  // Events scheduled for the present go to a heap of their own; with one actor
  // the order stays (time, order of scheduling): `again`, scheduled for 10 ns before time got there,
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

// Same-time events fire in the order of the actors that scheduled them, then of
// each actor's own count, not in the order they reached the queue.
TEST(Scheduler, TiesFireByTheSchedulingActorThenItsOwnOrder) {
  Scheduler s;
  std::vector<std::string> order;
  Event x([&] { order.push_back("x"); }, "x"), y([&] { order.push_back("y"); }, "y"),
      z([&] { order.push_back("z"); }, "z");
  Event by_two([&] { s.schedule(x, Time::zero() + 10_ns), s.schedule(z, Time::zero() + 10_ns); }, "two", Actor(2));
  Event by_one([&] { s.schedule(y, Time::zero() + 10_ns); }, "one", Actor(1));
  s.schedule(by_two, Time::zero() + 1_ns);  // schedules x and z first
  s.schedule(by_one, Time::zero() + 2_ns);  // then y
  s.run_until(Time::max());
  EXPECT_EQ(order, (std::vector<std::string>{"y", "x", "z"}));
  EXPECT_EQ(s.acting(), Actor());  // the outside again between events
  EXPECT_THROW(Actor(1u << 24), std::out_of_range);
}

// An event for the present takes a key like any other: one that actor 1
// schedules at 10 ns fires before actor 2's, scheduled for 10 ns long before,
// as it would had actor 1 scheduled it then (a first-come queue for the
// present would fire it after).
TEST(Scheduler, EventsForThePresentFireInKeyOrderWithTheHeapsOwn) {
  Scheduler s;
  std::vector<std::string> order;
  Event late([&] { order.push_back("two's"); }, "late"), soon([&] { order.push_back("one's present"); }, "soon");
  Event by_two([&] { s.schedule(late, Time::zero() + 10_ns); }, "two", Actor(2));
  Event by_one([&] {
    order.push_back("one");
    s.schedule(soon, s.now());
  }, "one", Actor(1));
  s.schedule(by_two, Time::zero() + 1_ns);
  s.schedule(by_one, Time::zero() + 10_ns);
  s.run_until(Time::max());
  EXPECT_EQ(order, (std::vector<std::string>{"one", "one's present", "two's"}));
  // A keyed event may arrive for the present, and is placed by its key too.
  Event keyed([&] { order.push_back("keyed"); }, "keyed"), plain([&] { order.push_back("plain"); }, "plain");
  s.schedule(plain, s.now());
  s.schedule_keyed(keyed, s.now(), 0);
  s.run_until(Time::max());
  EXPECT_EQ(order.back(), "plain");
  EXPECT_THROW(s.schedule_keyed(keyed, s.now() - 1_ns, 0), std::logic_error);
}


// The keys make the order a partitioned run fires in the same as one scheduler's,
// though crossing events reach their scheduler a window late.
TEST(Scheduler, ActorsSplitOverSchedulersSeeWhatOneSchedulerGivesThem) {
  const auto one = Ring(1, 1).run(Time::zero() + 600_ns);
  size_t ties = 0;
  for (const auto& log : one)
    for (size_t i = 1; i < log.size(); ++i) ties += log[i].substr(0, log[i].find(' ')) == log[i - 1].substr(0, log[i - 1].find(' '));
  EXPECT_GT(ties, 100u);  // plenty of same-time events to order
  EXPECT_GT(one[1].size(), 150u);
  for (uint32_t partitions : {2u, 3u, 5u}) EXPECT_EQ(Ring(partitions, 1).run(Time::zero() + 600_ns), one) << partitions;
}

// A partition takes actor 0's keys from its world's outside (one sequence for
// any partitioning) and refuses to fire the outside's events.
TEST(Scheduler, APartitionCountsTheOutsidesKeysAndRefusesItsEvents) {
  Scheduler outside, part;
  part.take_outside_keys_from(outside);
  EXPECT_THROW(outside.take_outside_keys_from(part), std::logic_error);
  EXPECT_THROW(part.take_outside_keys_from(part), std::logic_error);
  EXPECT_EQ(outside.next_key(), 0u);
  EXPECT_EQ(part.next_key(), 1u);  // actor 0's count, shared
  EXPECT_EQ(outside.next_key(), 2u);
  Event unit([] {}, "unit", Actor(4)), stray([] {}, "stray");
  part.schedule(unit, Time::zero() + 1_ns);
  part.schedule(stray, Time::zero() + 2_ns);
  EXPECT_TRUE(part.step());
  EXPECT_THROW(part.step(), std::logic_error);
}

TEST(Scheduler, AClockMovesOnlyWhereNothingPendingIsEarlier) {
  Scheduler s;
  Event e([] {});
  s.schedule(e, Time::zero() + 10_ns);
  s.move_to(Time::zero() + 10_ns);
  EXPECT_EQ(s.now(), Time::zero() + 10_ns);
  EXPECT_THROW(s.move_to(Time::zero() + 11_ns), std::logic_error);  // e would be in the past
  EXPECT_THROW(s.move_to(Time::zero() + 5_ns), std::logic_error);   // time goes forward
  EXPECT_TRUE(s.step());
  s.move_to(Time::zero() + 1_us);
  EXPECT_EQ(s.now(), Time::zero() + 1_us);
}
