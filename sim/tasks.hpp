// Independent pieces of work run side by side: the output files of a run,
// each written from state that no other piece changes. What the pieces do
// does not depend on which thread runs them, so neither do the files.
#pragma once

#include <functional>
#include <span>

namespace rnicsim::sim {

// Runs every task, on up to `threads` threads (the caller's among them), each
// thread taking the next task not yet taken: put the longest first. The first
// exception a task throws is rethrown once all have stopped; the tasks not yet
// taken by then are not run.
void run_tasks(std::span<const std::function<void()>> tasks, unsigned threads);

// The cores the calling thread may run on: the machine's, or fewer where it
// is bound (mpirun binds a rank to one core unless told otherwise). Threads
// beyond those would take turns, at every window's barrier of the engine.
unsigned usable_cores();

}  // namespace rnicsim::sim
