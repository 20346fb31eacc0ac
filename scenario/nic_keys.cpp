#include "scenario/nic_keys.hpp"

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <span>
#include <variant>

#include "nic_model/param_table.hpp"
#include "scenario/text_file.hpp"
#include "scenario/units.hpp"

#ifndef RNICSIM_SOURCE_DIR
#define RNICSIM_SOURCE_DIR ""
#endif

namespace rnicsim::scenario {
namespace {

namespace fs = std::filesystem;

using nic::CongestionParams;
using nic::NicParams;
using nic::PcieParams;
using Kind = nic::ParamKind;
template <class T>
using Key = nic::ParamKey<T>;
template <class T>
using Keys = std::span<const Key<T>>;

// The keys of `nic:` besides the parameters.
const KeyInfo kNicMapKeys[] = {
    {"preset", "none (the parameters' defaults)", "name | FILE.yaml", "", "a NIC preset the keys beside it override"},
    {"pcie", "the pcie keys' defaults", "map", "", "the PCIe link and host memory (nic.pcie.*)"},
    {"congestion_control", "none", "map", "", "congestion control (nic.congestion_control.*)"},
};
// A preset file also takes these.
const KeyInfo kPresetFileKeys[] = {
    {"description", "", "text", "", "what the preset models"},
};

// Names older scenarios use.
struct Alias {
  std::string_view name, pcie_key, nic_key;
};
constexpr Alias kAliases[] = {
    {"clock", "", "clock_hz"},
    {"pcie_gen", "generation", ""},
    {"pcie_lanes", "lanes", ""},
    {"pcie_latency", "latency", ""},
};

// A parameter's value as read, in the form its kind takes.
struct ParamValue {
  uint64_t n = 0;
  sim::Duration d;
  nic::CcAlgorithm algorithm;  // none
  nic::LossRecovery recovery{};
};

// The kinds that are a number: counts, cycles, bytes, frequencies, IB MTUs, lanes, rates.
uint64_t read_number(const Reader& r, const YAML::Node& v, const std::string& what, Kind kind, uint64_t lo, uint64_t hi,
                     bool pow2) {
  uint64_t n = 0;
  switch (kind) {
    case Kind::Count:
    case Kind::Cycles: {
      const std::string unit = kind == Kind::Cycles ? " (cycles)" : "";
      n = r.integer(v, what + unit, lo, hi);
      break;
    }
    case Kind::Bytes: {
      n = r.parsed<uint64_t>(v, what + " (bytes, like 256 or 4KiB)", parse_size);
      if (n < lo || n > hi)
        r.fail(v, what + " must be from " + std::to_string(lo) + " to " + std::to_string(hi) + " bytes");
      if (pow2 && (n & (n - 1)) != 0) r.fail(v, what + " must be a power of two");
      break;
    }
    case Kind::Frequency:
      n = r.parsed<uint64_t>(v, what + " (a frequency like 500MHz)", parse_frequency);
      if (n < lo || n > hi) r.fail(v, what + " must be from 1MHz to 100GHz");
      break;
    case Kind::IbMtu:
      n = r.integer(v, what, lo, hi);
      if (n != 256 && n != 512 && n != 1024 && n != 2048 && n != 4096)
        r.fail(v, what + " must be an IB MTU: 256, 512, 1024, 2048 or 4096");
      break;
    case Kind::Lanes:
      n = r.integer(v, what, lo, hi);
      if (n != 1 && n != 2 && n != 4 && n != 8 && n != 16 && n != 32)
        r.fail(v, what + " must be 1, 2, 4, 8, 16 or 32");
      break;
    case Kind::Rate:
      // 0 is a rate too: for these keys it means "the line rate".
      n = r.scalar(v, what) == "0" ? 0 : r.parsed<uint64_t>(v, what + " (a rate like 5Mbps or 100Gbps)", parse_rate);
      break;
    case Kind::Time:
    case Kind::Algorithm:
    case Kind::Recovery:
      break;  // not numbers: read_value
  }
  return n;
}

ParamValue read_value(const Reader& r, const YAML::Node& v, const std::string& what, Kind kind, uint64_t lo,
                      uint64_t hi, bool pow2) {
  ParamValue p;
  if (kind == Kind::Time) {
    p.d = r.parsed<sim::Duration>(v, what + " (a time like 250ns)", parse_duration);
  } else if (kind == Kind::Algorithm) {
    const std::string name = r.scalar(v, what);
    if (const auto a = nic::cc_algorithm_named(name)) p.algorithm = *a;
    else r.fail(v, what + " must be one of " + nic::cc_algorithm_names(", ") + ", not '" + name + "'");
  } else if (kind == Kind::Recovery) {
    const std::string name = r.scalar(v, what);
    if (const auto m = nic::loss_recovery_named(name)) p.recovery = *m;
    else r.fail(v, what + " must be one of " + nic::loss_recovery_names(", ") + ", not '" + name + "'");
  } else {
    p.n = read_number(r, v, what, kind, lo, hi, pow2);
  }
  return p;
}

// Reads the value of key `k` and sets the member it names in `target`.
template <class T>
void apply(const Reader& r, const YAML::Node& v, const std::string& what, const Key<T>& k, T& target) {
  const ParamValue p = read_value(r, v, what, k.kind, k.lo, k.hi, k.pow2);
  std::visit(
      [&](auto m) {
        using V = std::remove_reference_t<decltype(target.*m)>;
        if constexpr (std::is_same_v<V, sim::Duration>) {
          target.*m = p.d;
        } else if constexpr (std::is_same_v<V, nic::CcAlgorithm>) {
          target.*m = p.algorithm;
        } else if constexpr (std::is_same_v<V, nic::LossRecovery>) {
          target.*m = p.recovery;
        } else {
          target.*m = static_cast<V>(p.n);
        }
      },
      k.member);
}

template <class T>
const Key<T>* find_key(Keys<T> keys, std::string_view name) {
  for (const Key<T>& k : keys)
    if (k.name == name) return &k;
  return nullptr;
}

void read_pcie(const Reader& r, const YAML::Node& n, const std::string& prefix, PcieParams& p) {
  std::vector<std::string_view> allowed;
  for (const auto& k : nic::pcie_param_keys()) allowed.push_back(k.name);
  r.expect_map_of(n, "pcie settings", allowed);
  for (const auto& k : nic::pcie_param_keys())
    if (n[std::string(k.name)]) apply(r, n[std::string(k.name)], prefix + "pcie." + std::string(k.name), k, p);
}

void read_congestion(const Reader& r, const YAML::Node& n, const std::string& prefix, CongestionParams& p) {
  std::vector<std::string_view> allowed;
  for (const auto& k : nic::congestion_param_keys()) allowed.push_back(k.name);
  r.expect_map_of(n, "congestion_control settings", allowed);
  for (const auto& k : nic::congestion_param_keys())
    if (n[std::string(k.name)])
      apply(r, n[std::string(k.name)], prefix + "congestion_control." + std::string(k.name), k, p);
}

bool valid_preset_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

bool is_file_reference(const std::string& s) {
  return s.size() > 5 && s.compare(s.size() - 5, 5, ".yaml") == 0;
}

void read_settings(const Reader& r, const YAML::Node& n, const std::string& base_dir, NicSettings& s, int depth,
                   bool is_preset_file);

void load_preset(const Reader& r, const YAML::Node& at, const std::string& name, const std::string& base_dir,
                 NicSettings& s, int depth) {
  if (depth > 8) r.fail(at, "presets nest more than 8 deep (does a preset name itself?)");
  std::vector<std::string> searched;
  const auto path = find_preset(name, base_dir, &searched);
  if (!path) {
    std::string where;
    for (const auto& d : searched) where += (where.empty() ? "" : ", ") + d;
    r.fail(at, "no NIC preset '" + name + "' (looked for " + (is_file_reference(name) ? name : name + ".yaml") +
                   " in: " + where + ")");
  }
  const std::string text = read_text_file(*path, kMaxScenarioFileBytes);
  const Reader pr(*path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    pr.fail(e.mark, "YAML syntax error: " + e.msg);
  }
  if (!root || root.IsNull()) throw ScenarioError(*path, 1, 1, "empty NIC preset: expected a mapping of NIC settings");
  read_settings(pr, root, fs::path(*path).parent_path().string(), s, depth + 1, true);
}

void read_settings(const Reader& r, const YAML::Node& n, const std::string& base_dir, NicSettings& s, int depth,
                   bool is_preset_file) {
  std::vector<std::string_view> allowed;
  for (const KeyInfo& k : kNicMapKeys) allowed.push_back(k.name);
  if (is_preset_file)
    for (const KeyInfo& k : kPresetFileKeys) allowed.push_back(k.name);
  for (const auto& k : nic::nic_param_keys()) allowed.push_back(k.name);
  for (const auto& a : kAliases) allowed.push_back(a.name);
  r.expect_map_of(n, is_preset_file ? "a NIC preset" : "nic settings", allowed);
  const std::string prefix = is_preset_file ? "" : "nic.";

  // The preset first; the keys beside it override it.
  if (n["preset"]) {
    const std::string name = r.scalar(n["preset"], prefix + "preset");
    if (!is_file_reference(name) && !valid_preset_name(name))
      r.fail(n["preset"], prefix + "preset must be a preset name (letters, digits, '_', '-', '.') or a .yaml file");
    load_preset(r, n["preset"], name, base_dir, s, depth);
    if (depth == 0) s.preset = name;
  }
  if (n["description"]) r.scalar(n["description"], "description");
  for (const auto& k : nic::nic_param_keys()) {
    const YAML::Node v = n[std::string(k.name)];
    if (!v) continue;
    apply(r, v, prefix + std::string(k.name), k, s.params);
    if (k.name == "mtu") s.mtu = s.params.mtu;
  }
  for (const auto& a : kAliases) {
    const YAML::Node v = n[std::string(a.name)];
    if (!v) continue;
    if (!a.nic_key.empty()) apply(r, v, prefix + std::string(a.name), *find_key(nic::nic_param_keys(), a.nic_key), s.params);
    if (!a.pcie_key.empty())
      apply(r, v, prefix + std::string(a.name), *find_key(nic::pcie_param_keys(), a.pcie_key), s.params.pcie);
  }
  if (n["pcie"]) read_pcie(r, n["pcie"], prefix, s.params.pcie);
  if (n["congestion_control"]) read_congestion(r, n["congestion_control"], prefix, s.params.congestion);
}

}  // namespace

void read_nic_settings(const Reader& r, const YAML::Node& n, const std::string& base_dir, NicSettings& s) {
  read_settings(r, n, base_dir, s, 0, false);
}

std::optional<std::string> find_preset(const std::string& preset, const std::string& base_dir,
                                       std::vector<std::string>* searched) {
  std::error_code ec;
  const fs::path base = base_dir.empty() ? fs::current_path(ec) : fs::path(base_dir);
  if (is_file_reference(preset)) {
    const fs::path p = fs::path(preset).is_absolute() ? fs::path(preset) : base / preset;
    if (searched) searched->push_back(p.parent_path().string());
    if (fs::is_regular_file(p, ec)) return p.string();
    return std::nullopt;
  }
  std::vector<fs::path> dirs;
  // Beside the scenario and up to three directories above it.
  fs::path d = fs::absolute(base, ec);
  for (int up = 0; up < 4 && !d.empty(); ++up) {
    dirs.push_back(d / "presets");
    dirs.push_back(d / "scenarios" / "presets");
    if (d == d.parent_path()) break;
    d = d.parent_path();
  }
  // The source tree's presets.
  if (std::string_view(RNICSIM_SOURCE_DIR).size() > 0) dirs.push_back(fs::path(RNICSIM_SOURCE_DIR) / "scenarios" / "presets");
  // $RNICSIM_PRESETS.
  if (const char* env = std::getenv("RNICSIM_PRESETS")) {
    std::string_view rest(env);
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      const std::string_view part = rest.substr(0, colon);
      if (!part.empty()) dirs.emplace_back(std::string(part));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  for (const fs::path& dir : dirs) {
    if (searched && (searched->empty() || searched->back() != dir.string())) searched->push_back(dir.string());
    const fs::path p = dir / (preset + ".yaml");
    if (fs::is_regular_file(p, ec)) return p.lexically_normal().string();
  }
  return std::nullopt;
}

std::vector<std::string_view> nic_keys() {
  std::vector<std::string_view> v;
  for (const auto& k : nic::nic_param_keys()) v.push_back(k.name);
  v.push_back("pcie");
  v.push_back("congestion_control");
  return v;
}

std::vector<std::string_view> congestion_keys() {
  std::vector<std::string_view> v;
  for (const auto& k : nic::congestion_param_keys()) v.push_back(k.name);
  return v;
}

std::vector<std::string_view> pcie_keys() {
  std::vector<std::string_view> v;
  for (const auto& k : nic::pcie_param_keys()) v.push_back(k.name);
  return v;
}

namespace {

std::string kind_unit(Kind k) {
  switch (k) {
    case Kind::Count: return "count";
    case Kind::Cycles: return "cycles";
    case Kind::Bytes: return "bytes (256, 4KiB)";
    case Kind::Frequency: return "Hz (500MHz)";
    case Kind::Time: return "time (250ns)";
    case Kind::IbMtu: return "bytes: 256..4096";
    case Kind::Lanes: return "1, 2, 4, 8, 16, 32";
    case Kind::Rate: return "bits/s (5Mbps)";
    case Kind::Algorithm: return nic::cc_algorithm_names(" | ");
    case Kind::Recovery: return nic::loss_recovery_names(" | ");
  }
  return "";
}

template <class T>
std::string default_text(const Key<T>& k) {
  static const T defaults{};
  return std::visit(
      [&](auto m) -> std::string {
        using V = std::remove_cvref_t<decltype(defaults.*m)>;
        if constexpr (std::is_same_v<V, sim::Duration>) {
          const int64_t ps = (defaults.*m).picoseconds();
          if (ps % 1'000'000 == 0) return std::to_string(ps / 1'000'000) + "us";
          if (ps % 1000 == 0) return std::to_string(ps / 1000) + "ns";
          return std::to_string(ps) + "ps";
        } else if constexpr (std::is_same_v<V, nic::CcAlgorithm> || std::is_same_v<V, nic::LossRecovery>) {
          return std::string(nic::to_string(defaults.*m));
        } else {
          return std::to_string(defaults.*m);
        }
      },
      k.member);
}

template <class T>
void list_keys(Keys<T> keys, const std::string& prefix, std::vector<ParamInfo>& out) {
  for (const Key<T>& k : keys) {
    std::string range;
    if (k.hi != 0 && k.kind != Kind::IbMtu && k.kind != Kind::Lanes)
      range = std::to_string(k.lo) + ".." + std::to_string(k.hi);
    out.push_back({prefix + std::string(k.name), default_text(k), kind_unit(k.kind), range, std::string(k.description)});
  }
}

}  // namespace

std::vector<ParamInfo> nic_parameters() {
  std::vector<ParamInfo> v;
  list_keys(nic::nic_param_keys(), "nic.", v);
  list_keys(nic::pcie_param_keys(), "nic.pcie.", v);
  list_keys(nic::congestion_param_keys(), "nic.congestion_control.", v);
  return v;
}

std::vector<KeySection> nic_key_sections() {
  return {{"nic", "", kNicMapKeys}, {"", "a NIC preset file (NAME.yaml): the nic keys and", kPresetFileKeys, false}};
}

size_t nic_keys_covering_fields() { return nic::nic_param_keys().size() + nic::kNicNestedParamSets; }
size_t pcie_keys_covering_fields() { return nic::pcie_param_keys().size(); }
size_t congestion_keys_covering_fields() { return nic::congestion_param_keys().size(); }

}  // namespace rnicsim::scenario
