#include "scenario/params.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "scenario/expect.hpp"
#include "scenario/keys.hpp"
#include "scenario/nic_keys.hpp"

namespace rnicsim::scenario {
namespace {

void print_rows(std::ostream& out, const std::vector<ParamInfo>& rows) {
  size_t w0 = 0, w1 = 0, w2 = 0;
  for (const ParamInfo& p : rows) {
    w0 = std::max(w0, p.path.size());
    w1 = std::max(w1, p.default_value.size());
    w2 = std::max(w2, p.unit.size());
  }
  for (const ParamInfo& p : rows) {
    out << p.path << std::string(w0 - p.path.size() + 2, ' ') << p.default_value
        << std::string(w1 - p.default_value.size() + 2, ' ') << p.unit << std::string(w2 - p.unit.size() + 2, ' ')
        << p.description;
    if (!p.range.empty()) out << " [" << p.range << "]";
    out << '\n';
  }
}

std::string section_title(const KeySection& s) {
  if (s.path.empty()) return s.when.empty() ? "top level" : std::string(s.when);
  return std::string(s.path) + (s.when.empty() ? "" : " (" + std::string(s.when) + ")");
}

}  // namespace

std::vector<KeySection> all_key_sections() {
  std::vector<KeySection> v;
  for (auto part : {scenario_key_sections, fabric_key_sections, nic_key_sections, workload_key_sections,
                    fault_key_sections})
    for (const KeySection& s : part()) v.push_back(s);
  return v;
}

std::vector<ParamInfo> section_parameters(const KeySection& s) {
  std::vector<ParamInfo> rows;
  for (const KeyInfo& k : s.keys)
    rows.push_back({s.path.empty() ? std::string(k.name) : std::string(s.path) + "." + std::string(k.name),
                    k.default_value.empty() ? "-" : std::string(k.default_value), std::string(k.unit),
                    std::string(k.range), std::string(k.description)});
  return rows;
}

void print_params(std::ostream& out) {
  out << "# Every key of a scenario file, by the map it is in: key, default (- if none or required), unit,\n"
         "# meaning [range]. PATH[] is an element of the list PATH.\n";
  for (const KeySection& s : all_key_sections()) {
    out << "\n# " << section_title(s) << '\n';
    print_rows(out, section_parameters(s));
  }
  out << "\n# NIC parameters (nic: or a preset)\n";
  print_rows(out, nic_parameters());
  out << "\n# expect: metrics\n";
  for (const std::string& m : expect_metrics()) out << m << '\n';
}

}  // namespace rnicsim::scenario
