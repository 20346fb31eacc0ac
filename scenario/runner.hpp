// Runs a scenario in virtual time and summarises it.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/scenario.hpp"

namespace rnicsim::scenario {

struct RunOptions {
  std::optional<uint64_t> seed;  // overrides the scenario's seed
  std::string pcap_path;         // capture on the first host's port
  std::string out_dir;           // summary.json and stats.json
  bool quiet = false;
};

struct WorkloadSummary {
  std::string name, op, pattern;
  uint64_t messages = 0, bytes = 0, size = 0;
  double seconds = 0, gbps = 0, mmsg_per_s = 0;
  uint64_t lat_p50_ps = 0, lat_p99_ps = 0, lat_min_ps = 0, lat_max_ps = 0;
  double lat_mean_ps = 0;
  bool completed = false, data_verified = false;
  std::string failure;
};

struct Summary {
  std::string name;
  uint64_t seed = 0;
  std::vector<WorkloadSummary> workloads;
  uint64_t messages = 0, bytes = 0;
  uint64_t packets = 0;          // every frame put on a wire
  uint64_t data_packets = 0;     // request packets sent by requesters (retransmissions included)
  uint64_t retransmissions = 0;
  uint64_t drops = 0;            // lost on the wire or at full queues
  uint64_t rx_errors = 0;        // malformed or bad ICRC, dropped by receivers
  double sim_seconds = 0, wall_seconds = 0;
  uint64_t events = 0;
  double events_per_sec = 0;
  bool completed = false;        // every workload finished without error
};

Summary run(const Scenario& s, const RunOptions& opts);
Summary run_text(std::string_view yaml_text, std::string_view file_name, const RunOptions& opts);

// perftest-like table and totals.
void print_summary(const Summary& s, std::ostream& out);
void write_summary_json(const Summary& s, std::ostream& out);

}  // namespace rnicsim::scenario
