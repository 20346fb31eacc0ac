// `expect:` turns a scenario into a regression test. Each entry is one condition
// on a measured value, written "METRIC OP VALUE" with the value in the metric's
// unit:
//
//   expect:
//     - write_stream.throughput >= 90Gbps
//     - pingpong.latency_p99 < 2us
//     - drops == 0
//     - completions.RETRY_EXC_ERR == 0
//
// Metrics are per workload (WORKLOAD.throughput, .message_rate, .messages,
// .latency_p50/.latency_p99/.latency_min/.latency_max, .slowdown_p50/.slowdown_p99/
// .slowdown_max for flows) or totals (drops, retransmissions, rx_errors, packets,
// data_packets, messages, simulated_time, ce_marked, cnps, completions.STATUS with
// an ibv_wc_status name without IBV_WC_). `expect_metrics()` lists them.
#pragma once

#include <string>
#include <vector>

namespace YAML {
class Node;
}

namespace rnicsim::scenario {

class Reader;
struct Scenario;
struct Summary;

enum class ExpectOp : uint8_t { Less, LessEqual, Greater, GreaterEqual, Equal, NotEqual };

struct Expectation {
  std::string text;    // as written
  std::string metric;  // e.g. write_stream.throughput
  ExpectOp op = ExpectOp::Equal;
  double value = 0;    // in the metric's base unit (bits/s, seconds, count, ratio)
};

struct ExpectResult {
  Expectation expectation;
  double measured = 0;
  std::string measured_text;  // with its unit
  bool ok = false;
};

// Reads and validates `expect:` (metric names against the scenario's workloads).
std::vector<Expectation> read_expectations(const Reader& r, const YAML::Node& n, const Scenario& s);
std::vector<ExpectResult> check_expectations(const std::vector<Expectation>& e, const Summary& s);
// Every metric name with its unit and meaning (WORKLOAD stands for a workload's name).
std::vector<std::string> expect_metrics();
// An ibv_wc_status's name without IBV_WC_ ("SUCCESS", "RETRY_EXC_ERR"), by value.
std::string_view completion_status_name(size_t status);

}  // namespace rnicsim::scenario
