// Where a flows workload's flows can come from besides a list or a CSV file: the
// ns-3 RDMA simulators' flow file, a flow-size distribution (CDF file) for Poisson
// arrivals, and a random permutation of hosts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scenario/spec.hpp"
#include "sim/random.hpp"

namespace rnicsim::scenario {

// The ns-3 RDMA simulators' flow file: the number of flows N on the first line,
// then N lines "src dst priority dport size start_time" (node indices, the
// priority group, the destination port, bytes, seconds). Node i is hosts[i]. The
// flows are RDMA WRITEs; dport is read and checked but not used (a QP pair carries
// the flows of a (src, dst, priority)). Errors name path:line:column.
std::vector<FlowSpec> read_ns3_flow_file(const std::string& path, const std::vector<HostSpec>& hosts);
// The same from the file's text, already read; errors still name `path`.
std::vector<FlowSpec> parse_ns3_flows(const std::string& path, std::string text, const std::vector<HostSpec>& hosts);

// Whether a file's text looks like an ns-3 flow file: its first line that is not
// blank or a '#' comment is a single whole number.
bool looks_like_ns3_flow_text(const std::string& file_text);

// A flow-size distribution, as those simulators' traffic generators read it: one
// point a line, "size cumulative_probability", sizes and probabilities never
// decreasing, the last probability 100 (percent) or 1 (a fraction); '#' starts a
// comment line. Sizes between two points are interpolated linearly; a probability
// at the first point is the chance of exactly that size.
class SizeCdf {
public:
  // Throws ScenarioError naming path:line:column.
  static SizeCdf read(const std::string& path);
  // A size drawn from the distribution (bytes, at least 1).
  uint64_t sample(sim::RandomStream& r) const;
  double mean() const;

  struct Point {
    double size, p;  // p as a fraction
  };
  std::vector<Point> points;
};

// A random derangement of 0..n-1 (n >= 2): perm[i] != i for every i, drawn
// uniformly from all derangements.
std::vector<size_t> random_derangement(size_t n, sim::RandomStream& r);

}  // namespace rnicsim::scenario
