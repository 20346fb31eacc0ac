#include "scenario/scenario.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>

#include "fabric/pfc.hpp"
#include "scenario/expect.hpp"
#include "scenario/fabric_keys.hpp"
#include "scenario/fault_keys.hpp"
#include "scenario/nic_keys.hpp"
#include "scenario/text_file.hpp"
#include "scenario/units.hpp"
#include "scenario/workload_keys.hpp"
#include "scenario/yaml_reader.hpp"

namespace rnicsim::scenario {
namespace {

std::string base_dir_of(const std::string& file) { return std::filesystem::path(file).parent_path().string(); }

constexpr std::pair<std::string_view, LinkLayer> kLinkLayers[] = {
    {"roce_v2", LinkLayer::RoceV2Ipv4}, {"roce_v2_ipv6", LinkLayer::RoceV2Ipv6}, {"ib", LinkLayer::Ib}};
constexpr std::pair<std::string_view, bool> kBooleans[] = {{"true", true}, {"false", false}};
constexpr std::pair<std::string_view, bool> kPayloadModes[] = {{"full", false}, {"size_only", true}};
constexpr std::pair<std::string_view, bool> kBlueflameSizes[] = {{"slot", false}, {"wqe", true}};

const KeyInfo kTopLevelKeys[] = {
    {"name", "the file's path", "text", "", "the scenario's name in reports"},
    {"seed", "1", "count", "0..2^64-1", "seed of every random stream (loss, faults, payload bytes); --seed overrides it"},
    {"link_layer", "roce_v2", "roce_v2 | roce_v2_ipv6 | ib", "", "RoCEv2 over IPv4 or IPv6, or native InfiniBand"},
    {"ib_grh", "false", "true | false", "", "ib: every packet carries a GRH"},
    {"ib_capture", "erf", "erf | infiniband", "",
     "ib: captures as ERF records of type InfiniBand (Wireshark 4.0 decodes them) or LINKTYPE_INFINIBAND (247)"},
    {"payload", "full", "full | size_only", "",
     "size_only: payload bytes are not materialised (captures hold headers; data not checked)"},
    {"duration", "until the workloads end", "time (10ms)", "", "stop the run at this simulated time"},
    {"partitions", "one per thread for 64 hosts or more, else 1", "count", "1..4096",
     "cut the world into this many partitions, run side by side on threads (outputs are the same for any count); "
     "--partitions overrides it"},
    {"hosts", "h0, h1, ... of the topology", "list of hosts", "", "the hosts (required without topology)"},
    {"links", "none", "list of links", "", "point-to-point links between hosts and switches"},
    {"switches", "none", "list of switches", "", "switches joined by links"},
    {"topology", "none", "map", "", "a generated network instead of switches and links"},
    {"switch", "the switch keys' defaults", "map", "", "settings of every switch"},
    {"pfc", "off", "map", "", "priority flow control in switches and NICs (RoCEv2)"},
    {"ib_credits", "off", "map", "", "ib: link-level credit flow control per VL"},
    {"nic", "the NIC parameters' defaults", "map", "", "the NIC model: a preset and/or parameters"},
    {"host", "the host keys' defaults", "map", "", "host software timing"},
    {"workloads", "none", "list of workloads", "", "the traffic"},
    {"faults", "none", "list of rules", "", "drop, corrupt or delay chosen packets"},
    {"captures", "none", "list of captures", "", "pcap files of host and switch ports"},
    {"expect", "none", "list of \"METRIC OP VALUE\"", "", "conditions on measured values (metrics below); exit 1 if one fails"},
    {"sweep", "none", "map of PATH: [values]", "", "run once per value (a grid for several paths)"},
};
const KeyInfo kHostKeys[] = {
    {"name", "", "text", "", "the host's name (required; letters, digits, '_', '-', '.')"},
    {"ip", "10.0.0.N; roce_v2_ipv6: fd00::N", "IPv4 / IPv6 text", "",
     "the host's address; N: its place in the list from 1 (ib: its GID, default fe80::/64 and the port GUID)"},
    {"lid", "N", "count", "1..49151", "ib: the port's unicast LID; N: the host's place in the list from 1"},
    {"device", kDefaultDeviceName, "text", "1..63 characters",
     "emulation: the verbs device name the host's program sees (e.g. mlx5_0, for scripts with -d)"},
    {"nic", "the scenario's nic", "nic settings", "not mtu, eth_mtu",
     "this host's NIC: a preset and keys as nic: takes, over the scenario's nic"},
};
const KeyInfo kHostTimingKeys[] = {
    {"poll_delay", "50ns", "time (50ns)", "", "from a CQE or polled byte landing in host memory to the host acting on it"},
    {"mem_poll_interval", "10ns", "time (10ns)", ">= 100ps", "how often a host spinning on memory reads it"},
    {"blueflame", "true", "true | false", "", "a WQE posted alone goes with its doorbell (no WQE fetch)"},
    {"blueflame_size", "slot", "slot | wqe", "", "a BlueFlame write's 64-byte lines: the WQE's ring slot (128 bytes), or the WQE's own size as mlx5 writes it (one line for a small WRITE)"},
    {"post_cost", "25ns", "time", "", "a core's time to build one WQE (ibv_post_send's own work)"},
    {"mmio_cost", "30ns", "time", "", "a core's time to write one 64-byte line by MMIO (a doorbell: one; BlueFlame: the WQE's lines)"},
};

void read_nic(const Reader& r, const YAML::Node& n, Scenario& s) {
  NicSettings settings;
  read_nic_settings(r, n, base_dir_of(s.file), settings);
  s.nic = settings.params;
  s.nic_preset = settings.preset;
  if (const YAML::Node e = n["eth_mtu"]; e && s.link_layer == LinkLayer::Ib)
    r.fail(e, "nic.eth_mtu is RoCE's; an InfiniBand port has only its IB MTU (nic.mtu)");
  if (s.nic.eth_mtu != 0 && s.link_layer != LinkLayer::Ib) {
    const uint32_t carried = nic::roce_mtu_for(s.nic.eth_mtu);
    if (carried == 0) r.fail(n["eth_mtu"] ? n["eth_mtu"] : n, "nic.eth_mtu must carry a 256-byte IB MTU (352 bytes or more)");
    s.nic.mtu = std::min(s.nic.mtu, carried);  // the port's active MTU, as the driver sets it
  }
  s.path_mtu = s.nic.mtu;
}

void read_host_timing(const Reader& r, const YAML::Node& n, HostTiming& h) {
  r.expect_keys(n, "host settings", kHostTimingKeys);
  if (n["blueflame"]) h.blueflame = r.boolean(n["blueflame"], "host.blueflame");
  if (n["blueflame_size"]) h.blueflame_wqe_size = r.choice(n["blueflame_size"], "host.blueflame_size", kBlueflameSizes);
  if (n["poll_delay"])
    h.poll_delay = r.parsed<sim::Duration>(n["poll_delay"], "host.poll_delay (a time like 50ns)", parse_duration);
  if (n["post_cost"]) h.post_cost = r.parsed<sim::Duration>(n["post_cost"], "host.post_cost (a time like 40ns)", parse_duration);
  if (n["mmio_cost"]) h.mmio_cost = r.parsed<sim::Duration>(n["mmio_cost"], "host.mmio_cost (a time like 20ns)", parse_duration);
  if (n["mem_poll_interval"]) {
    h.mem_poll_interval =
        r.parsed<sim::Duration>(n["mem_poll_interval"], "host.mem_poll_interval (a time like 10ns)", parse_duration);
    if (h.mem_poll_interval < sim::Duration::ps(100))
      r.fail(n["mem_poll_interval"], "host.mem_poll_interval must be at least 100ps");
  }
}

// The scenario's own keys: its name, seed, link layer and how it runs.
void read_scenario_keys(const Reader& r, const YAML::Node& root, Scenario& s) {
  s.name = root["name"] ? r.scalar(root["name"], "name") : s.file;
  if (root["seed"]) s.seed = r.integer(root["seed"], "seed", 0, UINT64_MAX);
  if (root["link_layer"]) s.link_layer = r.choice(root["link_layer"], "link_layer", kLinkLayers);
  if (root["ib_grh"]) {
    s.ib_grh = r.choice(root["ib_grh"], "ib_grh", kBooleans);
    if (s.ib_grh && s.link_layer != LinkLayer::Ib) r.fail(root["ib_grh"], "ib_grh needs link_layer: ib");
  }
  if (root["ib_capture"]) s.ib_capture = r.choice(root["ib_capture"], "ib_capture", fabric::kIbCaptureNames);
  if (root["payload"]) s.size_only = r.choice(root["payload"], "payload", kPayloadModes);
  if (root["duration"]) s.duration = r.parsed<sim::Duration>(root["duration"], "duration (a time like 10ms)", parse_duration);
  if (root["partitions"]) s.partitions = static_cast<uint32_t>(r.integer(root["partitions"], "partitions", 1, 4096));
}

// The settings every host, NIC and switch shares (before the network: the
// switches' settings depend on the NIC's MTU).
void read_settings(const Reader& r, const YAML::Node& root, Scenario& s) {
  if (root["nic"]) read_nic(r, root["nic"], s);
  if (root["host"]) read_host_timing(r, root["host"], s.host);
  if (root["switch"]) read_switch_settings(r, root["switch"], s.fabric, s.nic.mtu);
  if (root["pfc"]) {
    if (s.link_layer == LinkLayer::Ib) r.fail(root["pfc"], "pfc is Ethernet's (RoCEv2); InfiniBand has credits");
    read_pfc_settings(r, root["pfc"], s.fabric);
  }
  if (const YAML::Node c = root["ib_credits"]) {
    if (s.link_layer != LinkLayer::Ib) r.fail(c, "ib_credits needs link_layer: ib (Ethernet has pfc)");
    read_ib_credits(r, c, s.fabric, s.nic.mtu);
  }
  s.fabric.switch_params.eth_mtu = nic::ethernet_mtu(s.nic);
}

// A host's own NIC: the scenario's, with the host's settings over it. Its MTU
// stays the scenario's, which every QP's path MTU and the switches' buffers
// are made from.
nic::NicParams read_host_nic(const Reader& r, const YAML::Node& n, const Scenario& s) {
  for (const char* key : {"mtu", "eth_mtu"})
    if (n.IsMap() && n[key]) r.fail(n[key], std::string("a host's nic.") + key + " is the scenario's: set it in nic:");
  NicSettings settings;
  settings.params = s.nic;
  read_nic_settings(r, n, base_dir_of(s.file), settings);
  settings.params.mtu = s.nic.mtu;  // a preset named here may carry its own
  settings.params.eth_mtu = s.nic.eth_mtu;
  return settings.params;
}

// One entry of `hosts:`, `s` holding the hosts before it.
HostSpec read_host(const Reader& r, const YAML::Node& h, const Scenario& s, std::set<std::string>& host_names) {
  r.expect_keys(h, "a host", kHostKeys);
  if (!h["name"]) r.fail(h, "a host needs a 'name'");
  HostSpec spec;
  spec.name = r.scalar(h["name"], "host name");
  if (!valid_name(spec.name)) r.fail(h["name"], "host name '" + spec.name + "' must be letters, digits, '_', '-' or '.'");
  if (!host_names.insert(spec.name).second) r.fail(h["name"], "duplicate host name '" + spec.name + "'");
  if (h["ip"]) spec.ip = r.scalar(h["ip"], "host ip");
  if (h["device"]) {
    spec.device = r.scalar(h["device"], "host device");
    if (spec.device.empty() || spec.device.size() > 63 || !valid_name(spec.device))
      r.fail(h["device"], "device name '" + spec.device + "' must be 1 to 63 letters, digits, '_', '-' or '.'");
  }
  if (h["nic"]) spec.nic = read_host_nic(r, h["nic"], s);
  if (h["lid"]) {
    if (s.link_layer != LinkLayer::Ib) r.fail(h["lid"], "a host 'lid' needs link_layer: ib");
    // Unicast LIDs are 0x0001..0xBFFF; multicast ones start at 0xC000.
    spec.lid = static_cast<uint16_t>(r.integer(h["lid"], "host lid (a unicast LID)", 1, 0xBFFF));
  }
  if (s.link_layer == LinkLayer::Ib) {
    if (spec.lid == 0) spec.lid = static_cast<uint16_t>(s.hosts.size() + 1);
    for (const HostSpec& other : s.hosts)
      if (other.lid == spec.lid)
        r.fail(h["lid"] ? h["lid"] : h["name"], "host '" + spec.name + "' has LID " + std::to_string(spec.lid) +
                                                    ", which host '" + other.name + "' has already");
  }
  return spec;
}

// `hosts:` (a topology may make them instead); returns their names.
std::set<std::string> read_hosts(const Reader& r, const YAML::Node& root, Scenario& s) {
  const YAML::Node hosts = root["hosts"];
  if (!hosts && !root["topology"]) r.fail(root, "missing 'hosts': expected a list of hosts");
  if (hosts && (!hosts.IsSequence() || hosts.size() < 1)) r.fail(hosts, "expected 'hosts' to be a list of at least one host");
  std::set<std::string> host_names;
  for (const YAML::Node& h : hosts ? hosts : YAML::Node(YAML::NodeType::Sequence))
    s.hosts.push_back(read_host(r, h, s, host_names));
  return host_names;
}

// The network: a generated topology (adding its hosts to `host_names`), or
// switches and links listed.
void read_network(const Reader& r, const YAML::Node& root, Scenario& s, std::set<std::string>& host_names) {
  if (const YAML::Node topology = root["topology"]) {
    for (const char* key : {"links", "switches"})
      if (root[key]) r.fail(root[key], std::string("'") + key + "' and 'topology' do not go together: the topology makes the links");
    read_topology(r, topology, s);
    for (const HostSpec& h : s.hosts) host_names.insert(h.name);
  } else {
    read_links(r, root, s);
  }
}

// A switch keeps each port's PFC headroom (per lossless priority) out of its
// buffer, as mlx5 refuses a lossless buffer smaller than its xoff: a buffer
// that cannot hold them all is an error at the key that set it.
void check_switch_buffers(const Reader& r, const YAML::Node& root, const Scenario& s) {
  const fabric::SwitchParams& sp = s.fabric.switch_params;
  if (!sp.pfc.enabled()) return;
  const auto lossless = static_cast<uint64_t>(std::popcount(sp.pfc.priorities));
  const auto links_of = s.fabric.topology.links_of_nodes();
  for (size_t n = 0; n < s.fabric.topology.nodes.size(); ++n) {
    if (!s.fabric.topology.nodes[n].is_switch) continue;
    uint64_t reserved = 0;
    for (const uint32_t l : links_of[n]) {
      fabric::PortParams port;
      port.rate_bps = s.fabric.topology.links[l].rate_bps;
      port.delay = s.fabric.topology.links[l].delay;
      port.pfc_response_delay = s.fabric.pfc_response_delay;
      reserved += lossless * fabric::headroom_for(sp.pfc, port, sp.eth_mtu);
    }
    if (reserved < sp.buffer.size_bytes) continue;
    const YAML::Node sw = root["switch"];
    r.fail(sw && sw["buffer"] ? sw["buffer"] : root["pfc"],
           "switch '" + s.fabric.topology.nodes[n].name + "' has a buffer of " + std::to_string(sp.buffer.size_bytes) +
               " bytes, not more than the PFC headroom its " + std::to_string(links_of[n].size()) + " ports keep for " +
               std::to_string(lossless) + (lossless == 1 ? " lossless priority (" : " lossless priorities (") +
               std::to_string(reserved) +
               " bytes: the response delay, cable and MTU at the link's rate, as mlx5 budgets them): "
               "raise switch.buffer, or set pfc.headroom");
  }
}

// `faults:`: rules on the packets a host sends or receives, or on both
// directions of a link between two hosts (which must exist).
void read_faults_of(const Reader& r, const YAML::Node& faults, Scenario& s, const KnownHost& known_host) {
  s.faults = read_faults(r, faults, known_host);
  size_t i = 0;
  for (const YAML::Node& e : faults) {
    const FaultSpec& f = s.faults[i++];
    if (!f.host.empty()) continue;  // every host has a link
    bool linked = false;
    for (const LinkSpec& l : s.links)
      linked |= (l.a == f.link_a && l.b == f.link_b) || (l.a == f.link_b && l.b == f.link_a);
    if (!linked) r.fail(e["link"], "no link between '" + f.link_a + "' and '" + f.link_b + "'");
  }
}

// `workloads:`, each with a name of its own.
void read_workloads(const Reader& r, const YAML::Node& workloads, Scenario& s, const KnownHost& known_host) {
  if (!workloads.IsSequence()) r.fail(workloads, "expected 'workloads' to be a list");
  std::set<std::string> names;
  for (const YAML::Node& w : workloads) {
    WorkloadSpec spec = read_workload(r, w, s, known_host);
    if (!names.insert(spec.name).second) r.fail(w["name"], "duplicate workload name '" + spec.name + "'");
    s.workloads.push_back(std::move(spec));
  }
}

}  // namespace

YAML::Node load_yaml(const std::string& text, const std::string& file_name) {
  const Reader r(file_name);
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    r.fail(e.mark, "YAML syntax error: " + e.msg);
  }
}

