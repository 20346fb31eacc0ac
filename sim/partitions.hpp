// Partitions of one world, each with a scheduler of its own, run side by side
// in conservative windows (the granted-time windows of ns-3's distributed
// engine and of Unison): every partition runs its events up to the window's
// end, then each lands what the others sent it in that window, then the next
// window begins. The window is the lookahead: the smallest delay of a link
// between partitions, so nothing sent in a window arrives in it. Empty
// stretches are skipped: a window starts at the earliest pending event.
//
// Partitions go to worker threads (partition p to thread p mod T), more
// partitions than threads where that balances the load. What a partition
// sends waits in its own outbox until every partition has run; the landing
// phase only reads outboxes, and each partition clears its own after the
// next barrier. Events carry their keys (scheduler.hpp), so the order within
// each partition, and hence every result, is the same for any partition and
// thread count.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "sim/scheduler.hpp"
#include "sim/time.hpp"

namespace rnicsim::sim {

class Partitions {
public:
  struct Partition {
    Scheduler* scheduler = nullptr;
    // Lands what the other partitions sent this one in the window just run
    // (reads their outboxes, schedules keyed events here). Runs on this
    // partition's thread, while no partition runs.
    std::function<void()> land;
    // Empties this partition's outbox, which every landing has read (before
    // the partition runs its next window, and at the end).
    std::function<void()> clear;
  };
  // `lookahead` > 0; `threads` >= 1 (one: no thread is started).
  Partitions(Duration lookahead, unsigned threads);
  void add(Partition p);
  size_t size() const { return parts_.size(); }

  // Runs every partition until no event at or before `end` is left anywhere
  // (in a scheduler or in an outbox); each scheduler's time then stands at
  // the last event it fired.
  void run_until(Time end);
  // Windows run so far (the empty stretches skipped are not counted).
  uint64_t windows() const { return windows_; }

private:
  // One thread's part of a window (of `threads`): clears its partitions'
  // outboxes and runs them to `bound`; then, past a barrier, lands theirs.
  void run_phase(unsigned thread, unsigned threads, Time bound);
  void land_phase(unsigned thread, unsigned threads);
  // The next window's start: the earliest pending event of any partition
  // (what crossed in the last window has landed by then); none when none is.
  std::optional<Time> next_start() const;
  // The last time a window from `start` runs to: its end, or `end`.
  Time bound(Time start, Time end) const;

  Duration lookahead_;
  unsigned threads_;
  std::vector<Partition> parts_;
  uint64_t windows_ = 0;
};

}  // namespace rnicsim::sim
