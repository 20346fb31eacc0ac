#include "sim/virtual_time.hpp"

#include <stdexcept>

namespace rnicsim::sim {

VirtualTimeExecutor::VirtualTimeExecutor(Scheduler& scheduler, Duration horizon, Clock::duration grace,
                                         Clock::duration settle)
    : Executor(scheduler), horizon_(horizon), grace_(grace), settle_(settle), acted_(Clock::now() - settle) {
  if (horizon < Duration::zero() || grace < Clock::duration::zero() || settle < Clock::duration::zero())
    throw std::invalid_argument("a virtual clock needs a horizon and a grace of at least zero");
}

uint64_t VirtualTimeExecutor::run_due() {
  run_inbox();
  const uint64_t before = scheduler_.events_fired();
  const auto deadline = Clock::now() + kRoundBudget;
  bool spent = false;
  while (!spent) {
    for (uint32_t n = 1; near() && !spent; ++n) {
      scheduler_.step();
      spent = n % 1024 == 0 && Clock::now() > deadline;
    }
    if (spent || !timer_due()) break;
    scheduler_.step();  // a timer the programs wait for
    ++timers_fired_;
    quiet_since_ = Clock::now();
  }
  const uint64_t fired = scheduler_.events_fired() - before;
  if (fired > 0) quiet_since_ = Clock::now();
  return fired;
}

bool VirtualTimeExecutor::timer_due() {
  held_ = false;
  if (scheduler_.empty() || settling() || Clock::now() - quiet_since_ < grace_) return false;
  held_ = programs_wait_ && !programs_wait_();
  return !held_ && Clock::now() - quiet_since_ >= grace_;  // the look may have seen an act (touch)
}

VirtualTimeExecutor::Clock::duration VirtualTimeExecutor::until_next() const {
  const auto settle_left = acted_ + settle_ - Clock::now();
  if (settle_left > Clock::duration::zero()) return settle_left;
  if (scheduler_.empty()) return Clock::duration::max();
  if (near()) return Clock::duration::zero();
  const auto waited = Clock::now() - quiet_since_;
  if (waited < grace_) return grace_ - waited;
  return held_ ? kRecheck : Clock::duration::zero();
}

void VirtualTimeExecutor::summarize(std::ostream& out) const {
  out << "virtual clock: " << timers_fired_ << " events fired after the programs were quiet for "
      << std::chrono::duration_cast<std::chrono::milliseconds>(grace_).count() << " ms";
}

}  // namespace rnicsim::sim
