#include "scenario/params.hpp"

#include <algorithm>
#include <span>
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

// The paths of the maps `parts` (as in a section's path: "links[]", "down[]")
// lead to under `node`, each list element by its name or index.
void expand(const YAML::Node& node, std::span<const std::string> parts, const std::string& prefix,
            std::vector<std::string>& out) {
  if (parts.empty()) {
    out.push_back(prefix);
    return;
  }
  const bool list = parts.front().ends_with("[]");
  const std::string key = list ? parts.front().substr(0, parts.front().size() - 2) : parts.front();
  const std::string path = prefix.empty() ? key : prefix + "." + key;
  // (A missing key of a const node is an invalid node: asked anything but
  // IsDefined, it throws.)
  const YAML::Node child = node.IsDefined() && node.IsMap() && node[key] ? node[key] : YAML::Node();
  if (!list) return expand(child, parts.subspan(1), path, out);
  if (!child.IsSequence() || child.size() == 0) return expand(YAML::Node(), parts.subspan(1), path + ".0", out);
  for (size_t i = 0; i < child.size(); ++i) {
    const YAML::Node e = child[i];
    const bool named = e.IsMap() && e["name"] && e["name"].IsScalar();
    expand(e, parts.subspan(1), path + "." + (named ? e["name"].Scalar() : std::to_string(i)), out);
  }
}

std::vector<std::string> split_dots(std::string_view path) {
  std::vector<std::string> parts;
  for (size_t at = 0; !path.empty() && at != std::string_view::npos;) {
    const size_t dot = path.find('.', at);
    parts.emplace_back(path.substr(at, dot == std::string_view::npos ? dot : dot - at));
    at = dot == std::string_view::npos ? dot : dot + 1;
  }
  return parts;
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

std::vector<OverridePath> override_paths(const YAML::Node& root) {
  std::vector<OverridePath> paths;
  for (const KeySection& s : all_key_sections()) {
    if (!s.in_scenario) continue;
    std::vector<std::string> maps;
    expand(root, split_dots(s.path), "", maps);
    for (const std::string& m : maps)
      for (const KeyInfo& k : s.keys) paths.push_back({m.empty() ? std::string(k.name) : m + "." + std::string(k.name), s.when});
  }
  for (const ParamInfo& p : nic_parameters()) paths.push_back({p.path, ""});
  return paths;
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
