#include "sim/real_time.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

namespace rnicsim::sim {

RealTimeExecutor::RealTimeExecutor(Scheduler& scheduler, double dilation)
    : scheduler_(scheduler), dilation_(dilation) {
  if (!(dilation >= 1e-3)) throw std::invalid_argument("time dilation must be at least 0.001");
  // The wall clock's origin is now minus the scheduler's present, so a scheduler
  // that already ran picks up where it stands.
  start_ = Clock::now() - std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double, std::pico>(
                                  static_cast<double>(scheduler.now().picoseconds()) * dilation_));
  inbox_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (inbox_fd_ < 0) throw std::runtime_error("eventfd failed");
}

RealTimeExecutor::~RealTimeExecutor() {
  if (inbox_fd_ >= 0) close(inbox_fd_);
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
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    running_.swap(inbox_);
    // post() writes the eventfd under this lock whenever it adds work, so it
    // is readable exactly when there was work: a round with none makes no
    // system call.
    uint64_t drained = 0;
    if (!running_.empty() && read(inbox_fd_, &drained, sizeof drained) < 0) drained = 0;
  }
  const Time now = wall_time();
  if (!scheduler_.empty() && scheduler_.next_time() < now) {
    const int64_t late = (now - scheduler_.next_time()).picoseconds();
    lag_.record(static_cast<uint64_t>(late));
    max_lag_ps_ = std::max(max_lag_ps_, late);
  }
  const uint64_t before = scheduler_.events_fired();
  scheduler_.advance_to(now);
  for (auto& fn : running_) fn();
  running_.clear();
  return scheduler_.events_fired() - before;
}

RealTimeExecutor::Clock::duration RealTimeExecutor::until_next() const {
  if (scheduler_.empty()) return Clock::duration::max();
  const auto due = to_wall(scheduler_.next_time());
  const auto now = Clock::now();
  return due <= now ? Clock::duration::zero() : due - now;
}

void RealTimeExecutor::post(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(inbox_mutex_);
  inbox_.push_back(std::move(fn));
  const uint64_t one = 1;
  if (write(inbox_fd_, &one, sizeof one) < 0) { /* the counter is saturated: already readable */ }
}

}  // namespace rnicsim::sim
