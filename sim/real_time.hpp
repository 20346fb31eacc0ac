// The real-time executor: the scheduler's events fire when the wall clock
// (steady_clock) reaches their time, scaled by a dilation factor (2 = simulated
// time runs at half speed). Work from other threads enters through a thread-safe
// inbox and runs at the simulated present. When the host cannot keep up, events
// fire late; the lateness (lag) is measured and reported, never hidden.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "sim/scheduler.hpp"
#include "sim/stats.hpp"

namespace rnicsim::sim {

class RealTimeExecutor {
public:
  using Clock = std::chrono::steady_clock;
  // `dilation` >= 1e-3: wall time per unit of simulated time.
  explicit RealTimeExecutor(Scheduler& scheduler, double dilation = 1.0);
  ~RealTimeExecutor();
  RealTimeExecutor(const RealTimeExecutor&) = delete;
  RealTimeExecutor& operator=(const RealTimeExecutor&) = delete;

  // The simulated time the wall clock stands at now.
  Time wall_time() const { return to_sim(Clock::now()); }
  Time to_sim(Clock::time_point t) const;
  Clock::time_point to_wall(Time t) const;

  // Runs the inbox, then fires every event that is due and moves the clock to the
  // wall clock. Returns the number of events fired.
  uint64_t run_due();
  // Wall-clock time until the next event is due: zero if one is due, max if none.
  Clock::duration until_next() const;

  // Thread-safe: `fn` runs on the executor's thread in the next run_due, at the
  // simulated present. The inbox file descriptor becomes readable.
  void post(std::function<void()> fn);
  // An eventfd that is readable while the inbox holds work (for poll()).
  int inbox_fd() const { return inbox_fd_; }

  double dilation() const { return dilation_; }
  // Lateness of the oldest due event at each run_due that found one, in
  // simulated picoseconds.
  const Histogram& lag_ps() const { return lag_; }
  Duration max_lag() const { return Duration::ps(max_lag_ps_); }

private:
  Scheduler& scheduler_;
  double dilation_;
  Clock::time_point start_;
  std::mutex inbox_mutex_;
  std::vector<std::function<void()>> inbox_, running_;
  int inbox_fd_ = -1;
  Histogram lag_;
  int64_t max_lag_ps_ = 0;
};

}  // namespace rnicsim::sim
