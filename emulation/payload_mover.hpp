// The payload mover: a second thread of the daemon that writes received
// payload into the programs, so that the simulation thread goes on to the next
// packet while this one's bytes are on their way (a NIC's DMA write path, run
// beside the pipeline). Who waits for what: ProcessHostMemory.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <utility>
#include <mutex>
#include <vector>

#include "fabric/frame.hpp"

namespace rnicsim::emulation {

// The simulation thread hands moves over (push) in the order the NIC makes
// its writes, and the mover makes them in that order. Frames, their pool and
// the lenders' borrow lists are touched by the simulation thread only: a move
// keeps its frame (`holder`) until the simulation thread reaps it.
class PayloadMover {
public:
  // `length` bytes from `src` to `dst` in the daemon, or, with a `pid`, to
  // `remote` in that process (process_vm_writev), or with `read`, from
  // `remote` in that process to `dst` (process_vm_readv: a read-ahead window
  // filled beside the simulation). A failure, the process gone or its memory
  // unmapped, is counted and kept for take_failures; a failed read leaves
  // zeros at `dst`, never older bytes.
  struct Move {
    std::byte* dst = nullptr;
    const std::byte* src = nullptr;
    size_t length = 0;
    // The frame whose buffer holds `src`, kept until the move is made; empty
    // when `src` is in a program's memory (a borrowed payload) or for all but
    // the last piece of a write.
    fabric::Frame holder;
    pid_t pid = 0;
    uint64_t remote = 0;
    bool read = false;
  };
  static constexpr size_t kSlots = 64;
  // Moves are handed over in batches of this many (and whenever the simulation
  // thread finishes a run or waits): every hand-over costs a cache line
  // crossing to the mover's CPU.
  static constexpr size_t kPublishEvery = 8;
  // The thread spins while moves come and sleeps after kIdle without one.
  // Asleep, the simulation thread makes the copies itself (accepting() is
  // false) and wakes it after kWakeBytes copied in rounds that follow each
  // other (a stream, not a ping-pong of small messages).
  static constexpr std::chrono::microseconds kIdle{1000};
  static constexpr size_t kWakeBytes = 256 * 1024;
  // Writes into a process that continue each other go out together, this many at most.
  static constexpr size_t kMaxGather = 64;

  // Whether this process may run on two CPUs or more. The mover helps only
  // beside the simulation thread, not in turns with it: awake, the simulation
  // thread keeps its CPU and the mover takes the daemon's others.
  static bool worthwhile();
  // `idle`: how long the thread spins without a move before it sleeps.
  explicit PayloadMover(std::chrono::microseconds idle = kIdle);
  ~PayloadMover();  // makes every move handed over, then stops the thread
  PayloadMover(const PayloadMover&) = delete;
  PayloadMover& operator=(const PayloadMover&) = delete;

  // --- the simulation thread only ---
  // Whether the thread is awake and not held: a move handed over now is made soon.
  bool accepting() const { return awake_.load(std::memory_order_relaxed) != 0 && !held_.load(std::memory_order_relaxed); }
  // Held while programs spin on every CPU: the thread would only take turns
  // with them, and the simulation thread would wait for its turns. Held, it
  // takes no move, sleeps once it has made those it has, and a stream does not
  // wake it (the simulation thread makes the copies itself).
  // Stores only a change: the daemon calls it every round.
  void hold(bool on) {
    if (held_.load(std::memory_order_relaxed) != on) held_.store(on, std::memory_order_relaxed);
  }
  // Hands a move over, after every move before it (`lent`: its source bytes
  // are in a program's memory); waits while all slots are taken. Returns its
  // number: made(number) holds once it is made. A read is handed over at once
  // (the simulation thread will soon wait for it); writes go in batches.
  uint64_t push(Move&& m, bool lent);
  // Whether more than half the slots hold moves not yet made: the simulation
  // thread would soon wait for the mover, so it may as well copy itself.
  bool behind() { return !made(pushed_ > kSlots / 2 ? pushed_ - kSlots / 2 : 0); }
  // Whether the moves up to number `n` are made.
  bool made(uint64_t n) {
    if (n <= done_seen_) return true;
    done_seen_ = done_.load(std::memory_order_acquire);
    return n <= done_seen_;
  }
  // Waits until made(n).
  void wait_until_made(uint64_t n);
  // The number of the last move that reads bytes of a program's memory.
  uint64_t last_lent() const { return last_lent_; }
  // The caller copied `bytes` itself because the thread was asleep.
  void copied_inline(size_t bytes) { round_bytes_ += bytes; }
  // After each run of the simulation: releases the frames of finished moves,
  // and wakes the thread when a stream copies inline.
  void end_round();
  // Every move handed over is made and its frame released.
  void drain();

