// How emulation mode drives the scheduler: an executor decides when events fire
// relative to the wall clock (real_time.hpp: when the wall clock reaches them;
// virtual_time.hpp: as soon as the model is ready). Work from other threads
// enters through a thread-safe inbox and runs at the simulated present.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <ostream>
#include <vector>

#include "sim/scheduler.hpp"
#include "sim/stats.hpp"

namespace rnicsim::sim {

class Executor {
public:
  using Clock = std::chrono::steady_clock;
  explicit Executor(Scheduler& scheduler);
  virtual ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs the inbox and fires the events that are due. Returns how many fired.
  virtual uint64_t run_due() = 0;
  // Wall-clock time until an event is due: zero if one is due, max if none.
  virtual Clock::duration until_next() const = 0;
  // A program acted (a doorbell, a request).
  virtual void touch() {}
  // Whether the programs' latest calls still wait to land together (see
  // virtual_time.hpp); a real-time clock takes each at once.
  virtual bool settling() const { return false; }
  // Wall time since a program last acted (virtual clock; zero on a real one).
  virtual Clock::duration since_acted() const { return Clock::duration::zero(); }
  // One line on how the clock kept up, for the daemon's summary.
  virtual void summarize(std::ostream& out) const = 0;

  // Thread-safe: `fn` runs on the executor's thread in the next run_due, at the
  // simulated present. The inbox file descriptor becomes readable.
  void post(std::function<void()> fn);
  // An eventfd that is readable while the inbox holds work (for poll()).
  int inbox_fd() const { return inbox_fd_; }

  // Lateness of the oldest due event at each run_due that found one, in
  // simulated picoseconds (only a clock that follows the wall can be late).
  const Histogram& lag_ps() const { return lag_; }
  Duration max_lag() const { return Duration::ps(max_lag_ps_); }

protected:
  // Takes the inbox's work; the caller runs it (run_inbox does, now).
  std::vector<std::function<void()>>& take_inbox();
  void run_inbox();
  void record_lag(int64_t late_ps);

  Scheduler& scheduler_;

private:
  std::mutex inbox_mutex_;
  std::vector<std::function<void()>> inbox_, running_;
  int inbox_fd_ = -1;
  Histogram lag_;
  int64_t max_lag_ps_ = 0;
};

}  // namespace rnicsim::sim
