#include "sim/tasks.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "sim/first_error.hpp"

namespace rnicsim::sim {

void run_tasks(std::span<const std::function<void()>> tasks, unsigned threads) {
  std::atomic<size_t> next{0};
  FirstError error;
  auto work = [&] {
    for (size_t i = next++; i < tasks.size() && !error.failed(); i = next++) error.run(tasks[i]);
  };
  {
    std::vector<std::jthread> helpers;
    const size_t n = std::min<size_t>(std::max(threads, 1u), tasks.size());
    for (size_t t = 1; t < n; ++t) helpers.emplace_back(work);
    work();
  }
  error.rethrow();
}

unsigned usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace rnicsim::sim
