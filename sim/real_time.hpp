// The real-time executor: the scheduler's events fire when the wall clock
// (steady_clock) reaches their time, scaled by a dilation factor (2 = simulated
// time runs at half speed). When the host cannot keep up, events fire late; the
// lateness (lag) is measured and reported, never hidden.
#pragma once

#include "sim/executor.hpp"

namespace rnicsim::sim {

class RealTimeExecutor final : public Executor {
public:
  // `dilation` >= 1e-3: wall time per unit of simulated time.
  explicit RealTimeExecutor(Scheduler& scheduler, double dilation = 1.0);

  // The simulated time the wall clock stands at now.
  Time wall_time() const { return to_sim(Clock::now()); }
  Time to_sim(Clock::time_point t) const;
  Clock::time_point to_wall(Time t) const;

  // Fires every event that is due, moves the clock to the wall clock, then runs
  // the inbox.
  uint64_t run_due() override;
  Clock::duration until_next() const override;
  void summarize(std::ostream& out) const override;

  double dilation() const { return dilation_; }

private:
  double dilation_;
  Clock::time_point start_;
};

}  // namespace rnicsim::sim