Scenario parse_scenario(const std::string& text, const std::string& file_name) {
  return parse_scenario(load_yaml(text, file_name), file_name);
}

Scenario parse_scenario(const YAML::Node& root, const std::string& file_name) {
  Reader r(file_name);
  if (!root || root.IsNull()) throw ScenarioError(file_name, 1, 1, "empty scenario: expected a mapping with hosts, links and workloads");
  r.expect_keys(root, "a scenario", kTopLevelKeys);

  Scenario s;
  s.file = file_name;
  read_scenario_keys(r, root, s);
  read_settings(r, root, s);
  std::set<std::string> host_names = read_hosts(r, root, s);
  read_network(r, root, s, host_names);
  check_switch_buffers(r, root, s);
  if (root["captures"]) read_captures(r, root["captures"], s);
  auto known_host = [&](const YAML::Node& n, const std::string& what) {
    const std::string name = r.scalar(n, what);
    if (!host_names.count(name)) r.fail(n, what + " names unknown host '" + name + "'");
    return name;
  };
  if (const YAML::Node faults = root["faults"]) read_faults_of(r, faults, s, known_host);
  if (const YAML::Node workloads = root["workloads"]) read_workloads(r, workloads, s, known_host);
  if (root["expect"]) s.expect = read_expectations(r, root["expect"], s);
  return s;
}

std::vector<KeySection> scenario_key_sections() {
  return {{"", "", kTopLevelKeys}, {"hosts[]", "", kHostKeys}, {"host", "", kHostTimingKeys}};
}

Scenario load_scenario(const std::string& path) {
  return parse_scenario(read_text_file(path, kMaxScenarioFileBytes), path);
}

}  // namespace rnicsim::scenario
