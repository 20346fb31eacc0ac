#include "scenario/scenario.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "scenario/units.hpp"

namespace rnicsim::scenario {
namespace {

// Reads one YAML document with positions for every error.
class Reader {
public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const {
    const YAML::Mark m = n.Mark();
    throw ScenarioError(file_, m.line + 1, m.column + 1, msg);
  }
  [[noreturn]] void fail(const YAML::Mark& m, const std::string& msg) const {
    throw ScenarioError(file_, m.line + 1, m.column + 1, msg);
  }

  // Checks that `n` is a map whose keys are all in `allowed`.
  void expect_map(const YAML::Node& n, const std::string& what, std::initializer_list<std::string_view> allowed) const {
    if (!n.IsMap()) fail(n, "expected " + what + " (a mapping of keys to values)");
    for (auto it = n.begin(); it != n.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string list;
        for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(it->first, "unknown key '" + key + "' in " + what + " (expected one of: " + list + ")");
      }
    }
  }
  std::string scalar(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n, "expected " + what + " (a single value)");
    return n.Scalar();
  }
  template <class T>
  T parsed(const YAML::Node& n, const std::string& what, std::optional<T> (*parse)(std::string_view)) const {
    const std::string s = scalar(n, what);
    auto v = parse(s);
    if (!v) fail(n, "expected " + what + ", got '" + s + "'");
    return *v;
  }
  uint64_t integer(const YAML::Node& n, const std::string& what, uint64_t lo, uint64_t hi) const {
    const std::string s = scalar(n, what);
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) fail(n, "expected " + what + " (a whole number), got '" + s + "'");
    if (v < lo || v > hi)
      fail(n, what + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + s);
    return v;
  }
  double probability(const YAML::Node& n, const std::string& what) const {
    const std::string s = scalar(n, what);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !(v >= 0.0 && v <= 1.0))
      fail(n, "expected " + what + " (a probability from 0 to 1), got '" + s + "'");
    return v;
  }
  template <class E, size_t N>
  E choice(const YAML::Node& n, const std::string& what, const std::pair<std::string_view, E> (&options)[N]) const {
    const std::string s = scalar(n, what);
    std::string list;
    for (const auto& [name, value] : options) {
      if (s == name) return value;
      list += (list.empty() ? "" : ", ") + std::string(name);
    }
    fail(n, "expected " + what + " (one of: " + list + "), got '" + s + "'");
  }

private:
  std::string file_;
};

constexpr std::pair<std::string_view, LinkLayer> kLinkLayers[] = {{"roce_v2", LinkLayer::RoceV2Ipv4},
                                                                   {"roce_v2_ipv6", LinkLayer::RoceV2Ipv6}};
constexpr std::pair<std::string_view, WorkloadOp> kOps[] = {
    {"write", WorkloadOp::Write}, {"write_imm", WorkloadOp::WriteImm}, {"send", WorkloadOp::Send}};
constexpr std::pair<std::string_view, WorkloadPattern> kPatterns[] = {{"bw", WorkloadPattern::Bandwidth},
                                                                      {"lat", WorkloadPattern::Latency}};

bool valid_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

