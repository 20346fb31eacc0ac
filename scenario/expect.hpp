// `expect:` turns a scenario into a regression test: each entry is a condition
// "METRIC OP VALUE" on a measured value, in the metric's unit
// (`write_stream.throughput >= 90Gbps`, `drops == 0`, `completions.RETRY_EXC_ERR == 0`).
// Metrics are per workload (WORKLOAD.throughput, .latency_p99, ...) or totals;
// `expect_metrics()` lists them all. The conditions are spec.hpp's Expectation.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/spec.hpp"
#include "scenario/summary.hpp"

namespace YAML {
class Node;
}

namespace rnicsim::scenario {

class Reader;

// Reads and validates `expect:` (metric names against the scenario's workloads).
std::vector<Expectation> read_expectations(const Reader& r, const YAML::Node& n, const Scenario& s);
std::vector<ExpectResult> check_expectations(const std::vector<Expectation>& e, const Summary& s);
// Every metric name with its unit and meaning (WORKLOAD stands for a workload's name).
std::vector<std::string> expect_metrics();
// An ibv_wc_status's name without IBV_WC_ ("SUCCESS", "RETRY_EXC_ERR"), by value.
std::string_view completion_status_name(size_t status);

}  // namespace rnicsim::scenario
