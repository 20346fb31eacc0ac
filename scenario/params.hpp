// `rnicsim params`: every scenario parameter with its unit, default and meaning.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "scenario/keys.hpp"
#include "scenario/nic_keys.hpp"

namespace rnicsim::scenario {

// The rows `rnicsim params` prints for a section: each key by its full path.
std::vector<ParamInfo> section_parameters(const KeySection& s);
void print_params(std::ostream& out);

// A PATH that `--set PATH=VALUE` can name, and when its map takes it ("" always).
struct OverridePath {
  std::string path;
  std::string_view when;
};
// Every key of every map of a scenario file, from the key tables: an element of a
// list by its `name` (else its index) where `root`, the scenario's tree, has the
// list, else as element 0 (links.0.loss).
std::vector<OverridePath> override_paths(const YAML::Node& root);

}  // namespace rnicsim::scenario
