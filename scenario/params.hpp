// `rnicsim params`: every scenario parameter with its unit, default and meaning.
#pragma once

#include <ostream>

namespace rnicsim::scenario {

void print_params(std::ostream& out);

}  // namespace rnicsim::scenario
