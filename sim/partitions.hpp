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
//
// Two things are not a partition's own. The outside (actor 0: workload
// starts, faults, sampling) has a scheduler of its own; its events fire
// between windows, before every event of their time, with every partition's
// clock moved to it, so they may act on any partition. And a run may go in
// stages that end together: when every partition's share of a stage is done,
// each finishes the instant the last share ended in, and the stage's end
// (the next workload's start, or the run's end) acts on the world at rest.
// Both happen at points that no partitioning moves.
//
// Across ranks (rank_link.hpp: processes under mpirun), each rank holds a
// share of the partitions and runs them on its threads as above; at the
// window's end, before the landing, the outboxes addressed to other ranks'
// partitions travel as bytes in one exchange, whose round also agrees on the
// next window's start and on the stage's end and last instant. The outside
// is the same on every rank and acts on its partitions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "sim/scheduler.hpp"
#include "sim/time.hpp"

namespace rnicsim::sim {

class FirstError;
class RankLink;

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
  // What a partition needs across ranks: the bytes it sent partition `to` (of
  // another rank) in the window just run; a place for the bytes partition
  // `from` (of another rank) sent it, which stay valid until the next window
  // runs, for its land() to read; and the earliest arrival of all it sent in
  // that window, to any partition (Time::max() for none), which with every
  // partition's next event says where the next window starts.
  struct Mail {
    std::function<std::span<const std::byte>(size_t to)> outbox;
    std::function<void(size_t from, std::span<const std::byte>)> inbox;
    std::function<Time()> earliest;
  };
  // Stages, for a run that ends (or moves on) when work is done rather than
  // at a time. `done(p)`: partition p's share of the current stage is done
  // and stays so until the stage ends; the event that finishes it calls its
  // scheduler's stop(), so that the partition waits there. `end(t)`: every
  // share is done and every event at `t` (the latest finish) has fired;
  // starts the next stage, or returns false to end the run.
  struct Stages {
    std::function<bool(size_t partition)> done;
    std::function<bool(Time)> end;
  };
  // `lookahead` > 0; `threads` >= 1 (one: no thread is started).
  Partitions(Duration lookahead, unsigned threads);
  // Across `ranks`: the world has `partitions` partitions, and this rank
  // holds those whose number modulo the rank count is its rank (rank_of),
  // added in ascending order. Call before add(). Without it one rank holds all.
  void set_ranks(RankLink& ranks, size_t partitions);
  static int rank_of(size_t partition, int ranks) { return static_cast<int>(partition % static_cast<size_t>(ranks)); }
  void add(Partition p, Mail mail = {});
  // This rank's partitions (every partition without ranks).
  size_t size() const { return parts_.size(); }
  // The outside's scheduler; partitions added before or after take actor 0's
  // keys from it (Scheduler::take_outside_keys_from).
  void set_outside(Scheduler& outside);
  void set_stages(Stages stages);
  // Called between windows, on the caller's thread, while no partition runs
  // (progress reports).
  void set_between(std::function<void()> between) { between_ = std::move(between); }

  // Runs every partition until no event at or before `end` is left anywhere
  // (in a scheduler, an outbox or the outside), or a stage's end ends the
  // run; each scheduler's time then stands at the last event it fired.
  void run_until(Time end);
  // Whether the last run was ended by a stage's end.
  bool ended() const { return ended_; }
  // Windows run so far (the empty stretches skipped are not counted).
  uint64_t windows() const { return windows_; }
  // The events of each window's busiest partition of this rank, summed over
  // the windows: the work a window waits for, with one partition per thread.
  uint64_t busiest_events() const { return busiest_events_; }

private:
  // One thread's part of a window (of `threads`): clears its partitions'
  // outboxes and runs those with work in the stage to the window's bound;
  // then, if asked, the second run; then, past a barrier, lands theirs.
  void run_phase(unsigned thread, unsigned threads);
  void second_phase(unsigned thread, unsigned threads);
  void land_phase(unsigned thread, unsigned threads);
  // Between the barriers, on one thread. After the run: what this rank does
  // before the exchange (busy_, deferred_, resume_here_); then the exchange,
  // which decides the rest (second_round_, finish_, instant_); and the
  // second exchange. After the landing: the stage's end, the outside's events
  // and the next window (false: the run is over).
  void decide_here();
  void first_exchange();
  void second_exchange();
  bool between_windows(Time end);
  void end_stage();
  // Adds the window just run's busiest partition's events to busiest_events_.
  void count_busiest();
  // Rethrows what a thread met; across ranks, ends every rank with it first.
  void rethrow(const FirstError& error);
  // Lets the outside act, then sets the next window's bound (false: none).
  bool next_window(Time end);
  // Across ranks: sends the outboxes addressed to other ranks (if `send`)
  // and hands each partition what reached it (between the last run and the
  // landing), `received` holding it; `values` go in as this rank's and come
  // out as the least of every rank's, values[0] being filled here with where
  // the next window may start. In one process, only values[0] is filled.
  void cross_ranks(bool send, std::vector<std::vector<std::byte>>& received, std::span<int64_t> values);
  // The least or greatest of `v` over ranks (`v` itself in one process).
  int64_t least(int64_t v) const;
  int64_t greatest(int64_t v) const;
  // Partition number `i` of this rank's in the world.
  size_t number(size_t i) const { return first_ + i * stride_; }
  // Fires the outside's events that come before every partition's (`first`,
  // kept up to date), up to `end`.
  void fire_outside(Time end, std::optional<Time>& first);
  // Moves every partition's clock to `t` where nothing pending is earlier.
  void move_clocks_to(Time t);
  // The earliest pending event of any partition of any rank (what crossed in
  // the last window has landed by then; across ranks, as the exchange agreed
  // it, once); none when none is. And of this rank's partitions.
  std::optional<Time> next_start();
  Time next_here() const;
  // The last time a window from `start` runs to: its end, the outside's next
  // event's time (exclusive), or `end`.
  Time bound(Time start, Time end) const;

  Duration lookahead_;
  unsigned threads_;
  std::vector<Partition> parts_;  // this rank's
  std::vector<Mail> mail_;
  RankLink* ranks_ = nullptr;     // none: one process
  size_t world_parts_ = 0, first_ = 0, stride_ = 1;
  std::vector<std::vector<std::byte>> sending_, received_, received_again_;  // the window's exchanges, by rank
  // The next window's start as the last exchange agreed it (none pending:
  // Time::max()), good until the outside acts or a stage ends.
  std::optional<Time> agreed_start_;
  Scheduler* outside_ = nullptr;
  Stages stages_;
  std::function<void()> between_;
  // The current window and stage.
  Time window_bound_;
  bool busy_ = false, deferred_ = false, resume_here_ = false, second_round_ = false, finish_ = false;
  std::vector<char> waiting_;                   // per partition: its share is done, it ran no further
  std::vector<std::optional<Time>> finished_;  // per partition: when its share of the stage finished
  std::optional<Time> instant_;                // once every share is: the latest of those
  bool over_ = false, ended_ = false;
  uint64_t windows_ = 0;
  std::vector<uint64_t> fired_;  // per partition: its events when the last window ended
  uint64_t busiest_events_ = 0;
};

}  // namespace rnicsim::sim
