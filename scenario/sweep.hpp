// Overrides and sweeps: a scenario's settings changed from outside it.
// An override is PATH=VALUE (`--set nic.mtu=1024`, `links.0.loss`,
// `workloads.write_stream.size`: map keys, list indices or a list element's
// `name`); VALUE is YAML. A missing last key is added, and the scenario is then
// validated as if written so. `sweep:` maps PATHs to lists of values and runs
// every combination (a grid, the first axis slowest), one table row per run.
#pragma once

#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "scenario/scenario.hpp"
#include "scenario/summary.hpp"

namespace rnicsim::sim {
class CsvWriter;
}

namespace rnicsim::scenario {

// Applies PATH=VALUE to `root`; throws std::invalid_argument naming what is wrong.
void apply_override(YAML::Node root, const std::string& assignment);

// An error in an override given on the command line.
struct OverrideError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct SweepPoint {
  std::vector<std::pair<std::string, std::string>> settings;  // path, value as written
  Scenario scenario;
};

// The runs of `root`'s sweep (each parsed and validated; errors name the file, and
// the line and column of the value that made a run invalid). Empty without `sweep:`.
// `fresh` loads the file's tree anew (with the overrides applied): each run starts
// from one, so that errors keep the line and column of the file.
std::vector<SweepPoint> expand_sweep(const YAML::Node& root, const std::function<YAML::Node()>& fresh,
                                     const std::string& file_name);

// One row per run: the swept values, each workload's throughput and p50/p99
// latency, drops, retransmissions, and whether it completed and met its expect:.
// The runs a scenario file asks for, with `overrides` applied first: one run
// without `sweep:`, one per sweep point with it. Throws ScenarioError for the
// file, OverrideError for an override.
std::vector<SweepPoint> load_runs(const std::string& path, const std::vector<std::string>& overrides);

void print_sweep_table(const std::vector<SweepPoint>& points, const std::vector<Summary>& results, std::ostream& out);
void write_sweep_csv(const std::vector<SweepPoint>& points, const std::vector<Summary>& results, sim::CsvWriter& out);

}  // namespace rnicsim::scenario
