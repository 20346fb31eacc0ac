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
#include "sim/byte_record.hpp"
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
    changes_.push_back({static_cast<uint32_t>(column), v});
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
      for (; c < row_ends_[i]; ++c) values[changes_[c].column] = changes_[c].value;
      row(i, values);
    }
  }
  // The changes as bytes; and adding to each row the changes that another
  // table of the same rows kept of other columns (another rank's ports),
  // which throws std::runtime_error unless the rows match.
  void write(sim::ByteWriter& out) const {
    out.put_vector(changes_);
    out.put_vector(row_ends_);
  }
  void merge(sim::ByteReader& in) {
    const auto changes = in.take_vector<Change>();
    const auto ends = in.take_vector<size_t>();
    if (ends.size() != row_ends_.size() || (!ends.empty() && ends.back() != changes.size()))
      throw std::runtime_error("a time series from another rank has other rows");
    std::vector<Change> merged;
    size_t mine = 0, theirs = 0;
    for (size_t i = 0; i < row_ends_.size(); ++i) {
      for (; mine < row_ends_[i]; ++mine) merged.push_back(changes_[mine]);
      for (; theirs < ends[i]; ++theirs) {
        if (changes[theirs].column >= last_.size()) throw std::runtime_error("a time series' column is out of range");
        merged.push_back(changes[theirs]);
      }
      row_ends_[i] = merged.size();
    }
    changes_ = std::move(merged);
  }

private:
  struct Change {
    uint32_t column;
    T value;
  };
  std::vector<T> last_;
  std::vector<Change> changes_;
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
  // A run across ranks, once it is over: this rank's series (its ports, its
  // workloads' parts) as bytes, and another rank's added to these (each
  // port's column comes from the rank that ran it, the bytes add up).
  void write(sim::ByteWriter& out) const;
  void merge(sim::ByteReader& in);

private:
  void sample();
  void record(sim::Time now);

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
