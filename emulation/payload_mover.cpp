#include "emulation/payload_mover.hpp"

#include <sched.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <cstring>

namespace rnicsim::emulation {
namespace {
void spin_hint() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
// Rounds of a wait that only spin before one gives the CPU away.
constexpr unsigned kSpinsBeforeYield = 64;
// end_round notes the simulation thread's CPU once in this many rounds.
constexpr uint64_t kRoundsPerCpuLook = 16;

cpu_set_t allowed_cpus() {
  cpu_set_t s;
  CPU_ZERO(&s);
  if (sched_getaffinity(0, sizeof s, &s) != 0) CPU_ZERO(&s);
  return s;
}
}  // namespace

bool PayloadMover::worthwhile() {
  const cpu_set_t s = allowed_cpus();
  return CPU_COUNT(&s) >= 2;
}

PayloadMover::PayloadMover(std::chrono::microseconds idle)
    : sim_tid_(gettid()), idle_(idle), thread_([this] { run(); }) {}

PayloadMover::~PayloadMover() {
  drain();
  stop_.store(true, std::memory_order_seq_cst);
  wake();
  thread_.join();
}

uint64_t PayloadMover::push(Move&& m, bool lent) {
  if (pushed_ - reaped_ == kSlots) {
    for (unsigned round = 0; !made(reaped_ + 1);) wait_a_little(round);
    reap();
  }
  const bool now = m.read;
  slots_[pushed_ % kSlots] = std::move(m);
  ++pushed_;
  if (now || pushed_ - published_ >= kPublishEvery) publish();
  if (lent) last_lent_ = pushed_;
  return pushed_;
}

void PayloadMover::publish() {
  if (published_ == pushed_) return;
  published_ = pushed_;
  tail_.store(published_, std::memory_order_release);
}

void PayloadMover::reap() {
  for (made(pushed_); reaped_ < done_seen_; ++reaped_) slots_[reaped_ % kSlots].holder = fabric::Frame{};
}

void PayloadMover::wake() {
  ++wake_ups_;
  awake_.store(1, std::memory_order_seq_cst);
  awake_.notify_one();
}

void PayloadMover::wait_a_little(unsigned& round) {
  publish();
  if (!accepting() && !made(pushed_)) wake();
  // The mover may be waiting for this CPU, unless it has CPUs of its own.
  if (++round % kSpinsBeforeYield != 0 || split_.load(std::memory_order_relaxed)) {
    spin_hint();
  } else {
    sched_yield();
  }
}

void PayloadMover::wait_until_made(uint64_t n) {
  for (unsigned round = 0; !made(n);) wait_a_little(round);
}

void PayloadMover::drain() {
  wait_until_made(pushed_);
  reap();
}

void PayloadMover::end_round() {
  if (++rounds_ % kRoundsPerCpuLook == 0) sim_cpu_.store(sched_getcpu(), std::memory_order_relaxed);
  publish();
  reap();
  if (!accepting()) {
    if (!made(pushed_)) {
      wake();  // it went to sleep as the last moves came
    } else if (round_bytes_ == 0 || held_.load(std::memory_order_relaxed)) {
      stream_bytes_ = 0;
    } else if ((stream_bytes_ += round_bytes_) >= kWakeBytes) {
      stream_bytes_ = 0;
      wake();
    }
  }
  round_bytes_ = 0;
}

void PayloadMover::failed(pid_t pid, uint64_t remote, uint64_t bytes, bool read) {
  std::lock_guard<std::mutex> lock(failures_mutex_);
  failures_.push_back(Failure{pid, remote, bytes, read});
  failed_calls_.fetch_add(1, std::memory_order_relaxed);
}

void PayloadMover::read(const Move& m) {
  iovec local{m.dst, m.length};
  iovec remote{reinterpret_cast<void*>(m.remote), m.length};
  calls_.fetch_add(1, std::memory_order_relaxed);
  if (process_vm_readv(m.pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(m.length)) return;
  std::memset(m.dst, 0, m.length);
  failed(m.pid, m.remote, m.length, true);
}

uint64_t PayloadMover::make(uint64_t head, uint64_t tail) {
  const Move& first = slots_[head % kSlots];
  if (first.read) {
    read(first);
    return head + 1;
  }
  if (first.pid == 0) {
    std::memcpy(first.dst, first.src, first.length);
    return head + 1;
  }
  // Writes into another process that continue each other: one system call,
  // gathered from where the bytes are.
  std::array<iovec, kMaxGather> local;
  size_t n = 0, bytes = 0;
  for (; head != tail && n < local.size(); ++head, ++n) {
    const Move& m = slots_[head % kSlots];
    if (m.read || m.pid != first.pid || m.remote != first.remote + bytes) break;
    local[n] = {const_cast<std::byte*>(m.src), m.length};
    bytes += m.length;
  }
  iovec remote{reinterpret_cast<void*>(first.remote), bytes};
  const bool ok = process_vm_writev(first.pid, local.data(), n, &remote, 1, 0) == static_cast<ssize_t>(bytes);
  calls_.fetch_add(1, std::memory_order_relaxed);
  if (!ok) failed(first.pid, first.remote, bytes, false);
  return head;
}

void PayloadMover::run() {
  // CPUs: while awake, the simulation thread keeps the CPU it is on and this
  // thread takes the others; asleep, both may use all the daemon's CPUs.
  const cpu_set_t allowed = allowed_cpus();
  bool split = false;
  auto split_cpus = [&] {
    if (split || CPU_COUNT(&allowed) < 2) return;
    const int cpu = sim_cpu_.load(std::memory_order_relaxed);
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)) return;
    cpu_set_t one, others = allowed;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    CPU_CLR(cpu, &others);
    if (sched_setaffinity(sim_tid_, sizeof one, &one) == 0) {
      split = sched_setaffinity(0, sizeof others, &others) == 0;
      if (!split) sched_setaffinity(sim_tid_, sizeof allowed, &allowed);
      split_.store(split, std::memory_order_relaxed);
    }
  };
  auto join_cpus = [&] {
    if (!split) return;
    split_.store(false, std::memory_order_relaxed);
    sched_setaffinity(sim_tid_, sizeof allowed, &allowed);
    sched_setaffinity(0, sizeof allowed, &allowed);
    split = false;
  };

  using Clock = std::chrono::steady_clock;
  uint64_t head = 0;
  auto last_move = Clock::now();
  for (unsigned spins = 0;;) {
    const uint64_t tail = tail_.load(std::memory_order_acquire);
    if (head != tail) {
      while (head != tail) {  // each made one is told at once: a read may be waited for
        head = make(head, tail);
        done_.store(head, std::memory_order_release);
      }
      spins = 0;
      last_move = Clock::now();
      split_cpus();
      continue;
    }
    if (stop_.load(std::memory_order_acquire)) break;
    if (++spins % kSpinsBeforeYield != 0) {
      spin_hint();
      continue;
    }
    sched_yield();  // the programs and the simulation spin too, maybe on this CPU
    if (Clock::now() - last_move < idle_ && !held_.load(std::memory_order_relaxed)) continue;
    // Asleep: the simulation thread copies itself until it wakes this one.
    join_cpus();
    awake_.store(0, std::memory_order_seq_cst);
    if (tail_.load(std::memory_order_seq_cst) != head || stop_.load(std::memory_order_seq_cst)) {
      awake_.store(1, std::memory_order_relaxed);
      continue;
    }
    awake_.wait(0, std::memory_order_acquire);
    last_move = Clock::now();
  }
  join_cpus();
}

}  // namespace rnicsim::emulation
