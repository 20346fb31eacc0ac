// One simulation: the scheduler, the seed its random streams derive from, the stats
// registry and the logger. Passed by reference to every component; never static.
#pragma once

#include <cstdint>
#include <iostream>
#include <string_view>

#include "sim/log.hpp"
#include "sim/random.hpp"
#include "sim/scheduler.hpp"
#include "sim/stats.hpp"

namespace rnicsim::sim {

class Simulator {
public:
  explicit Simulator(uint64_t seed, std::ostream& log_sink = std::cerr, LogLevel level = LogLevel::Warn)
      : seed_(seed), log_(log_sink, level, [this] { return scheduler_.now(); }) {}
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Scheduler& scheduler() { return scheduler_; }
  const Scheduler& scheduler() const { return scheduler_; }
  Time now() const { return scheduler_.now(); }
  uint64_t seed() const { return seed_; }
  RandomStream random(std::string_view component_path) const { return RandomStream(seed_, component_path); }
  Stats& stats() { return stats_; }
  Logger& log() { return log_; }

private:
  uint64_t seed_;
  Scheduler scheduler_;
  Stats stats_;
  Logger log_;
};

}  // namespace rnicsim::sim
