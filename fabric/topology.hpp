// A fabric's shape as plain data: nodes (hosts and switches) and the links
// between them, and the routes switches forward by. Generators build the usual
// data-centre shapes; routes are all shortest paths (hop count), so equal-cost
// paths become ECMP groups. Nothing here touches the scheduler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabric/port.hpp"
#include "sim/time.hpp"

namespace rnicsim::fabric {

struct TopoNode {
  std::string name;
  bool is_switch = false;
};

struct TopoLink {
  uint32_t a = 0, b = 0;  // node indices
  uint64_t rate_bps = 100'000'000'000;
  sim::Duration delay = sim::Duration::ns(1000);
  double loss = 0.0;
  GilbertElliott gilbert_elliott;
  // Intervals [down, up) during which the link (both directions) is down.
  std::vector<std::pair<sim::Duration, sim::Duration>> down;
};

struct Topology {
  std::vector<TopoNode> nodes;
  std::vector<TopoLink> links;

  uint32_t add_node(std::string name, bool is_switch);
  void add_link(uint32_t a, uint32_t b, uint64_t rate_bps, sim::Duration delay, double loss = 0.0);
  // -1 if no node has that name.
  int find(const std::string& name) const;
  std::vector<uint32_t> hosts() const;
  // The link indices at each node, in the order links were added (a switch's
  // port i is its i-th link).
  std::vector<std::vector<uint32_t>> links_of_nodes() const;
  // Hop counts from every node to node `to`, never passing through another
  // host (-1: unreachable).
  std::vector<int> distances_to(uint32_t to) const;
  // The same over `at`, links_of_nodes() made once for many destinations.
  std::vector<int> distances_to(uint32_t to, const std::vector<std::vector<uint32_t>>& at) const;
  // The sum of link delays along one shortest path (nullopt-like: max() if
  // unreachable).
  sim::Duration path_delay(uint32_t from, uint32_t to) const;
  // The rate of a host's first link (0 if it has none).
  uint64_t access_rate(uint32_t host) const;
};

// Per switch (node index) and destination host (node index): the switch's port
// numbers (positions in links_of_nodes()[switch]) on shortest paths to it.
struct SwitchRoutes {
  uint32_t node = 0;
  std::vector<std::pair<uint32_t, std::vector<uint16_t>>> to_host;  // (host node, ports)
};
std::vector<SwitchRoutes> shortest_path_routes(const Topology& t);

// Generators. Hosts are named from `host_names` in order when it is not empty
// (it must then list exactly the generated number of hosts), else h0, h1, ...
struct LinkShape {
  uint64_t rate_bps = 100'000'000'000;
  sim::Duration delay = sim::Duration::ns(1000);
};
// Every host on one switch "sw0".
Topology single_switch(const std::vector<std::string>& host_names, LinkShape link);
// `leaves` leaf switches "leaf<i>" each with `hosts_per_leaf` hosts (leaf-major
// order), every leaf linked to every one of `spines` spines "spine<j>".
Topology leaf_spine(uint32_t leaves, uint32_t spines, uint32_t hosts_per_leaf,
                    const std::vector<std::string>& host_names, LinkShape host_link, LinkShape fabric_link);
// A k-ary fat-tree (k even): k pods of k/2 edge "edge<p>_<i>" and k/2
// aggregation "agg<p>_<i>" switches, (k/2)^2 cores "core<i>", k^3/4 hosts.
Topology fat_tree(uint32_t k, const std::vector<std::string>& host_names, LinkShape link);

}  // namespace rnicsim::fabric
