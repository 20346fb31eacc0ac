#include "sim/partitions.hpp"

#include <algorithm>
#include <barrier>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

namespace rnicsim::sim {

Partitions::Partitions(Duration lookahead, unsigned threads) : lookahead_(lookahead), threads_(threads) {
  if (lookahead <= Duration::zero()) throw std::invalid_argument("partitions need a lookahead above zero");
  if (threads == 0) throw std::invalid_argument("partitions need at least one thread");
}

void Partitions::add(Partition p) {
  if (p.scheduler == nullptr || !p.land || !p.clear) throw std::invalid_argument("a partition needs its scheduler, land and clear");
  parts_.push_back(std::move(p));
}

std::optional<Time> Partitions::next_start() const {
  std::optional<Time> t;
  for (const Partition& p : parts_)
    if (!p.scheduler->empty()) t = std::min(t.value_or(Time::max()), p.scheduler->next_time());
  return t;
}

Time Partitions::bound(Time start, Time end) const {
  if (start > Time::max() - lookahead_) return end;
  return std::min(start + lookahead_ - Duration::ps(1), end);
}

void Partitions::run_phase(unsigned thread, unsigned threads, Time bound) {
  for (size_t i = thread; i < parts_.size(); i += threads) {
    parts_[i].clear();  // every landing has read it
    parts_[i].scheduler->run_until(bound);
  }
}

void Partitions::land_phase(unsigned thread, unsigned threads) {
  for (size_t i = thread; i < parts_.size(); i += threads) parts_[i].land();
}

namespace {

// The first exception a thread met; the others go on through the barriers
// doing nothing, so that none waits for a thread that left.
class FirstError {
public:
  template <class F>
  void run(F&& f) {
    if (failed()) return;
    try {
      f();
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }
  bool failed() const {
    std::lock_guard lock(mutex_);
    return error_ != nullptr;
  }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

private:
  mutable std::mutex mutex_;
  std::exception_ptr error_;
};

}  // namespace

void Partitions::run_until(Time end) {
  if (parts_.empty()) return;
  const unsigned threads = std::min<unsigned>(threads_, static_cast<unsigned>(parts_.size()));
  FirstError error;
  std::optional<Time> start = next_start();
  bool done = !start || *start > end;
  // Two barriers a window: after the run (then every outbox is written), and
  // after the landing (then every scheduler holds what reached it, and the
  // next window starts at the earliest of their events).
  bool landed = false;
  std::barrier sync(static_cast<std::ptrdiff_t>(threads), [&]() noexcept {
    if (landed) {
      ++windows_;
      start = next_start();
      done = !start || *start > end || error.failed();
    }
    landed = !landed;
  });
  auto body = [&](unsigned thread) {
    while (!done) {
      const Time to = bound(*start, end);
      error.run([&] { run_phase(thread, threads, to); });
      sync.arrive_and_wait();
      error.run([&] { land_phase(thread, threads); });
      sync.arrive_and_wait();
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
