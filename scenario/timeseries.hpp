// Time series of a run, for --out and `rnicsim plot`: every `interval` of
// simulated time, the bytes each workload's receivers placed (throughput.csv,
// delivered.csv), each port's queued bytes (queues.csv) and paused time so far
// (pauses.csv). The last interval ends with the run, so a workload's intervals
// add up to all it delivered. It only reads state: the run does not change.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "scenario/workload.hpp"
#include "scenario/world.hpp"
#include "sim/scheduler.hpp"

namespace rnicsim::scenario {

// Rows of per-port values kept as what changed since the row before: most
// ports are idle at most samples, so a run keeps (and touches) memory for the
// changes only, not for every port at every sample.
template <class T>
class ChangeRows {
public:
  explicit ChangeRows(size_t columns) : last_(columns) {}
  // A column's value in the row being built; end_row() closes it.
  void set(size_t column, T v) {
    if (v == last_[column]) return;
    last_[column] = v;
    changes_.emplace_back(static_cast<uint32_t>(column), v);
  }
  void end_row() { row_ends_.push_back(changes_.size()); }
  size_t rows() const { return row_ends_.size(); }
  size_t changes() const { return changes_.size(); }
  // Calls `row(i, values)` for each row in order, with every column's value.
  template <class F>
  void each_row(F&& row) const {
    std::vector<T> values(last_.size());
    size_t c = 0;
    for (size_t i = 0; i < row_ends_.size(); ++i) {
      for (; c < row_ends_[i]; ++c) values[changes_[c].first] = changes_[c].second;
      row(i, values);
    }
  }

private:
  std::vector<T> last_;
  std::vector<std::pair<uint32_t, T>> changes_;
  std::vector<size_t> row_ends_;  // [row]: the end of its changes
};

class Sampler {
public:
  Sampler(World& world, const std::vector<std::unique_ptr<Workload>>& workloads, sim::Duration interval);
  void start();
  // Ends the series with the run: the bytes since the last sample go in a last row.
  void stop();
  // What writes the CSV files into `dir` (and their exact twins:
  // sim/output.hpp), as pieces that may run side by side (sim/tasks.hpp), the
  // longest first.
  std::vector<std::function<void()>> writers(const std::filesystem::path& dir, bool exact_twins) const;
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
  ChangeRows<uint64_t> queued_;                    // [sample][port] bytes
  ChangeRows<double> paused_us_;                   // [sample][port]
  std::vector<uint64_t> last_bytes_;
  sim::Time last_time_;
  sim::Event tick_;
};

}  // namespace rnicsim::scenario
