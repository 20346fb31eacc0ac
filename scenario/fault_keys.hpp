// The `faults:` section of a scenario: rules that drop, corrupt or delay chosen
// packets (see fabric/fault_model.hpp). Random and burst loss and outages are
// properties of a link (links: loss, gilbert_elliott, down).
//
//   faults:
//     - link: [alice, bob]            # both directions of a link ...
//       action: corrupt
//       psn: 7
//     - host: bob                     # ... or what bob receives (rx) or sends (tx), or both
//       direction: rx
//       action: drop                  # drop | corrupt | delay (with delay: 10us)
//       opcode: RC_RDMA_WRITE_MIDDLE  # IBTA name or number; psn and qpn (destination QP) too
//       psn: 5
//       nth: 1                        # the first matching packet ...
//       count: 1                      # ... and count - 1 more
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fabric/fault_model.hpp"

namespace YAML {
class Node;
}
namespace rnicsim::fabric {
class Port;
}

namespace rnicsim::scenario {

class Reader;

struct FaultSpec {
  // Where: a link (both directions) or a host's side of its link.
  std::string link_a, link_b;
  std::string host;
  bool tx = false, rx = false;
  // What.
  fabric::FaultRule rule;
};

using HostNameCheck = std::function<std::string(const YAML::Node&, const std::string&)>;
std::vector<FaultSpec> read_faults(const Reader& r, const YAML::Node& n, const HostNameCheck& known_host);

// The ports a spec acts on, given each host's port (whose peer is the other end
// of its link), in a fixed order; fails with a message if a link does not exist.
std::vector<fabric::Port*> fault_ports(const FaultSpec& f,
                                       const std::function<fabric::Port*(const std::string&)>& host_port);
void apply_fault(const FaultSpec& f, fabric::Port& port);

}  // namespace rnicsim::scenario
