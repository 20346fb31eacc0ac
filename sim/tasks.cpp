#include "sim/tasks.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace rnicsim::sim {

void run_tasks(std::span<const std::function<void()>> tasks, unsigned threads) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::exception_ptr error;
  auto work = [&] {
    for (size_t i = next++; i < tasks.size() && !failed; i = next++) {
      try {
        tasks[i]();
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  {
    std::vector<std::jthread> helpers;
    const size_t n = std::min<size_t>(std::max(threads, 1u), tasks.size());
    for (size_t t = 1; t < n; ++t) helpers.emplace_back(work);
    work();
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace rnicsim::sim
