// Time series of a run, for --out and `rnicsim plot`: every `interval` of
// simulated time the sampler records the bytes each workload's receivers placed
// in it (as the data arrives, Workload::delivered_bytes), each port's queued bytes
// and each port's paused time, and writes them as CSV:
//   throughput.csv  time_us, one column per workload (Gb/s over the interval)
//   delivered.csv   time_us, one column per workload (bytes delivered in the interval)
//   queues.csv      time_us, one column per port (bytes queued for the wire)
//   pauses.csv      time_us, one column per port (microseconds paused so far)
// A row's time is the end of its interval; the last interval ends with the run,
// so a workload's intervals add up to all it delivered. Reading state only, it
// changes nothing in the run.
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
