// The run options of a scenario test: no report printed.
#pragma once

#include "scenario/runner.hpp"

namespace rnicsim::scenario {

inline RunOptions quiet() {
  RunOptions o;
  o.quiet = true;
  return o;
}

}  // namespace rnicsim::scenario
