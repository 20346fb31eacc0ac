#include "sim/partitions.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <thread>

#include "sim/byte_record.hpp"
#include "sim/first_error.hpp"
#include "sim/rank_link.hpp"
#include "sim/window_barrier.hpp"

namespace rnicsim::sim {

Partitions::Partitions(Duration lookahead, unsigned threads) : lookahead_(lookahead), threads_(threads) {
  if (lookahead <= Duration::zero()) throw std::invalid_argument("partitions need a lookahead above zero");
  if (threads == 0) throw std::invalid_argument("partitions need at least one thread");
}

void Partitions::set_ranks(RankLink& ranks, size_t partitions) {
  if (!parts_.empty()) throw std::logic_error("ranks are set before partitions are added");
  ranks_ = &ranks;
  world_parts_ = partitions;
  first_ = static_cast<size_t>(ranks.rank());
  stride_ = static_cast<size_t>(ranks.ranks());
}

void Partitions::add(Partition p, Mail mail) {
  if (p.scheduler == nullptr || !p.land || !p.clear) throw std::invalid_argument("a partition needs its scheduler, land and clear");
  if (ranks_ != nullptr && stride_ > 1 && (!mail.outbox || !mail.inbox || !mail.earliest)) throw std::invalid_argument("a partition across ranks needs its outbox and inbox");
  if (ranks_ != nullptr && number(parts_.size()) >= world_parts_) throw std::invalid_argument("more partitions added than this rank holds");
  if (outside_ != nullptr) p.scheduler->take_outside_keys_from(*outside_);
  parts_.push_back(std::move(p));
  mail_.push_back(std::move(mail));
}

void Partitions::set_outside(Scheduler& outside) {
  outside_ = &outside;
  for (Partition& p : parts_) p.scheduler->take_outside_keys_from(outside);
}

void Partitions::set_stages(Stages stages) {
  if (!stages.done || !stages.end) throw std::invalid_argument("stages need their done and end");
  stages_ = std::move(stages);
}

int64_t Partitions::least(int64_t v) const { return ranks_ != nullptr && stride_ > 1 ? ranks_->min(v) : v; }

int64_t Partitions::greatest(int64_t v) const { return ranks_ != nullptr && stride_ > 1 ? ranks_->max(v) : v; }

Time Partitions::next_here() const {
  Time t = Time::max();
  for (const Partition& p : parts_)
    if (!p.scheduler->empty()) t = std::min(t, p.scheduler->next_time());
  return t;
}

std::optional<Time> Partitions::next_start() {
  Time t = Time::max();
  if (agreed_start_) {
    t = *agreed_start_;
    agreed_start_.reset();
  } else {
    t = Time::from_ps(least(next_here().picoseconds()));
  }
  return t == Time::max() ? std::nullopt : std::optional(t);
}

Time Partitions::bound(Time start, Time end) const {
  Time b = start > Time::max() - lookahead_ ? end : std::min(start + lookahead_ - Duration::ps(1), end);
  if (outside_ != nullptr && !outside_->empty()) b = std::min(b, outside_->next_time() - Duration::ps(1));
  return b;
}

void Partitions::fire_outside(Time end, std::optional<Time>& first) {
  if (outside_ == nullptr) return;
  while (!outside_->empty() && outside_->next_time() <= end) {
    const Time t = outside_->next_time();
    if (first && *first < t) return;
    move_clocks_to(t);
    outside_->step();
    first = next_start();  // what the outside scheduled may come first
  }
}

void Partitions::run_phase(unsigned thread, unsigned threads) {
  for (size_t i = thread; i < parts_.size(); i += threads) {
    parts_[i].clear();  // every landing has read it
    Scheduler& s = *parts_[i].scheduler;
    auto share_done = [&] { return stages_.done && stages_.done(number(i)); };
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

void Partitions::decide_here() {
  instant_.reset();  // the latest finish of a share: the stage's last instant
  finish_ = second_round_ = false;
  const auto waiting = static_cast<size_t>(std::count(waiting_.begin(), waiting_.end(), 1));
  busy_ = stages_.done && waiting < parts_.size();
  deferred_ = stages_.done && !parts_.empty() && waiting == parts_.size();
  resume_here_ = waiting > 0 && !deferred_;
}

void Partitions::first_exchange() {
  int64_t latest = -1;
  for (const std::optional<Time>& f : finished_)
    if (f) latest = std::max(latest, f->picoseconds());
  // Reduced in the exchange's round as minima: the next start, whether any
  // rank deferred, whether any is busy, the latest finish of a share.
  int64_t values[] = {0, -int64_t{deferred_}, -int64_t{busy_}, -latest};
  cross_ranks(!deferred_, received_, values);
  if (values[1] == 0) return;  // no rank waits to learn whether the stage ends
  second_round_ = true;
  finish_ = values[2] == 0;  // every share on every rank is done
  if (finish_ && values[3] <= 0) instant_ = Time::from_ps(-values[3]);
}

void Partitions::cross_ranks(bool send, std::vector<std::vector<std::byte>>& received, std::span<int64_t> values) {
  if (ranks_ == nullptr || stride_ == 1) return;  // the next start is asked for after the landing
  // values[0]: where the next window starts, as far as this rank knows: every
  // pending event and everything sent, which lands at its arrival (what a
  // word asks for may land later: a window that starts early runs empty).
  Time next = next_here();
  for (const Mail& m : mail_) next = std::min(next, m.earliest());
  values[0] = next.picoseconds();
  // Per rank: from, to, length (what ByteReader::take_bytes reads) and the
  // bytes, for every outbox not empty.
  std::vector<std::vector<std::byte>>& out = sending_;
  out.resize(stride_);
  for (auto& b : out) b.clear();  // their storage stays for the next window
  for (size_t i = 0; send && i < parts_.size(); ++i)
    for (size_t to = 0; to < world_parts_; ++to) {
      if (to % stride_ == first_) continue;
      const std::span<const std::byte> bytes = mail_[i].outbox(to);
      if (bytes.empty()) continue;
      std::vector<std::byte>& b = out[to % stride_];
      append(b, uint64_t{number(i)}), append(b, uint64_t{to}), append(b, uint64_t{bytes.size()});
      b.insert(b.end(), bytes.begin(), bytes.end());
    }
  const std::vector<std::span<const std::byte>> views(out.begin(), out.end());
  ranks_->exchange(views, received, values);
  agreed_start_ = Time::from_ps(values[0]);
  for (size_t r = 0; r < stride_; ++r) {
    if (r == first_) continue;
    ByteReader in(received[r]);
    while (!in.empty()) {
      const auto from = in.take<uint64_t>(), to = in.take<uint64_t>();
      const std::span<const std::byte> bytes = in.take_bytes();
      if (to % stride_ != first_ || to >= world_parts_ || from >= world_parts_)
        throw std::runtime_error("a rank's crossings do not parse");
      mail_[to / stride_].inbox(from, bytes);
    }
  }
}

void Partitions::second_phase(unsigned thread, unsigned threads) {
  for (size_t i = thread; i < parts_.size(); i += threads) {
    Scheduler& s = *parts_[i].scheduler;
    const std::optional<Time> to = finish_ ? instant_ : waiting_[i] ? std::optional(window_bound_) : std::nullopt;
    if (!to) continue;
    do {
      s.run_until(*to);
    } while (s.stopped());
  }
}

void Partitions::second_exchange() {
  int64_t values[] = {0};
  cross_ranks(deferred_, received_again_, values);
}

void Partitions::land_phase(unsigned thread, unsigned threads) {
  for (size_t i = thread; i < parts_.size(); i += threads) parts_[i].land();
}

void Partitions::move_clocks_to(Time t) {
  for (Partition& p : parts_)
    if (p.scheduler->now() < t && (p.scheduler->empty() || p.scheduler->next_time() >= t)) p.scheduler->move_to(t);
}

void Partitions::end_stage() {
  agreed_start_.reset();  // the next stage's work is not in it
  Time t = Time::zero();  // with no share finished at an event: where the partitions stand
  for (const Partition& p : parts_) t = std::max(t, p.scheduler->now());
  t = instant_.value_or(Time::from_ps(greatest(t.picoseconds())));
  move_clocks_to(t);
  std::fill(finished_.begin(), finished_.end(), std::nullopt);
  const bool go_on = stages_.end(t);
  if (least(go_on) != greatest(go_on)) throw std::logic_error("the ranks disagree on whether a stage's end ends the run");
  if (!go_on) over_ = ended_ = true;
}

bool Partitions::next_window(Time end) {
  std::optional<Time> start = next_start();
  fire_outside(end, start);
  if (!start || *start > end) return false;
  window_bound_ = bound(*start, end);
  return true;
}

bool Partitions::between_windows(Time end) {
  ++windows_;
  count_busiest();
  if (finish_) end_stage();
  if (over_) return false;
  if (between_) between_();
  return next_window(end);
}

void Partitions::run_until(Time end) {
  if (parts_.empty() && (ranks_ == nullptr || stride_ == 1)) return;
  const unsigned threads = std::clamp<unsigned>(static_cast<unsigned>(parts_.size()), 1, threads_);
  waiting_.assign(parts_.size(), 0);
  finished_.resize(parts_.size());
  fired_.resize(parts_.size(), 0);
  agreed_start_.reset();
  over_ = ended_ = false;
  finish_ = false;
  FirstError error;
  bool go = false;
  error.run([&] { go = next_window(end); });
  // Two barriers a window: after the run (then every outbox is written and,
  // across ranks, exchanged) and after the landing (then every scheduler
  // holds what reached it; the stage ends, the outside acts and the next
  // window starts at the earliest event). A partition whose share ended in
  // the window runs on to the window's end before the exchange, unless every
  // partition of its rank waits: then the exchange tells whether every share
  // on every rank is done (the stage's last instant is run) or not (they run
  // on), and what that sends goes in a second exchange.
  WindowBarrier sync(threads);
  auto after_landing = [&] {
    error.run([&] { go = between_windows(end); });
    go = go && !error.failed();
  };
  auto body = [&](unsigned thread) {
    while (go) {
      error.run([&] { run_phase(thread, threads); });
      sync.arrive_and_wait([&] {
        decide_here();
        if (!resume_here_) error.run([&] { first_exchange(); });
      });
      if (resume_here_) {
        error.run([&] { second_phase(thread, threads); });
        sync.arrive_and_wait([&] { error.run([&] { first_exchange(); }); });
      }
      if (second_round_) {
        if (finish_ || deferred_) error.run([&] { second_phase(thread, threads); });
        sync.arrive_and_wait([&] { error.run([&] { second_exchange(); }); });
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
  for (auto& b : received_) b.clear();
  for (auto& b : received_again_) b.clear();
  rethrow(error);
}

void Partitions::rethrow(const FirstError& error) {
  try {
    error.rethrow();
  } catch (const std::exception& e) {
    if (ranks_ != nullptr && stride_ > 1) ranks_->abort(e.what());  // the other ranks wait in a collective
    throw;
  }
}

// The window just run's busiest partition of this rank: the events it fired.
void Partitions::count_busiest() {
  uint64_t most = 0;
  for (size_t i = 0; i < parts_.size(); ++i) {
    const uint64_t now = parts_[i].scheduler->events_fired();
    most = std::max(most, now - fired_[i]);
    fired_[i] = now;
  }
  busiest_events_ += most;
}

}  // namespace rnicsim::sim