void read_nic(const Reader& r, const YAML::Node& n, Scenario& s) {
  r.expect_map(n, "nic settings",
               {"mtu", "clock", "pcie_gen", "pcie_lanes", "pcie_latency", "requester_cycles_per_packet",
                "responder_cycles_per_packet", "ack_coalesce_packets"});
  nic::NicParams& p = s.nic;
  if (n["mtu"]) {
    const uint64_t mtu = r.integer(n["mtu"], "nic.mtu", 256, 4096);
    if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096)
      r.fail(n["mtu"], "nic.mtu must be an IB MTU: 256, 512, 1024, 2048 or 4096");
    p.mtu = static_cast<uint32_t>(mtu);
    s.path_mtu = p.mtu;
  }
  if (n["clock"]) p.clock_hz = r.parsed<uint64_t>(n["clock"], "nic.clock (a frequency like 500MHz)", parse_frequency);
  if (n["pcie_gen"]) p.pcie.generation = static_cast<uint32_t>(r.integer(n["pcie_gen"], "nic.pcie_gen", 1, 5));
  if (n["pcie_lanes"]) {
    const uint64_t lanes = r.integer(n["pcie_lanes"], "nic.pcie_lanes", 1, 32);
    if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16 && lanes != 32)
      r.fail(n["pcie_lanes"], "nic.pcie_lanes must be 1, 2, 4, 8, 16 or 32");
    p.pcie.lanes = static_cast<uint32_t>(lanes);
  }
  if (n["pcie_latency"])
    p.pcie.latency = r.parsed<sim::Duration>(n["pcie_latency"], "nic.pcie_latency (a time like 250ns)", parse_duration);
  if (n["requester_cycles_per_packet"])
    p.requester_cycles_per_packet =
        static_cast<uint32_t>(r.integer(n["requester_cycles_per_packet"], "nic.requester_cycles_per_packet", 1, 100000));
  if (n["responder_cycles_per_packet"])
    p.responder_cycles_per_packet =
        static_cast<uint32_t>(r.integer(n["responder_cycles_per_packet"], "nic.responder_cycles_per_packet", 1, 100000));
  if (n["ack_coalesce_packets"])
    p.ack_coalesce_packets =
        static_cast<uint32_t>(r.integer(n["ack_coalesce_packets"], "nic.ack_coalesce_packets", 1, 65536));
}

}  // namespace

