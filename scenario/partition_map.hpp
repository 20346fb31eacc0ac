// Which partition each node of a scenario's world (host or switch) runs in.
// The default cut is by topology: a switch with hosts (a leaf, a ToR, a
// fat-tree edge) goes whole with its hosts; a perftest run's two hosts go
// together (its sides share state, as perftest's out-of-band exchange would);
// these groups fill the partitions in scenario order, balanced by hosts, and
// the switches without hosts (spines, aggregation, cores) are dealt out in
// turn. Links between partitions are the cut: each needs a delay, the
// window of the engine.
#pragma once

#include <cstdint>
#include <vector>

#include "scenario/spec.hpp"

namespace rnicsim::scenario {

struct PartitionMap {
  uint32_t partitions = 1;
  std::vector<uint32_t> of_node;  // per topology node
};

// `partitions` >= 1; some partitions may hold nothing when there are fewer groups.
PartitionMap partition_map(const Scenario& s, uint32_t partitions);

// The partitions a run takes when the scenario does not say: one per thread
// for a world large enough that a window's work outweighs its barriers
// (kPartitionedHosts hosts or more, in at least as many groups as threads),
// else one. Partitions beyond the threads only add waiting at each window.
inline constexpr uint32_t kPartitionedHosts = 64;
uint32_t default_partitions(const Scenario& s, unsigned threads);

}  // namespace rnicsim::scenario
