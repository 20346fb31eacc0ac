// The first exception that any of several threads met, kept to be rethrown
// on the caller's thread once all have stopped; after it, the others skip
// their work (and go on through their barriers, so none waits for a thread
// that left).
#pragma once

#include <exception>
#include <mutex>

namespace rnicsim::sim {

class FirstError {
public:
  // Runs `f` unless an error was already met; keeps what it throws, if first.
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
  // Call once every thread has stopped.
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

private:
  mutable std::mutex mutex_;
  std::exception_ptr error_;
};

}  // namespace rnicsim::sim