Scenario parse_scenario(const std::string& text, const std::string& file_name) {
  Reader r(file_name);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    r.fail(e.mark, "YAML syntax error: " + e.msg);
  }
  if (!root || root.IsNull()) throw ScenarioError(file_name, 1, 1, "empty scenario: expected a mapping with hosts, links and workloads");
  r.expect_map(root, "a scenario", {"name", "seed", "link_layer", "duration", "hosts", "links", "nic", "workloads"});

  Scenario s;
  s.file = file_name;
  s.name = root["name"] ? r.scalar(root["name"], "name") : file_name;
  if (root["seed"]) s.seed = r.integer(root["seed"], "seed", 0, UINT64_MAX);
  if (root["link_layer"]) s.link_layer = r.choice(root["link_layer"], "link_layer", kLinkLayers);
  if (root["duration"]) s.duration = r.parsed<sim::Duration>(root["duration"], "duration (a time like 10ms)", parse_duration);
  if (root["nic"]) read_nic(r, root["nic"], s);

  // Hosts.
  const YAML::Node hosts = root["hosts"];
  if (!hosts) r.fail(root, "missing 'hosts': expected a list of hosts");
  if (!hosts.IsSequence() || hosts.size() < 1) r.fail(hosts, "expected 'hosts' to be a list of at least one host");
  std::set<std::string> host_names;
  for (const YAML::Node& h : hosts) {
    r.expect_map(h, "a host", {"name", "ip"});
    if (!h["name"]) r.fail(h, "a host needs a 'name'");
    HostSpec spec;
    spec.name = r.scalar(h["name"], "host name");
    if (!valid_name(spec.name)) r.fail(h["name"], "host name '" + spec.name + "' must be letters, digits, '_', '-' or '.'");
    if (!host_names.insert(spec.name).second) r.fail(h["name"], "duplicate host name '" + spec.name + "'");
    if (h["ip"]) spec.ip = r.scalar(h["ip"], "host ip");
    s.hosts.push_back(spec);
  }
  auto known_host = [&](const YAML::Node& n, const std::string& what) {
    const std::string name = r.scalar(n, what);
    if (!host_names.count(name)) r.fail(n, what + " names unknown host '" + name + "'");
    return name;
  };

  // Links.
  const YAML::Node links = root["links"];
  if (links) {
    if (!links.IsSequence()) r.fail(links, "expected 'links' to be a list");
    std::set<std::string> linked;
    for (const YAML::Node& l : links) {
      r.expect_map(l, "a link", {"between", "rate", "delay", "loss"});
      const YAML::Node between = l["between"];
      if (!between) r.fail(l, "a link needs 'between: [host, host]'");
      if (!between.IsSequence() || between.size() != 2) r.fail(between, "expected 'between' to list exactly two hosts");
      LinkSpec spec;
      spec.a = known_host(between[0], "link end");
      spec.b = known_host(between[1], "link end");
      if (spec.a == spec.b) r.fail(between[1], "a link must join two different hosts");
      for (const std::string& end : {spec.a, spec.b})
        if (!linked.insert(end).second)
          r.fail(between, "host '" + end + "' already has a link (each host has one port in this version)");
      if (l["rate"]) spec.rate_bps = r.parsed<uint64_t>(l["rate"], "link rate (like 100Gbps)", parse_rate);
      if (l["delay"]) spec.delay = r.parsed<sim::Duration>(l["delay"], "link delay (a time like 1us)", parse_duration);
      if (l["loss"]) spec.loss = r.probability(l["loss"], "link loss");
      s.links.push_back(spec);
    }
  }

  // Workloads.
  const YAML::Node workloads = root["workloads"];
  if (workloads) {
    if (!workloads.IsSequence()) r.fail(workloads, "expected 'workloads' to be a list");
    std::set<std::string> names;
    for (const YAML::Node& w : workloads) {
      r.expect_map(w, "a workload", {"name", "op", "pattern", "from", "to", "size", "count", "tx_depth", "start"});
      WorkloadSpec spec;
      spec.name = w["name"] ? r.scalar(w["name"], "workload name") : "workload" + std::to_string(s.workloads.size());
      if (!names.insert(spec.name).second) r.fail(w["name"], "duplicate workload name '" + spec.name + "'");
      if (!w["op"]) r.fail(w, "a workload needs 'op' (write, write_imm or send)");
      spec.op = r.choice(w["op"], "op", kOps);
      if (w["pattern"]) spec.pattern = r.choice(w["pattern"], "pattern", kPatterns);
      if (!w["from"] || !w["to"]) r.fail(w, "a workload needs 'from' and 'to' hosts");
      spec.from = known_host(w["from"], "from");
      spec.to = known_host(w["to"], "to");
      if (spec.from == spec.to) r.fail(w["to"], "'from' and 'to' must be different hosts");
      const bool linked = std::any_of(s.links.begin(), s.links.end(), [&](const LinkSpec& l) {
        return (l.a == spec.from && l.b == spec.to) || (l.a == spec.to && l.b == spec.from);
      });
      if (!linked) r.fail(w["to"], "no link joins '" + spec.from + "' and '" + spec.to + "'");
      if (w["size"]) {
        spec.size = r.parsed<uint64_t>(w["size"], "size (bytes, like 64KiB)", parse_size);
        if (spec.size < 1 || spec.size > (1ull << 31)) r.fail(w["size"], "size must be from 1 byte to 2GiB");
      }
      if (w["count"]) spec.count = r.integer(w["count"], "count", 1, 1ull << 40);
      if (w["tx_depth"]) spec.tx_depth = static_cast<uint32_t>(r.integer(w["tx_depth"], "tx_depth", 1, 8192));
      if (w["start"]) spec.start = r.parsed<sim::Duration>(w["start"], "start (a time like 10us)", parse_duration);
      if (spec.pattern == WorkloadPattern::Latency && spec.op == WorkloadOp::Write)
        r.fail(w["op"], "pattern 'lat' needs an op the receiver sees: send or write_imm");
      s.workloads.push_back(spec);
    }
  }
  return s;
}

Scenario load_scenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ScenarioError(path, 0, 0, "cannot open the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_scenario(ss.str(), path);
}

}  // namespace rnicsim::scenario
