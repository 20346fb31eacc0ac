#include "sim/scheduler.hpp"

#include <stdexcept>
#include <string>

namespace rnicsim::sim {

Event::~Event() {
  if (owner_ != nullptr) owner_->cancel(*this);
}

Scheduler::~Scheduler() {
  for (const Slot& s : heap_) make_idle(*s.event);
  for (size_t i = now_head_; i < now_queue_.size(); ++i)
    if (Event* e = now_queue_[i]) make_idle(*e);
}

void Scheduler::refuse(const Event& e, Time t) const {
  if (e.scheduled()) throw std::logic_error("event scheduled twice: " + std::string(e.name()));
  (void)t;
  throw std::logic_error("event scheduled in the past (or a keyed one at the present): " + std::string(e.name()));
}

void Scheduler::refuse_count() const {
  throw std::overflow_error("an actor scheduled 2^40 events: its keys are spent");
}

void Scheduler::schedule_keyed(Event& e, Time t, uint64_t key) {
  if (e.scheduled() || t <= now_) [[unlikely]] refuse(e, t);
  e.when_ = t;
  e.owner_ = this;
  push(e, t, key);
}

void Scheduler::reschedule(Event& e, Time t) {
  cancel(e);
  schedule(e, t);
}

void Scheduler::sift_down(uint32_t i) {
  const uint32_t n = static_cast<uint32_t>(heap_.size());
  const Slot s = heap_[i];
  for (;;) {
    uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
    if (!before(heap_[child], s)) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, s);
}

Event* Scheduler::pop_front() {
  Event* e = heap_.front().event;
  const Slot last = heap_.back();
  heap_.pop_back();
  const uint32_t n = static_cast<uint32_t>(heap_.size());
  if (n > 0) {
    // Floyd: move the hole at the root down to a leaf along the earlier children,
    // then put the last slot there and sift it up. The last slot is usually among
    // the latest events, so this saves a comparison per level.
    uint32_t hole = 0;
    for (;;) {
      uint32_t child = 2 * hole + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      place(hole, heap_[child]);
      hole = child;
    }
    sift_up(hole, last);
  }
  make_idle(*e);
  return e;
}

void Scheduler::remove_at(uint32_t i) {
  Event* victim = heap_[i].event;
  const uint32_t last = static_cast<uint32_t>(heap_.size() - 1);
  if (i != last) {
    place(i, heap_[last]);
    heap_.pop_back();
    sift_down(i);
    sift_up(i, heap_[i]);
  } else {
    heap_.pop_back();
  }
  make_idle(*victim);
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
