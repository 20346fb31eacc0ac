#include "sim/partitions.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <thread>

#include "sim/first_error.hpp"
#include "sim/window_barrier.hpp"

namespace rnicsim::sim {

Partitions::Partitions(Duration lookahead, unsigned threads) : lookahead_(lookahead), threads_(threads) {
  if (lookahead <= Duration::zero()) throw std::invalid_argument("partitions need a lookahead above zero");
  if (threads == 0) throw std::invalid_argument("partitions need at least one thread");
}

void Partitions::add(Partition p) {
  if (p.scheduler == nullptr || !p.land || !p.clear) throw std::invalid_argument("a partition needs its scheduler, land and clear");
  if (outside_ != nullptr) p.scheduler->take_outside_keys_from(*outside_);
  parts_.push_back(std::move(p));
}

void Partitions::set_outside(Scheduler& outside) {
  outside_ = &outside;
  for (Partition& p : parts_) p.scheduler->take_outside_keys_from(outside);
}

void Partitions::set_stages(Stages stages) {
  if (!stages.done || !stages.end) throw std::invalid_argument("stages need their done and end");
  stages_ = std::move(stages);
}

std::optional<Time> Partitions::next_start() const {
  std::optional<Time> t;
  for (const Partition& p : parts_)
    if (!p.scheduler->empty()) t = std::min(t.value_or(Time::max()), p.scheduler->next_time());
  return t;
}

Time Partitions::bound(Time start, Time end) const {
  Time b = start > Time::max() - lookahead_ ? end : std::min(start + lookahead_ - Duration::ps(1), end);
  if (outside_ != nullptr && !outside_->empty()) b = std::min(b, outside_->next_time() - Duration::ps(1));
  return b;
}

void Partitions::fire_outside(Time end) {
  if (outside_ == nullptr) return;
  while (!outside_->empty() && outside_->next_time() <= end) {
    const Time t = outside_->next_time();
    const std::optional<Time> first = next_start();
    if (first && *first < t) return;
    move_clocks_to(t);
    outside_->step();
  }
}

void Partitions::run_phase(unsigned thread, unsigned threads) {
  for (size_t i = thread; i < parts_.size(); i += threads) {
    parts_[i].clear();  // every landing has read it
    Scheduler& s = *parts_[i].scheduler;
    auto share_done = [&] { return stages_.done && stages_.done(i); };
    waiting_[i] = share_done();
    if (waiting_[i]) continue;  // its share is done: it waits for the others
    bool done = false;
    do {
      s.run_until(window_bound_);
      done = share_done();
    } while (s.stopped() && !done);  // a stop meant for another purpose
    if (!done) continue;
    if (!s.stopped()) throw std::logic_error("a partition's share of a stage was done without a stop()");
    waiting_[i] = true;
    finished_[i] = s.now();
  }
}

void Partitions::decide_after_run() {
  const auto waiting = static_cast<size_t>(std::count(waiting_.begin(), waiting_.end(), 1));
  after_ = waiting == parts_.size() && stages_.done ? After::Finish : waiting > 0 ? After::Resume : After::Land;
  instant_.reset();  // the latest finish of a share: the stage's last instant
  if (after_ == After::Finish)
    for (const std::optional<Time>& f : finished_)
      if (f) instant_ = std::max(instant_.value_or(Time::zero()), *f);
}

void Partitions::second_phase(unsigned thread, unsigned threads) {
  for (size_t i = thread; i < parts_.size(); i += threads) {
    Scheduler& s = *parts_[i].scheduler;
    const std::optional<Time> to = after_ == After::Finish ? instant_ : waiting_[i] ? std::optional(window_bound_) : std::nullopt;
    if (!to) continue;
    do {
      s.run_until(*to);
    } while (s.stopped());
  }
}

void Partitions::land_phase(unsigned thread, unsigned threads) {
  for (size_t i = thread; i < parts_.size(); i += threads) parts_[i].land();
}

void Partitions::move_clocks_to(Time t) {
  for (Partition& p : parts_)
    if (p.scheduler->now() < t && (p.scheduler->empty() || p.scheduler->next_time() >= t)) p.scheduler->move_to(t);
}

void Partitions::end_stage() {
  Time t = Time::zero();  // with no share finished at an event: where the partitions stand
  for (const Partition& p : parts_) t = std::max(t, p.scheduler->now());
  t = instant_.value_or(t);
  move_clocks_to(t);
  std::fill(finished_.begin(), finished_.end(), std::nullopt);
  if (!stages_.end(t)) over_ = ended_ = true;
}

bool Partitions::next_window(Time end) {
  fire_outside(end);
  const std::optional<Time> start = next_start();
  if (!start || *start > end) return false;
  window_bound_ = bound(*start, end);
  return true;
}

bool Partitions::between_windows(Time end) {
  ++windows_;
  if (after_ == After::Finish) end_stage();
  if (over_) return false;
  if (between_) between_();
  return next_window(end);
}

void Partitions::run_until(Time end) {
  if (parts_.empty()) return;
  const unsigned threads = std::min<unsigned>(threads_, static_cast<unsigned>(parts_.size()));
  waiting_.assign(parts_.size(), 0);
  finished_.resize(parts_.size());
  over_ = ended_ = false;
  after_ = After::Land;
  FirstError error;
  bool go = false;
  error.run([&] { go = next_window(end); });
  // Two barriers a window, three when a partition waited at its share's end:
  // after the run (then every outbox is written), after the second run, and
  // after the landing (then every scheduler holds what reached it; the stage
  // ends, the outside acts and the next window starts at the earliest event).
  WindowBarrier sync(threads);
  auto after_landing = [&] {
    error.run([&] { go = between_windows(end); });
    go = go && !error.failed();
  };
  auto body = [&](unsigned thread) {
    while (go) {
      error.run([&] { run_phase(thread, threads); });
      sync.arrive_and_wait([&] { decide_after_run(); });
      if (after_ != After::Land) {
        error.run([&] { second_phase(thread, threads); });
        sync.arrive_and_wait([] {});
      }
      error.run([&] { land_phase(thread, threads); });
      sync.arrive_and_wait(after_landing);
    }
  };
  {
    std::vector<std::jthread> workers;
    for (unsigned t = 1; t < threads; ++t) workers.emplace_back(body, t);
    body(0);
  }
  for (const Partition& p : parts_) p.clear();
  error.rethrow();
}

}  // namespace rnicsim::sim
