// A scenario file, parsed and validated. Every error names file:line:column and
// what was expected.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nic_model/nic_params.hpp"
#include "sim/time.hpp"

namespace rnicsim::scenario {

class ScenarioError : public std::runtime_error {
public:
  ScenarioError(std::string file, int line, int column, const std::string& message)
      : std::runtime_error(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message),
        file_(std::move(file)), line_(line), column_(column) {}
  int line() const { return line_; }
  int column() const { return column_; }

private:
  std::string file_;
  int line_, column_;
};

enum class LinkLayer : uint8_t { RoceV2Ipv4, RoceV2Ipv6 };
enum class WorkloadOp : uint8_t { Write, WriteImm, Send };
enum class WorkloadPattern : uint8_t { Bandwidth, Latency };

struct HostSpec {
  std::string name;
  std::string ip;  // dotted IPv4 (or IPv6 text for roce_v2_ipv6)
};

struct LinkSpec {
  std::string a, b;
  uint64_t rate_bps = 100'000'000'000;
  sim::Duration delay = sim::Duration::ns(1000);
  double loss = 0.0;
};

struct WorkloadSpec {
  std::string name;
  WorkloadOp op = WorkloadOp::Write;
  WorkloadPattern pattern = WorkloadPattern::Bandwidth;
  std::string from, to;
  uint64_t size = 65536;
  uint64_t count = 1000;
  uint32_t tx_depth = 128;
  std::optional<sim::Duration> start;  // absent: when the previous workload ends
};

struct Scenario {
  std::string file;
  std::string name;
  uint64_t seed = 1;
  LinkLayer link_layer = LinkLayer::RoceV2Ipv4;
  std::optional<sim::Duration> duration;
  std::vector<HostSpec> hosts;
  std::vector<LinkSpec> links;
  nic::NicParams nic;
  uint32_t path_mtu = 4096;
  std::vector<WorkloadSpec> workloads;
};

// Parses and validates; throws ScenarioError.
Scenario parse_scenario(const std::string& text, const std::string& file_name);
Scenario load_scenario(const std::string& path);

}  // namespace rnicsim::scenario
