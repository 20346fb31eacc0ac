// The `nic:` settings of a scenario: every field of nic::NicParams (and its
// PcieParams and CongestionParams) by its field name, with units, and named
// presets: `nic: {preset: cx5_100g_roce, mtu: 1024, pcie: {lanes: 8}}`. A preset
// is a file NAME.yaml of the same keys (and `description`; it may start from
// another with `preset:`), found by find_preset, or a path ending in .yaml
// (relative to the scenario file).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nic_model/nic_params.hpp"
#include "scenario/yaml_reader.hpp"

namespace rnicsim::scenario {

struct NicSettings {
  nic::NicParams params;
  std::string preset;            // the outermost preset named, if any
  std::optional<uint32_t> mtu;   // `mtu` as set (the default path MTU of QPs)
};

// Applies the mapping `n` to `s` (presets first, then the keys beside them).
// `base_dir`: the directory relative paths and presets are looked up from.
void read_nic_settings(const Reader& r, const YAML::Node& n, const std::string& base_dir, NicSettings& s);

// Where `preset` is found from a scenario in `base_dir`, and the directories
// searched, in order: presets/ and scenarios/presets/ beside the scenario and in
// each directory above it, the source tree's scenarios/presets, then the
// directories of $RNICSIM_PRESETS (colon-separated).
std::optional<std::string> find_preset(const std::string& preset, const std::string& base_dir,
                                       std::vector<std::string>* searched = nullptr);

// The keys `nic:` accepts (field names; aliases kept for older scenarios excluded).
std::vector<std::string_view> nic_keys();
std::vector<std::string_view> pcie_keys();
std::vector<std::string_view> congestion_keys();
// A parameter as `rnicsim params` lists it.
struct ParamInfo {
  std::string path;         // nic.mtu, nic.pcie.lanes
  std::string default_value;
  std::string unit;
  std::string range;        // empty: any value of the unit
  std::string description;
};
// Every NIC parameter (NicParams, PcieParams, CongestionParams), from the key tables.
std::vector<ParamInfo> nic_parameters();

// How many members of NicParams / PcieParams the keys cover (each field has one key).
size_t nic_keys_covering_fields();
size_t pcie_keys_covering_fields();
size_t congestion_keys_covering_fields();

// The number of members of an aggregate, counted by brace-initialising it from
// values that convert to anything. Tests compare it with the keys above, so a new
// NicParams field without a key is caught.
namespace detail {
struct AnyValue {
  template <class T>
  constexpr operator T() const;  // declared only: used in unevaluated contexts
};
template <class T, class... A>
constexpr size_t count_fields() {
  if constexpr (requires { T{A{}..., AnyValue{}}; })
    return count_fields<T, A..., AnyValue>();
  else
    return sizeof...(A);
}
}  // namespace detail
template <class T>
constexpr size_t aggregate_field_count() {
  return detail::count_fields<T>();
}

}  // namespace rnicsim::scenario
