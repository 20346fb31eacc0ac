// The daemon's side of the doorbells: the producer indices and CQ arm requests
// programs publish in their doorbell records, read and rung on the NICs.
#pragma once

#include <chrono>
#include <cstdint>

#include "emulation/registry.hpp"
#include "emulation/serve_options.hpp"
#include "emulation/session.hpp"
#include "sim/executor.hpp"

namespace rnicsim::emulation {

class DoorbellScanner {
public:
  DoorbellScanner(Registry& registry, sim::Executor& executor, const Sessions& sessions, ClockMode clock,
                  std::chrono::microseconds settle)
      : registry_(registry), executor_(executor), sessions_(sessions), clock_(clock), settle_(settle) {}
  // Rings what changed since the last scan (on the virtual clock: the values
  // noticed); whether anything had.
  bool scan();
  // Reads every doorbell counter into its queue's `noticed` value; whether one
  // changed since the last look.
  bool notice();
  // Scans the doorbells. On the virtual clock it takes the values noticed, once
  // they have not changed for the executor's settle time: a burst of doorbells
  // lands at one simulated time, in the scan's order, whatever order the
  // program's threads rang in.
  bool take();
  // Whether the programs are done acting (virtual clock): every thread slept
  // at one instant with no request on its way, or the threads that run have
  // used their CPU time's worth since the programs last acted. Ends a burst of
  // doorbells, and lets a timer fire once the programs have been quiet.
  bool programs_done();
  // Tells the programs the daemon sleeps: they ring the wake-up eventfd.
  void set_sleeping(bool on);
  // Tells the programs that programs spin on every CPU: their empty polls do
  // not yield (verbs_proto::SegmentHeader::cpus_contended).
  void set_contended(bool on);
  uint64_t scans_with_work() const { return scans_with_work_; }

private:
  bool scan_host(HostState& h);
  bool asleep_at_once(const ThreadsState& first);
  Registry& registry_;
  sim::Executor& executor_;
  const Sessions& sessions_;
  ClockMode clock_;
  std::chrono::microseconds settle_;
  uint64_t scans_with_work_ = 0;
  // The programs' CPU time when they last acted (taken once that act settled),
  // and since_acted() at the last look: a smaller one is a new act.
  sim::Executor::Clock::duration baseline_acted_ = sim::Executor::Clock::duration::max();
  uint64_t baseline_cpu_ns_ = 0;
};

}  // namespace rnicsim::emulation