  uint64_t moves() const { return pushed_; }
  // process_vm_writev calls the mover made, and those that failed.
  uint64_t system_calls() const { return calls_.load(std::memory_order_relaxed); }
  uint64_t failed_calls() const { return failed_calls_.load(std::memory_order_relaxed); }
  uint64_t wake_ups() const { return wake_ups_; }
  // The accesses to process `pid` that failed since the last call, as
  // f(remote address, bytes, read), each once.
  template <class F>
  void take_failures(pid_t pid, F f);

private:
  void run();
  // Makes the move at `head` (and the process writes after it that continue
  // it, up to `tail`); returns the next.
  uint64_t make(uint64_t head, uint64_t tail);
  void read(const Move& m);
  void failed(pid_t pid, uint64_t remote, uint64_t bytes, bool read);
  void publish();
  void reap();
  void wake();
  // One round of waiting for the thread: releases what it finished, wakes it
  // if it went to sleep with moves left, and gives it the CPU now and then
  // (never while it has CPUs of its own).
  void wait_a_little(unsigned& round);

  // Each group on cache lines of its own: a line one thread writes while the
  // other reads crosses between their CPUs on every change.
  // The slots: each written by the simulation thread before it is published
  // and read by the mover after (see push and reap); the rest read only.
  std::vector<Move> slots_ = std::vector<Move>(kSlots);
  const pid_t sim_tid_;
  const std::chrono::microseconds idle_;
  // The simulation thread's alone. pushed_: moves handed over, published_ of
  // them through tail_; reaped_: slots whose frame was released.
  alignas(64) uint64_t pushed_ = 0;
  uint64_t published_ = 0, reaped_ = 0, done_seen_ = 0, last_lent_ = 0, wake_ups_ = 0, rounds_ = 0;
  size_t round_bytes_ = 0, stream_bytes_ = 0;
  // Written by the simulation thread.
  alignas(64) std::atomic<uint64_t> tail_{0};
  // Moves made, written by the mover once per batch; its system calls.
  alignas(64) std::atomic<uint64_t> done_{0};
  std::atomic<uint64_t> calls_{0}, failed_calls_{0};
  struct Failure {
    pid_t pid;
    uint64_t remote, bytes;
    bool read;
  };
  std::mutex failures_mutex_;
  std::vector<Failure> failures_;  // rare: taken by the simulation thread
  // Written now and then.
  alignas(64) std::atomic<uint32_t> awake_{1};
  std::atomic<bool> stop_{false};
  std::atomic<bool> split_{false};  // the mover runs on CPUs of its own
  std::atomic<bool> held_{false};   // written by the simulation thread (hold)
  // The simulation thread's CPU, as it last looked.
  alignas(64) std::atomic<int> sim_cpu_{-1};
  alignas(64) std::thread thread_;
};

template <class F>
void PayloadMover::take_failures(pid_t pid, F f) {
  if (failed_calls_.load(std::memory_order_relaxed) == 0) return;
  std::vector<Failure> mine;
  {
    std::lock_guard<std::mutex> lock(failures_mutex_);
    std::erase_if(failures_, [&](const Failure& x) {
      if (x.pid != pid) return false;
      mine.push_back(x);
      return true;
    });
  }
  for (const Failure& x : mine) f(x.remote, x.bytes, x.read);
}

}  // namespace rnicsim::emulation
