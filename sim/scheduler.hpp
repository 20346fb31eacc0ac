// The discrete-event kernel: events are members of the components that own them
// (gem5 style), so scheduling never allocates. The queue is an indexed binary heap
// ordered by (time, insertion sequence): a run is a pure function of its inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace rnicsim::sim {

class Scheduler;

// One pending action of a component. An event is either idle or scheduled once;
// scheduling a scheduled event is an error (use reschedule). The callback is bound
// at construction, so firing costs one indirect call.
class Event {
public:
  explicit Event(std::function<void()> action, std::string_view name = "event")
      : action_(std::move(action)), name_(name) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  bool scheduled() const { return heap_index_ != kIdle; }
  Time when() const { return when_; }
  std::string_view name() const { return name_; }

private:
  friend class Scheduler;
  static constexpr uint32_t kIdle = UINT32_MAX;
  std::function<void()> action_;
  std::string_view name_;
  Scheduler* owner_ = nullptr;
  Time when_;
  uint64_t seq_ = 0;
  uint32_t heap_index_ = kIdle;
};

class Scheduler {
public:
  Scheduler() = default;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  ~Scheduler();

  Time now() const { return now_; }

  // Schedules an idle event at absolute time `t` (not before now).
  void schedule(Event& e, Time t);
  void schedule_in(Event& e, Duration d) { schedule(e, now_ + d); }
  // Moves an event (scheduled or not) to time `t`.
  void reschedule(Event& e, Time t);
  // Removes a scheduled event; a no-op for an idle one.
  void cancel(Event& e);

  bool empty() const { return heap_.empty(); }
  size_t pending() const { return heap_.size(); }
  Time next_time() const { return heap_.empty() ? Time::max() : heap_.front()->when_; }

  // Fires the earliest event. Returns false when the queue is empty.
  bool step();
  // Fires events until the queue is empty or the next event is after `until`;
  // time then stands at min(until, time of the last event fired) — never past `until`.
  void run_until(Time until);
  // Stops run_until after the current event.
  void stop() { stop_requested_ = true; }

  uint64_t events_fired() const { return fired_; }

private:
  bool before(const Event* a, const Event* b) const {
    return a->when_ < b->when_ || (a->when_ == b->when_ && a->seq_ < b->seq_);
  }
  void sift_up(uint32_t i);
  void sift_down(uint32_t i);
  void place(uint32_t i, Event* e) { heap_[i] = e; e->heap_index_ = i; }
  void remove_at(uint32_t i);

  std::vector<Event*> heap_;
  Time now_;
  uint64_t next_seq_ = 0;
  uint64_t fired_ = 0;
  bool stop_requested_ = false;
};

}  // namespace rnicsim::sim
