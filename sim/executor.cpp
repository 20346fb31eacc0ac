#include "sim/executor.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

namespace rnicsim::sim {

Executor::Executor(Scheduler& scheduler) : scheduler_(scheduler) {
  inbox_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (inbox_fd_ < 0) throw std::runtime_error("eventfd failed");
}

Executor::~Executor() {
  if (inbox_fd_ >= 0) close(inbox_fd_);
}

std::vector<std::function<void()>>& Executor::take_inbox() {
  std::lock_guard<std::mutex> lock(inbox_mutex_);
  running_.clear();
  running_.swap(inbox_);
  // post() writes the eventfd under this lock whenever it adds work, so it is
  // readable exactly when there was work: a round with none makes no system call.
  uint64_t drained = 0;
  if (!running_.empty() && read(inbox_fd_, &drained, sizeof drained) < 0) drained = 0;
  return running_;
}

void Executor::run_inbox() {
  for (auto& fn : take_inbox()) fn();
  running_.clear();
}

void Executor::record_lag(int64_t late_ps) {
  lag_.record(static_cast<uint64_t>(late_ps));
  max_lag_ps_ = std::max(max_lag_ps_, late_ps);
}

void Executor::post(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(inbox_mutex_);
  inbox_.push_back(std::move(fn));
  const uint64_t one = 1;
  if (write(inbox_fd_, &one, sizeof one) < 0) { /* the counter is saturated: already readable */ }
}

}  // namespace rnicsim::sim
