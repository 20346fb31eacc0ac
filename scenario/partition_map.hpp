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

}  // namespace rnicsim::scenario
