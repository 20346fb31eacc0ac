// The built-in congestion control algorithms, one row each: the name scenarios
// and outputs use, and its maker. The generic block knows none of them.
#include <array>

#include "nic_model/congestion_control.hpp"
#include "nic_model/dcqcn.hpp"

namespace rnicsim::nic {
namespace {

constexpr std::array<CcAlgorithmEntry, 2> kAlgorithms{{
    {"none", nullptr},
    {"dcqcn", &make_algorithm<Dcqcn>},
}};

}  // namespace

CcAlgorithmTable cc_algorithms() { return kAlgorithms; }

}  // namespace rnicsim::nic
