// The virtual-time executor: simulated time moves only with the model's events,
// never with the wall clock. Events within `horizon` of the present fire at once,
// one after another, until none is that close (the model has settled); only then
// do the programs' doorbells and requests land, at a simulated time that does not
// depend on how fast the programs or the machine ran. A program's own time between
// two calls costs no simulated time. A later event (a retransmission, CM or
// time-wait timer) fires once the programs have been quiet for `grace` of wall
// time and wait for it (set_waiting: a thread that runs, or is starved of a
// CPU, may yet act), as it would fire on hardware while a program waits for
// it. A burst of
// doorbells (two threads: one re-arms its CQ, the other posts) lands at one
// simulated time: the daemon takes them once the programs have not acted for
// `settle` of wall time (settling()), or before it serves a request.
#pragma once

#include <functional>

#include "sim/executor.hpp"

namespace rnicsim::sim {

class VirtualTimeExecutor final : public Executor {
public:
  static constexpr Duration kHorizon = Duration::ms(1);
  static constexpr Clock::duration kGrace = std::chrono::milliseconds(50);
  static constexpr Clock::duration kSettle = std::chrono::milliseconds(3);

  explicit VirtualTimeExecutor(Scheduler& scheduler, Duration horizon = kHorizon, Clock::duration grace = kGrace,
                               Clock::duration settle = kSettle);

  // Runs the inbox, then the model until it settles (or for kRoundBudget of
  // wall time, so that a model that never settles still lets programs in).
  uint64_t run_due() override;
  Clock::duration until_next() const override;
  void touch() override { quiet_since_ = acted_ = Clock::now(); }
  bool settling() const override { return Clock::now() - acted_ < settle_; }
  Clock::duration since_acted() const override { return Clock::now() - acted_; }
  void summarize(std::ostream& out) const override;

  // Events that fired because the programs were quiet (timers).
  uint64_t timers_fired() const { return timers_fired_; }
  // Whether the programs wait (every thread asleep, or those that run have
  // had their share of CPU without acting): asked before a timer fires, and
  // while it says no, the timer waits, looking again every kRecheck. A
  // program starved of CPU on a loaded machine has not been quiet, only slow.
  void set_waiting(std::function<bool()> programs_wait) { programs_wait_ = std::move(programs_wait); }
  static constexpr Clock::duration kRecheck = std::chrono::milliseconds(1);

private:
  static constexpr Clock::duration kRoundBudget = std::chrono::milliseconds(5);
  // The grace has passed: fire the next timer, if the programs wait for it.
  bool timer_due();
  bool near() const { return !scheduler_.empty() && scheduler_.next_time() <= scheduler_.now() + horizon_; }

  Duration horizon_;
  Clock::duration grace_, settle_;
  Clock::time_point quiet_since_ = Clock::now(), acted_;  // acted_: a settle ago at first
  uint64_t timers_fired_ = 0;
  std::function<bool()> programs_wait_;
  bool held_ = false;  // the grace has passed and the programs were not waiting
};

}  // namespace rnicsim::sim
