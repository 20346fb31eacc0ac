#include "sim/rank_link.hpp"

#include <cstdio>
#include <cstdlib>

namespace rnicsim::sim {

void SingleRank::abort(std::string_view why) {
  std::fprintf(stderr, "rnicsim: %.*s\n", static_cast<int>(why.size()), why.data());
  std::fflush(stderr);
  std::_Exit(1);
}

}  // namespace rnicsim::sim
