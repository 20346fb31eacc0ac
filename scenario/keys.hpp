// The keys of the scenario language, each declared once: a table per map
// (section) beside the loader that reads it. The loader checks a map against its
// table (a key not in it is an unknown key), and `rnicsim params` prints the
// tables, so what is accepted and what is listed cannot differ. A new key is one
// row in its table (and the code that reads it).
//
// The NIC's keys have their own tables (nic_keys.cpp), which also hold the
// member each key sets.
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace rnicsim::scenario {

struct KeyInfo {
  std::string_view name;
  std::string_view default_value;  // what the loader applies without the key; "" if required or none
  std::string_view unit;           // how the value is written
  std::string_view range;          // "" if any value of the unit
  std::string_view description;
};
using KeyTable = std::span<const KeyInfo>;

// A map of the language with the keys one table declares.
struct KeySection {
  std::string_view path;  // where the map is: "pfc", "links[]", "workloads[].flows"
  std::string_view when;  // "" or when the map takes these keys: "kind: leaf_spine"
  KeyTable keys;
  bool in_scenario = true;  // false: the keys of another file (a NIC preset's)
};

// The sections of each loader, for `rnicsim params` and the tests.
std::vector<KeySection> scenario_key_sections();  // top level, hosts, host timing (scenario.cpp)
std::vector<KeySection> fabric_key_sections();    // links, topologies, switch, pfc, captures
std::vector<KeySection> workload_key_sections();  // workloads, flows, generators
std::vector<KeySection> fault_key_sections();     // faults
std::vector<KeySection> nic_key_sections();       // nic: beside the NIC parameters
// All of them, in the order `rnicsim params` prints them.
std::vector<KeySection> all_key_sections();

}  // namespace rnicsim::scenario
