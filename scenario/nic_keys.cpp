#include "scenario/nic_keys.hpp"

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <variant>

#include "scenario/text_file.hpp"
#include "scenario/units.hpp"

#ifndef RNICSIM_SOURCE_DIR
#define RNICSIM_SOURCE_DIR ""
#endif

namespace rnicsim::scenario {
namespace {

namespace fs = std::filesystem;

// How a key's value is written.
enum class Kind {
  Count,      // a whole number of things (packets, WQEs, reads)
  Cycles,     // a whole number of NIC clock cycles
  Bytes,      // a size: 256, 4KiB
  Frequency,  // 500MHz
  Time,       // 250ns
  IbMtu,      // 256, 512, 1024, 2048, 4096
  Lanes,      // 1, 2, 4, 8, 16, 32
  Rate,       // bits/s: 5Mbps, 100Gbps
  Algorithm,  // a congestion control algorithm: none, dcqcn
};

template <class T>
using Member = std::variant<uint32_t T::*, uint64_t T::*, sim::Duration T::*, nic::CcAlgorithm T::*>;

template <class T>
struct Key {
  std::string_view name;
  Kind kind;
  uint64_t lo, hi;
  Member<T> member;
  bool pow2 = false;
  std::string_view description = {};
};

using nic::CongestionParams;
using nic::NicParams;
using nic::PcieParams;

// One key per field, named as the field. Keep in step with nic_params.hpp and
// pcie_link.hpp (a unit test counts the fields).
const Key<NicParams> kNicKeys[] = {
    {"clock_hz", Kind::Frequency, 1'000'000, 100'000'000'000, &NicParams::clock_hz, false, "NIC core clock"},
    {"doorbell_cycles", Kind::Cycles, 0, 1'000'000, &NicParams::doorbell_cycles, false, "doorbell unit time per MMIO write"},
    {"wqe_fetch_batch", Kind::Count, 1, 256, &NicParams::wqe_fetch_batch, false, "WQEs read by one DMA read at most"},
    {"wqe_fetch_outstanding", Kind::Count, 1, 4096, &NicParams::wqe_fetch_outstanding, false, "WQE/RQE DMA reads in flight at most"},
    {"requester_cycles_per_packet", Kind::Cycles, 1, 1'000'000, &NicParams::requester_cycles_per_packet, false, "requester occupancy per packet (segmentation, header build)"},
    {"requester_cycles_per_wqe", Kind::Cycles, 0, 1'000'000, &NicParams::requester_cycles_per_wqe, false, "requester occupancy to decode a WQE, on its first packet"},
    {"datapath_bytes_per_cycle", Kind::Bytes, 1, 4096, &NicParams::datapath_bytes_per_cycle, false, "payload bytes the requester and responder move per cycle"},
    {"tx_latency_cycles", Kind::Cycles, 0, 1'000'000, &NicParams::tx_latency_cycles, false, "transmit pipeline latency from build to wire (beyond occupancy)"},
    {"rx_latency_cycles", Kind::Cycles, 0, 1'000'000, &NicParams::rx_latency_cycles, false, "receive pipeline latency from last bit to effect (beyond occupancy)"},
    {"responder_cycles_per_packet", Kind::Cycles, 1, 1'000'000, &NicParams::responder_cycles_per_packet, false, "responder occupancy per request (checks, DMA set-up)"},
    {"completer_cycles_per_packet", Kind::Cycles, 0, 1'000'000, &NicParams::completer_cycles_per_packet, false, "completer occupancy per ACK/NAK/response"},
    {"rx_parse_cycles", Kind::Cycles, 0, 1'000'000, &NicParams::rx_parse_cycles, false, "parse and ICRC check per received packet"},
    {"tx_pipeline_packets", Kind::Count, 1, 65536, &NicParams::tx_pipeline_packets, false, "packets waiting for payload DMA at most"},
    {"tx_buffer_bytes", Kind::Bytes, 8192, 1u << 30, &NicParams::tx_buffer_bytes, false, "frames in the transmit pipeline and the port's queue at most (bytes)"},
    {"ack_coalesce_packets", Kind::Count, 1, 65536, &NicParams::ack_coalesce_packets, false, "the responder ACKs at least every N packets"},
    {"max_inflight_psns", Kind::Count, 1, 1u << 23, &NicParams::max_inflight_psns, false, "unacknowledged PSNs per QP at most"},
    {"mtu", Kind::IbMtu, 256, 4096, &NicParams::mtu, false, "port MTU (the default path MTU of QPs)"},
    {"qpc_cache_entries", Kind::Count, 0, 1u << 24, &NicParams::qpc_cache_entries, false, "QP contexts held on the NIC (0: unlimited)"},
    {"qpc_entry_bytes", Kind::Bytes, 16, 4096, &NicParams::qpc_entry_bytes, false, "bytes read from host memory on a QP-context miss"},
    {"mtt_cache_entries", Kind::Count, 0, 1u << 24, &NicParams::mtt_cache_entries, false, "memory translation entries (pages) held (0: unlimited)"},
    {"mtt_page_bytes", Kind::Bytes, 4096, 1u << 30, &NicParams::mtt_page_bytes, true, "bytes one translation entry maps"},
    {"mtt_entry_bytes", Kind::Bytes, 8, 4096, &NicParams::mtt_entry_bytes, false, "bytes read on a translation miss (MPT + MTT line)"},
    {"cq_moderation_count", Kind::Count, 1, 65535, &NicParams::cq_moderation_count, false, "one completion event per this many CQEs of an armed CQ"},
    {"cq_moderation_period", Kind::Time, 0, 0, &NicParams::cq_moderation_period, false, "or this long after the first pending CQE (0: no timer)"},
    {"selective_repeat", Kind::Count, 0, 1, &NicParams::selective_repeat, false, "loss recovery: 0 go-back-N (ConnectX-5), 1 selective repeat (ConnectX-6)"},
    {"reorder_window_packets", Kind::Count, 1, 65536, &NicParams::reorder_window_packets, false, "selective repeat: packets kept after a gap"},
};
// `pcie:` and `congestion_control:` are the nested members.
constexpr size_t kNicNestedMembers = 2;

const Key<PcieParams> kPcieKeys[] = {
    {"generation", Kind::Count, 1, 5, &PcieParams::generation, false, "PCIe generation 1-5 (2.5, 5, 8, 16, 32 GT/s per lane)"},
    {"lanes", Kind::Lanes, 1, 32, &PcieParams::lanes, false, "PCIe lanes"},
    {"latency", Kind::Time, 0, 0, &PcieParams::latency, false, "one-way PCIe latency, NIC to root complex"},
    {"host_memory_latency", Kind::Time, 0, 0, &PcieParams::host_memory_latency, false, "host DRAM read latency"},
    {"max_payload_bytes", Kind::Bytes, 128, 4096, &PcieParams::max_payload_bytes, true, "max payload size (MPS) of writes and completions"},
    {"max_read_request_bytes", Kind::Bytes, 128, 4096, &PcieParams::max_read_request_bytes, true, "max read request size (MRRS)"},
    {"tlp_overhead_bytes", Kind::Bytes, 0, 256, &PcieParams::tlp_overhead_bytes, false, "header, framing and DLLP share per TLP"},
    {"max_read_tags", Kind::Count, 0, 1024, &PcieParams::max_read_tags, false, "non-posted read requests outstanding (0: unlimited)"},  // 0: unlimited
};

const Key<CongestionParams> kCongestionKeys[] = {
    {"algorithm", Kind::Algorithm, 0, 0, &CongestionParams::algorithm, false, "congestion control: none or dcqcn"},
    {"dce_tcp_g", Kind::Count, 0, 1023, &CongestionParams::dce_tcp_g, false, "alpha gain g/1024 per alpha update period"},
    {"dce_tcp_rtt", Kind::Time, 0, 0, &CongestionParams::dce_tcp_rtt, false, "alpha update period"},
    {"initial_alpha_value", Kind::Count, 0, 1023, &CongestionParams::initial_alpha_value, false, "alpha (of 1024) when the first CNP arrives"},
    {"rate_to_set_on_first_cnp", Kind::Rate, 0, 0, &CongestionParams::rate_to_set_on_first_cnp, false, "rate on the first CNP (0: line rate, then cut)"},
    {"rpg_min_dec_fac", Kind::Count, 0, 100, &CongestionParams::rpg_min_dec_fac, false, "one cut keeps at least this percentage of the rate"},
    {"rpg_min_rate", Kind::Rate, 0, 0, &CongestionParams::rpg_min_rate, false, "lowest rate of a QP"},
    {"rpg_gd", Kind::Count, 0, 63, &CongestionParams::rpg_gd, false, "a cut removes rate x alpha / 2^rpg_gd"},
    {"rate_reduce_monitor_period", Kind::Time, 0, 0, &CongestionParams::rate_reduce_monitor_period, false, "at most one cut per period"},
    {"clamp_tgt_rate", Kind::Count, 0, 1, &CongestionParams::clamp_tgt_rate, false, "1: every cut sets the target rate to the current rate"},
    {"clamp_tgt_rate_after_time_inc", Kind::Count, 0, 1, &CongestionParams::clamp_tgt_rate_after_time_inc, false, "1: so does a cut after a timer increase"},
    {"rpg_time_reset", Kind::Time, 0, 0, &CongestionParams::rpg_time_reset, false, "rate increase timer"},
    {"rpg_byte_reset", Kind::Bytes, 1, 1ull << 40, &CongestionParams::rpg_byte_reset, false, "bytes sent per byte-counter increase event"},
    {"rpg_threshold", Kind::Count, 0, 1024, &CongestionParams::rpg_threshold, false, "increase events spent in fast recovery (F)"},
    {"rpg_ai_rate", Kind::Rate, 0, 0, &CongestionParams::rpg_ai_rate, false, "additive increase step of the target rate"},
    {"rpg_hai_rate", Kind::Rate, 0, 0, &CongestionParams::rpg_hai_rate, false, "hyper increase step of the target rate"},
    {"rpg_max_rate", Kind::Rate, 0, 0, &CongestionParams::rpg_max_rate, false, "rate ceiling (0: line rate)"},
    {"min_time_between_cnps", Kind::Time, 0, 0, &CongestionParams::min_time_between_cnps, false, "notification point: at most one CNP per QP per period"},
    {"cnp_dscp", Kind::Count, 0, 63, &CongestionParams::cnp_dscp, false, "DSCP of CNPs"},
    {"cnp_802p_prio", Kind::Count, 0, 7, &CongestionParams::cnp_802p_prio, false, "egress priority of CNPs"},
};

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

template <class T>
void apply(const Reader& r, const YAML::Node& v, const std::string& what, const Key<T>& k, T& target) {
  uint64_t n = 0;
  sim::Duration d;
  nic::CcAlgorithm algorithm = nic::CcAlgorithm::None;
  switch (k.kind) {
    case Kind::Count:
    case Kind::Cycles: {
      const std::string unit = k.kind == Kind::Cycles ? " (cycles)" : "";
      n = r.integer(v, what + unit, k.lo, k.hi);
      break;
    }
    case Kind::Bytes: {
      n = r.parsed<uint64_t>(v, what + " (bytes, like 256 or 4KiB)", parse_size);
      if (n < k.lo || n > k.hi)
        r.fail(v, what + " must be from " + std::to_string(k.lo) + " to " + std::to_string(k.hi) + " bytes");
      if (k.pow2 && (n & (n - 1)) != 0) r.fail(v, what + " must be a power of two");
      break;
    }
    case Kind::Frequency:
      n = r.parsed<uint64_t>(v, what + " (a frequency like 500MHz)", parse_frequency);
      if (n < k.lo || n > k.hi) r.fail(v, what + " must be from 1MHz to 100GHz");
      break;
    case Kind::Time:
      d = r.parsed<sim::Duration>(v, what + " (a time like 250ns)", parse_duration);
      break;
    case Kind::IbMtu:
      n = r.integer(v, what, k.lo, k.hi);
      if (n != 256 && n != 512 && n != 1024 && n != 2048 && n != 4096)
        r.fail(v, what + " must be an IB MTU: 256, 512, 1024, 2048 or 4096");
      break;
    case Kind::Lanes:
      n = r.integer(v, what, k.lo, k.hi);
      if (n != 1 && n != 2 && n != 4 && n != 8 && n != 16 && n != 32)
        r.fail(v, what + " must be 1, 2, 4, 8, 16 or 32");
      break;
    case Kind::Rate:
      // 0 is a rate too: for these keys it means "the line rate".
      n = r.scalar(v, what) == "0" ? 0 : r.parsed<uint64_t>(v, what + " (a rate like 5Mbps or 100Gbps)", parse_rate);
      break;
    case Kind::Algorithm: {
      const std::string name = r.scalar(v, what);
      if (name == "dcqcn") algorithm = nic::CcAlgorithm::Dcqcn;
      else if (name != "none") r.fail(v, what + " must be none or dcqcn, not '" + name + "'");
      break;
    }
  }
  std::visit(
      [&](auto m) {
        using V = std::remove_reference_t<decltype(target.*m)>;
        if constexpr (std::is_same_v<V, sim::Duration>) {
          target.*m = d;
        } else if constexpr (std::is_same_v<V, nic::CcAlgorithm>) {
          target.*m = algorithm;
        } else {
          target.*m = static_cast<V>(n);
        }
      },
      k.member);
}

template <class T, size_t N>
const Key<T>* find_key(const Key<T> (&keys)[N], std::string_view name) {
  for (const Key<T>& k : keys)
    if (k.name == name) return &k;
  return nullptr;
}

void read_pcie(const Reader& r, const YAML::Node& n, const std::string& prefix, PcieParams& p) {
  std::vector<std::string_view> allowed;
  for (const auto& k : kPcieKeys) allowed.push_back(k.name);
  r.expect_map_of(n, "pcie settings", allowed);
  for (const auto& k : kPcieKeys)
    if (n[std::string(k.name)]) apply(r, n[std::string(k.name)], prefix + "pcie." + std::string(k.name), k, p);
}

void read_congestion(const Reader& r, const YAML::Node& n, const std::string& prefix, CongestionParams& p) {
  std::vector<std::string_view> allowed;
  for (const auto& k : kCongestionKeys) allowed.push_back(k.name);
  r.expect_map_of(n, "congestion_control settings", allowed);
  for (const auto& k : kCongestionKeys)
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
  for (const auto& k : kNicKeys) allowed.push_back(k.name);
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
  for (const auto& k : kNicKeys) {
    const YAML::Node v = n[std::string(k.name)];
    if (!v) continue;
    apply(r, v, prefix + std::string(k.name), k, s.params);
    if (k.name == "mtu") s.mtu = s.params.mtu;
  }
  for (const auto& a : kAliases) {
    const YAML::Node v = n[std::string(a.name)];
    if (!v) continue;
    if (!a.nic_key.empty()) apply(r, v, prefix + std::string(a.name), *find_key(kNicKeys, a.nic_key), s.params);
    if (!a.pcie_key.empty())
      apply(r, v, prefix + std::string(a.name), *find_key(kPcieKeys, a.pcie_key), s.params.pcie);
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
  for (const auto& k : kNicKeys) v.push_back(k.name);
  v.push_back("pcie");
  v.push_back("congestion_control");
  return v;
}

std::vector<std::string_view> congestion_keys() {
  std::vector<std::string_view> v;
  for (const auto& k : kCongestionKeys) v.push_back(k.name);
  return v;
}

std::vector<std::string_view> pcie_keys() {
  std::vector<std::string_view> v;
  for (const auto& k : kPcieKeys) v.push_back(k.name);
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
    case Kind::Algorithm: return "none | dcqcn";
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
        } else if constexpr (std::is_same_v<V, nic::CcAlgorithm>) {
          return std::string(nic::to_string(defaults.*m));
        } else {
          return std::to_string(defaults.*m);
        }
      },
      k.member);
}

template <class T, size_t N>
void list_keys(const Key<T> (&keys)[N], const std::string& prefix, std::vector<ParamInfo>& out) {
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
  list_keys(kNicKeys, "nic.", v);
  list_keys(kPcieKeys, "nic.pcie.", v);
  list_keys(kCongestionKeys, "nic.congestion_control.", v);
  return v;
}

std::vector<KeySection> nic_key_sections() {
  return {{"nic", "", kNicMapKeys}, {"", "a NIC preset file (NAME.yaml): the nic keys and", kPresetFileKeys, false}};
}

size_t nic_keys_covering_fields() { return std::size(kNicKeys) + kNicNestedMembers; }
size_t pcie_keys_covering_fields() { return std::size(kPcieKeys); }
size_t congestion_keys_covering_fields() { return std::size(kCongestionKeys); }

}  // namespace rnicsim::scenario
