// The `faults:` section of a scenario: rules that drop, corrupt or delay chosen
// packets on a link (both directions) or a host's side of its link, e.g.
//   faults: [{host: bob, direction: rx, action: drop, opcode: RC_RDMA_WRITE_MIDDLE, psn: 5}]
// Random and burst loss and outages are properties of a link (links: loss,
// gilbert_elliott, down).
#pragma once

#include <vector>

#include "scenario/spec.hpp"
#include "scenario/yaml_reader.hpp"

namespace rnicsim::scenario {

std::vector<FaultSpec> read_faults(const Reader& r, const YAML::Node& n, const KnownHost& known_host);

}  // namespace rnicsim::scenario
