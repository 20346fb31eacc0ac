#include "nic_model/congestion_control.hpp"

#include "nic_model/named_rows.hpp"

namespace rnicsim::nic {

std::vector<CcAlgorithmEntry> cc_algorithms_with(const CcAlgorithmEntry& extra) {
  const CcAlgorithmTable built_in = cc_algorithms();
  std::vector<CcAlgorithmEntry> table(built_in.begin(), built_in.end());
  table.push_back(extra);
  return table;
}

std::optional<CcAlgorithm> cc_algorithm_named(std::string_view name, CcAlgorithmTable table) {
  if (const auto i = row_named(table, name)) return CcAlgorithm{static_cast<uint8_t>(*i)};
  return std::nullopt;
}

std::string_view to_string(CcAlgorithm a, CcAlgorithmTable table) {
  return a.row < table.size() ? table[a.row].name : "?";
}

std::string cc_algorithm_names(std::string_view separator, CcAlgorithmTable table) {
  return row_names(table, separator);
}

std::unique_ptr<CongestionControl> make_congestion_control(const CongestionParams& p, uint64_t line_rate_bps,
                                                           CcAlgorithmTable table) {
  const auto make = p.algorithm.row < table.size() ? table[p.algorithm.row].make : nullptr;
  return make != nullptr ? make(p, line_rate_bps) : nullptr;
}

}  // namespace rnicsim::nic
