// `rnicsim params`: every scenario parameter with its unit, default and meaning.
#pragma once

#include <ostream>
#include <vector>

#include "scenario/keys.hpp"
#include "scenario/nic_keys.hpp"

namespace rnicsim::scenario {

// The rows `rnicsim params` prints for a section: each key by its full path.
std::vector<ParamInfo> section_parameters(const KeySection& s);
void print_params(std::ostream& out);

}  // namespace rnicsim::scenario
