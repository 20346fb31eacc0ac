#include "sim/scheduler.hpp"

#include <stdexcept>

namespace rnicsim::sim {

Event::~Event() {
  if (owner_ != nullptr) owner_->cancel(*this);
}

Scheduler::~Scheduler() {
  for (Event* e : heap_) {
    e->heap_index_ = Event::kIdle;
    e->owner_ = nullptr;
  }
}

void Scheduler::schedule(Event& e, Time t) {
  if (e.scheduled()) throw std::logic_error("event scheduled twice: " + std::string(e.name()));
  if (t < now_) throw std::logic_error("event scheduled in the past: " + std::string(e.name()));
  e.when_ = t;
  e.seq_ = next_seq_++;
  e.owner_ = this;
  heap_.push_back(&e);
  e.heap_index_ = static_cast<uint32_t>(heap_.size() - 1);
  sift_up(e.heap_index_);
}

void Scheduler::reschedule(Event& e, Time t) {
  cancel(e);
  schedule(e, t);
}

void Scheduler::cancel(Event& e) {
  if (!e.scheduled()) return;
  remove_at(e.heap_index_);
}

void Scheduler::remove_at(uint32_t i) {
  Event* victim = heap_[i];
  const uint32_t last = static_cast<uint32_t>(heap_.size() - 1);
  if (i != last) {
    place(i, heap_[last]);
    heap_.pop_back();
    sift_down(i);
    sift_up(i);
  } else {
    heap_.pop_back();
  }
  victim->heap_index_ = Event::kIdle;
  victim->owner_ = nullptr;
}

void Scheduler::sift_up(uint32_t i) {
  Event* e = heap_[i];
  while (i > 0) {
    const uint32_t parent = (i - 1) / 2;
    if (!before(e, heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, e);
}

void Scheduler::sift_down(uint32_t i) {
  const uint32_t n = static_cast<uint32_t>(heap_.size());
  Event* e = heap_[i];
  for (;;) {
    uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
    if (!before(heap_[child], e)) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, e);
}

bool Scheduler::step() {
  if (heap_.empty()) return false;
  Event* e = heap_.front();
  remove_at(0);
  now_ = e->when_;
  ++fired_;
  e->action_();
  return true;
}

void Scheduler::run_until(Time until) {
  stop_requested_ = false;
  while (!heap_.empty() && heap_.front()->when_ <= until && !stop_requested_) step();
}

}  // namespace rnicsim::sim
