#include "nic_model/congestion_control.hpp"

#include "nic_model/dcqcn.hpp"

namespace rnicsim::nic {

std::string_view to_string(CcAlgorithm a) {
  switch (a) {
    case CcAlgorithm::None: return "none";
    case CcAlgorithm::Dcqcn: return "dcqcn";
  }
  return "?";
}

std::unique_ptr<CongestionControl> make_congestion_control(const CongestionParams& p, uint64_t line_rate_bps) {
  switch (p.algorithm) {
    case CcAlgorithm::None: return nullptr;
    case CcAlgorithm::Dcqcn: return std::make_unique<Dcqcn>(p, line_rate_bps);
  }
  return nullptr;
}

}  // namespace rnicsim::nic
