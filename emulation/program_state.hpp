// What the kernel says a program's threads are doing: the virtual clock ends a
// burst of a program's calls early once every thread of every program sleeps
// (blocked in a read, poll or futex: waiting for the NIC or for each other),
// rather than after a fixed wall time a thread starved of CPU may outlast.
#pragma once

#include <sys/types.h>

namespace rnicsim::emulation {

// Whether no thread of process `pid` is running or runnable (/proc/PID/task/*/stat
// state other than R). False when the process cannot be read.
bool asleep(pid_t pid);

// The parent of process `pid` (/proc/PID/stat), 0 if it cannot be read.
pid_t parent_of(pid_t pid);

}  // namespace rnicsim::emulation
