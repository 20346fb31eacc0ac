#include "sim/real_time.hpp"

#include <algorithm>
#include <stdexcept>

namespace rnicsim::sim {

RealTimeExecutor::RealTimeExecutor(Scheduler& scheduler, double dilation)
    : Executor(scheduler), dilation_(dilation) {
  if (!(dilation >= 1e-3)) throw std::invalid_argument("time dilation must be at least 0.001");
  // The wall clock's origin is now minus the scheduler's present, so a scheduler
  // that already ran picks up where it stands.
  start_ = Clock::now() - std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double, std::pico>(
                                  static_cast<double>(scheduler.now().picoseconds()) * dilation_));
}
Time RealTimeExecutor::to_sim(Clock::time_point t) const {
  const double wall_ps = std::chrono::duration<double, std::pico>(t - start_).count();
  return Time::from_ps(static_cast<int64_t>(std::max(0.0, wall_ps / dilation_)));
}

RealTimeExecutor::Clock::time_point RealTimeExecutor::to_wall(Time t) const {
  return start_ + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double, std::pico>(static_cast<double>(t.picoseconds()) * dilation_));
}

uint64_t RealTimeExecutor::run_due() {
  auto& work = take_inbox();
  const Time now = wall_time();
  if (!scheduler_.empty() && scheduler_.next_time() < now) record_lag((now - scheduler_.next_time()).picoseconds());
  const uint64_t before = scheduler_.events_fired();
  scheduler_.advance_to(now);
  for (auto& fn : work) fn();
  work.clear();
  return scheduler_.events_fired() - before;
}

RealTimeExecutor::Clock::duration RealTimeExecutor::until_next() const {
  if (scheduler_.empty()) return Clock::duration::max();
  const auto due = to_wall(scheduler_.next_time());
  const auto now = Clock::now();
  return due <= now ? Clock::duration::zero() : due - now;
}

void RealTimeExecutor::summarize(std::ostream& out) const {
  out << "real-time clock (dilation " << dilation_ << "): lag p50 "
      << to_string(Duration::ps(static_cast<int64_t>(lag_ps().percentile(0.5)))) << " p99 "
      << to_string(Duration::ps(static_cast<int64_t>(lag_ps().percentile(0.99)))) << " max " << to_string(max_lag())
      << " (" << lag_ps().count() << " late wake-ups)";
}

}  // namespace rnicsim::sim
