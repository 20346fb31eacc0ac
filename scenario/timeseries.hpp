// Time series of a run, for --out and `rnicsim plot`: every `interval` of
// simulated time, the bytes each workload's receivers placed (throughput.csv,
// delivered.csv), each port's queued bytes (queues.csv) and paused time so far
// (pauses.csv). The last interval ends with the run, so a workload's intervals
// add up to all it delivered. It only reads state: the run does not change.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "scenario/workload.hpp"
#include "scenario/world.hpp"
#include "sim/scheduler.hpp"

namespace rnicsim::scenario {

class Sampler {
public:
  Sampler(World& world, const std::vector<std::unique_ptr<Workload>>& workloads, sim::Duration interval);
  void start();
  // Ends the series with the run: the bytes since the last sample go in a last row.
  void stop();
  // Writes the CSV files into `dir` (and their exact twins: sim/output.hpp).
  void write(const std::filesystem::path& dir, bool exact_twins) const;
  size_t samples() const { return times_.size(); }

private:
  void sample();
  void record();

  World& world_;
  const std::vector<std::unique_ptr<Workload>>& workloads_;
  sim::Duration interval_;
  std::vector<std::pair<std::string, const fabric::Port*>> ports_;
  std::vector<double> times_;                      // us
  std::vector<sim::Duration> spans_;               // [sample]: its interval
  std::vector<std::vector<uint64_t>> bytes_;       // [sample][workload] delivered in the interval
  std::vector<std::vector<uint64_t>> queued_;      // [sample][port] bytes
  std::vector<std::vector<double>> paused_us_;     // [sample][port]
  std::vector<uint64_t> last_bytes_;
  sim::Time last_time_;
  sim::Event tick_;
};

}  // namespace rnicsim::scenario
