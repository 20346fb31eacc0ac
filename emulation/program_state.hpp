// What the kernel says a program's threads are doing: the virtual clock ends a
// burst of a program's calls once every thread of every program sleeps
// (blocked in a read, poll or futex: waiting for the NIC or for each other),
// or once the threads that run have used a set amount of CPU time: a thread
// starved of CPU on a busy machine uses none, however long it waits.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace rnicsim::emulation {

struct ThreadsState {
  // No thread is running or runnable (/proc/PID/task/*/stat state other than
  // R); false when the process cannot be read.
  bool asleep = false;
  bool cpu_known = false;
  uint64_t cpu_ns = 0;  // time its threads have run on a CPU (schedstat), if known
  uint64_t slices = 0;  // times its threads were put on a CPU (schedstat), if known
  uint64_t threads = 0, thread_ids = 0;  // how many, and the sum of their ids

  // Adds another process's threads (one look at several programs).
  void add(const ThreadsState& t);
};
ThreadsState threads_state(pid_t pid);

// A look reads the threads one after another, not at one instant: a thread
// read asleep may be woken by one not read yet, which then sleeps again
// before it is read. Two looks that both find every thread asleep, with no
// thread put on a CPU between them (the same threads, CPU time and slices),
// mean every thread was asleep at one instant: the end of the first look.
bool asleep_throughout(const ThreadsState& first, const ThreadsState& second);

// The parent of process `pid` (/proc/PID/stat), 0 if it cannot be read.
pid_t parent_of(pid_t pid);

}  // namespace rnicsim::emulation
