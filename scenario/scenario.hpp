// Loads a scenario file into a Scenario (spec.hpp), parsed and validated. Every
// error is a ScenarioError naming file:line:column and what was expected.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "scenario/error.hpp"
#include "scenario/spec.hpp"

namespace rnicsim::scenario {

// Parses and validates; throws ScenarioError. Relative paths in the scenario (NIC
// presets, flow CSV files) are looked up from the directory of `file_name`.
Scenario parse_scenario(const std::string& text, const std::string& file_name);
// The same from a loaded YAML tree (after --set overrides or a sweep point).
// `sweep:` is not read here (see sweep.hpp).
Scenario parse_scenario(const YAML::Node& root, const std::string& file_name);
// The YAML tree of a scenario's text; a syntax error is a ScenarioError.
YAML::Node load_yaml(const std::string& text, const std::string& file_name);
Scenario load_scenario(const std::string& path);

}  // namespace rnicsim::scenario
