#include "scenario/partition_map.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace rnicsim::scenario {
namespace {

// Nodes that must share a partition, joined.
class Groups {
public:
  explicit Groups(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0u); }
  uint32_t root(uint32_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void join(uint32_t a, uint32_t b) {
    a = root(a);
    b = root(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

private:
  std::vector<uint32_t> parent_;
};

uint32_t node_of(const fabric::Topology& t, const std::string& name) {
  const int n = t.find(name);
  if (n < 0) throw std::invalid_argument("no node " + name);
  return static_cast<uint32_t>(n);
}

// The groups of nodes that go whole into a partition: a switch with its hosts,
// a perftest run's two hosts. `order`: the groups with hosts, in the order of
// their first host; `hosts`: per group root, its hosts.
struct HostGroups {
  Groups groups;
  std::vector<uint32_t> order, hosts;
  uint32_t total = 0;
};

HostGroups host_groups(const Scenario& s) {
  const fabric::Topology& t = s.fabric.topology;
  HostGroups h{Groups(t.nodes.size()), {}, std::vector<uint32_t>(t.nodes.size(), 0)};
  for (const fabric::TopoLink& l : t.links)
    if (t.nodes[l.a].is_switch != t.nodes[l.b].is_switch) h.groups.join(l.a, l.b);  // a host and its switch
  for (const WorkloadSpec& w : s.workloads)
    if (w.pattern != WorkloadPattern::Flows) h.groups.join(node_of(t, w.from), node_of(t, w.to));
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    if (t.nodes[n].is_switch) continue;
    const uint32_t g = h.groups.root(n);
    if (h.hosts[g]++ == 0) h.order.push_back(g);
    ++h.total;
  }
  return h;
}

}  // namespace

PartitionMap partition_map(const Scenario& s, uint32_t partitions) {
  if (partitions == 0) throw std::invalid_argument("at least one partition");
  const fabric::Topology& t = s.fabric.topology;
  HostGroups h = host_groups(s);
  PartitionMap map{partitions, std::vector<uint32_t>(t.nodes.size(), 0)};
  std::vector<uint32_t> part_of_group(t.nodes.size(), UINT32_MAX);
  uint64_t before = 0;
  for (uint32_t g : h.order) {
    part_of_group[g] = static_cast<uint32_t>(before * partitions / std::max<uint32_t>(h.total, 1));
    before += h.hosts[g];
  }
  uint32_t dealt = 0;
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    const uint32_t g = h.groups.root(n);
    map.of_node[n] = part_of_group[g] != UINT32_MAX ? part_of_group[g] : dealt++ % partitions;
  }
  return map;
}

uint32_t default_partitions(const Scenario& s, unsigned threads) {
  const HostGroups h = host_groups(s);
  if (threads < 2 || h.total < kPartitionedHosts || h.order.size() < threads) return 1;
  return threads;
}

}  // namespace rnicsim::scenario
