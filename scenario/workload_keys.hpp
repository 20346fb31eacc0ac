// The keys of a workload in a scenario file: perftest's options by perftest's names
// (size, all_sizes, iterations, qps, tx_depth, rx_depth, cq_mod, post_list,
// inline_size, outs) with perftest's defaults, and the flows workload.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "scenario/spec.hpp"
#include "scenario/yaml_reader.hpp"

namespace rnicsim::scenario {

// perftest's limits and defaults (perftest_parameters.h).
inline constexpr uint64_t kPerftestMaxSize = 8u << 20;        // -a: 2 B .. 8 MiB
inline constexpr uint64_t kPerftestAtomicSize = 8;
inline constexpr uint64_t kPerftestCqModSizeLimit = 8192;     // above it, cq_mod defaults to 1
inline constexpr uint32_t kModelMaxInline = 64;               // the inline room of a 128-byte WQE slot (nic::slot_inline)

// Reads one entry of `workloads:`; `s` holds the hosts and links read so far.
WorkloadSpec read_workload(const Reader& r, const YAML::Node& w, const Scenario& s, const KnownHost& known_host);

}  // namespace rnicsim::scenario
