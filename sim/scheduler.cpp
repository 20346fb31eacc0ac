#include "sim/scheduler.hpp"

#include <stdexcept>
#include <string>

namespace rnicsim::sim {

Event::~Event() {
  if (owner_ != nullptr) owner_->cancel(*this);
}

Scheduler::~Scheduler() {
  for (const SlotHeap* h : {&later_, &present_})
    for (const QueueSlot& s : h->slots()) s.event->make_idle();
}

void Scheduler::refuse(const Event& e) const {
  if (e.scheduled()) throw std::logic_error("event scheduled twice: " + std::string(e.name()));
  throw std::logic_error("event scheduled in the past: " + std::string(e.name()));
}

void Scheduler::refuse_count() const {
  throw std::overflow_error("an actor scheduled 2^40 events: its keys are spent");
}

void Scheduler::reschedule(Event& e, Time t) {
  cancel(e);
  schedule(e, t);
}

void SlotHeap::place(uint32_t i, const QueueSlot& s) {
  slots_[i] = s;
  s.event->heap_index_ = tag_ | i;
}

void SlotHeap::sift_down(uint32_t i) {
  const uint32_t n = static_cast<uint32_t>(slots_.size());
  const QueueSlot s = slots_[i];
  while (kArity * i + 1 < n) {
    const uint32_t child = earliest_child(i, n);
    if (!(slots_[child] < s)) break;
    place(i, slots_[child]);
    i = child;
  }
  place(i, s);
}

Event* SlotHeap::pop() {
  Event* e = slots_.front().event;
  const QueueSlot last = slots_.back();
  slots_.pop_back();
  const uint32_t n = static_cast<uint32_t>(slots_.size());
  if (n > 0) {
    // Floyd: move the hole at the root down to a leaf along the earlier children,
    // then put the last slot there and sift it up. The last slot is usually among
    // the latest events, so this saves a comparison per level.
    uint32_t hole = 0;
    while (kArity * hole + 1 < n) {
      const uint32_t child = earliest_child(hole, n);
      place(hole, slots_[child]);
      hole = child;
    }
    sift_up(hole, last);
  }
  e->make_idle();
  return e;
}

void SlotHeap::remove_at(uint32_t i) {
  Event* victim = slots_[i].event;
  const uint32_t last = static_cast<uint32_t>(slots_.size() - 1);
  if (i != last) {
    place(i, slots_[last]);
    slots_.pop_back();
    sift_down(i);
    sift_up(i, slots_[i]);
  } else {
    slots_.pop_back();
  }
  victim->make_idle();
}

void Scheduler::meet_actor() {
  if (acting_.id() == 0) {
    if (outside_count_ != &outside_scheduled_) throw std::logic_error("an event of the outside fired in a partition");
    return;
  }
  scheduled_by_.resize(acting_.id() + 1);
}

void Scheduler::move_to(Time t) {
  if (t < now_ || (!empty() && next_time() < t)) throw std::logic_error("a clock moved past pending events");
  now_ = t;
}

void Scheduler::take_outside_keys_from(Scheduler& outside) {
  if (&outside == this || outside.outside_count_ != &outside.outside_scheduled_)
    throw std::logic_error("the outside of partitions is a scheduler of its own");
  outside_count_ = &outside.outside_scheduled_;
}

void Scheduler::run_until(Time until) {
  stop_requested_ = false;
  while (!stop_requested_ && !empty() && next_time() <= until) step();
}

void Scheduler::advance_to(Time t) {
  run_until(t);
  if (!stop_requested_ && t > now_) now_ = t;
}

}  // namespace rnicsim::sim
