// Runs a scenario in virtual time and summarises it (summary.hpp), and prints
// the summary as perftest and the run's tables do. run_text() loads the
// scenario first (scenario.hpp), so its errors are ScenarioErrors.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/progress.hpp"
#include "scenario/scenario.hpp"
#include "scenario/summary.hpp"
#include "scenario/timeline.hpp"
#include "sim/log.hpp"
#include "sim/rank_link.hpp"

namespace rnicsim::scenario {

struct RunOptions {
  std::optional<uint64_t> seed;  // overrides the scenario's seed
  std::string pcap_path;         // capture on the first host's port
  TimelineOptions timeline;      // the WQE timeline (trace-event JSON), if a path is given
  std::string out_dir;           // summary.json, stats.json, time series and per-QP CSV
  std::string perftest_json_dir; // NAME.json per perftest workload, as perftest's --out_json
  bool exact_twins = false;      // and beside each file FILE.exact, doubles as hex floats (sim/output.hpp)
  sim::Duration sample_interval = sim::Duration::us(10);  // time series step (with out_dir)
  bool quiet = false;             // no progress line at all
  ProgressOptions progress;      // when and how often progress is shown on stderr
  sim::LogLevel log_level = sim::LogLevel::Warn;  // of the simulation's logger
  // Simulated host memory writes a received payload when somebody looks at it
  // (nic::SimulatedHostMemory, deferred writes); false: at once, as it lands.
  bool defer_writes = true;
  // The engine's report (windows, units and events per partition, what
  // crossed between partitions): a JSON file, if a path is given; one process only.
  std::string engine_report;
  // Threads that run the world's partitions (0: one per core this process
  // may run on: the machine's, or those a launcher bound it to).
  unsigned threads = 0;
  // The ranks of a run across processes (mpirun), this process one of them;
  // none: the run is this process's alone. Every rank runs the same scenario
  // with the same options; rank 0 gathers and writes every output and
  // returns the run's Summary, the others an empty one.
  sim::RankLink* ranks = nullptr;
};

Summary run(const Scenario& s, const RunOptions& opts);
Summary run_text(std::string_view yaml_text, std::string_view file_name, const RunOptions& opts);

// perftest's report for each perftest workload (its header lines and columns),
// a summary of each flows workload, then a table of all workloads and totals.
void print_summary(const Summary& s, std::ostream& out);
void print_perftest_report(const WorkloadSummary& w, std::ostream& out);
class World;
// The switches' forwarding, drops by cause, ECN and PFC of a world, as
// print_summary gives them (the emulation daemon's exit summary too); adds
// the fabric's drops to sum.drops.
void summarise_fabric(World& world, Summary& sum);
void print_fabric(const FabricSummary& f, std::ostream& out);

}  // namespace rnicsim::scenario
