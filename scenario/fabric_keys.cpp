#include "scenario/fabric_keys.hpp"

#include <set>

#include "scenario/units.hpp"

namespace rnicsim::scenario {
namespace {

enum class Scheduling : uint8_t { Strict, Dwrr };
constexpr std::pair<std::string_view, Scheduling> kScheduling[] = {{"strict", Scheduling::Strict},
                                                                   {"dwrr", Scheduling::Dwrr}};
constexpr std::pair<std::string_view, fabric::PriorityMap::Trust> kTrust[] = {
    {"dscp", fabric::PriorityMap::Trust::Dscp}, {"pcp", fabric::PriorityMap::Trust::Pcp}};
enum class TopologyKind : uint8_t { SingleSwitch, LeafSpine, FatTree };
constexpr std::pair<std::string_view, TopologyKind> kTopologies[] = {
    {"single_switch", TopologyKind::SingleSwitch}, {"leaf_spine", TopologyKind::LeafSpine},
    {"fat_tree", TopologyKind::FatTree}};
const KeyInfo kLinkKeys[] = {
    {"between", "", "[node, node]", "", "the two hosts or switches a full-duplex link joins (required)"},
    {"rate", "100Gbps", "bits/s (100Gbps)", "", "data rate after line coding"},
    {"delay", "1us", "time (1us)", "", "propagation delay"},
    {"loss", "0", "probability", "0..1", "Bernoulli loss of each frame, each direction"},
    {"gilbert_elliott", "off", "map", "", "burst loss: a two-state Markov chain per frame"},
    {"down", "none", "list of {from, to}", "", "times the link is down, in order, not overlapping (frames sent are lost)"},
};
const KeyInfo kGilbertElliottKeys[] = {
    {"p_good_bad", "", "probability", "0..1", "chance per frame of going from good to bad (required)"},
    {"p_bad_good", "1", "probability", "above 0 .. 1", "chance per frame of going from bad to good"},
    {"loss_good", "0", "probability", "0..1", "loss in the good state"},
    {"loss_bad", "1", "probability", "0..1", "loss in the bad state"},
};
const KeyInfo kDownKeys[] = {
    {"from", "", "time (200us)", "", "the outage starts (required)"},
    {"to", "", "time (300us)", "after from", "the outage ends (required)"},
};
const KeyInfo kSwitchListKeys[] = {
    {"name", "", "text", "", "the switch's name (required; letters, digits, '_', '-', '.')"},
};
// Every kind of topology takes `kind`; the keys of each kind follow.
const KeyInfo kTopologyKeys[] = {
    {"kind", "", "single_switch | leaf_spine | fat_tree", "", "the topology generated (required)"},
};
const KeyInfo kSingleSwitchKeys[] = {
    {"rate", "100Gbps", "bits/s (100Gbps)", "", "every host's link to the switch sw0"},
    {"delay", "1us", "time (1us)", "", "propagation delay of those links"},
};
const KeyInfo kLeafSpineKeys[] = {
    {"leaves", "", "count", "1..1024", "leaf switches leaf0, leaf1, ... (required)"},
    {"spines", "", "count", "1..1024", "spine switches spine0, ...; each leaf has a link to each (required)"},
    {"hosts_per_leaf", "", "count", "1..1024", "hosts on each leaf (required)"},
    {"host_rate", "100Gbps", "bits/s (100Gbps)", "", "host-leaf links"},
    {"delay", "1us", "time (1us)", "", "propagation delay of host-leaf links"},
    {"fabric_rate", "host_rate x hosts_per_leaf / spines (1:1)", "bits/s (400Gbps)", "", "leaf-spine links"},
    {"fabric_delay", "delay", "time (1us)", "", "propagation delay of leaf-spine links"},
    {"oversubscription", "1", "ratio", "0.01..1000",
     "instead of fabric_rate: host capacity of a leaf over its uplink capacity"},
};
const KeyInfo kFatTreeKeys[] = {
    {"k", "", "count", "2..64, even", "ports per switch: k^3/4 hosts, 5k^2/4 switches (required)"},
    {"rate", "100Gbps", "bits/s (100Gbps)", "", "every link"},
    {"delay", "1us", "time (1us)", "", "propagation delay of every link"},
};
const KeyInfo kSwitchKeys[] = {
    {"buffer", "16MiB", "bytes (16MiB)", ">= 16KiB", "shared buffer of a switch, PFC headroom included"},
    {"alpha", "1", "ratio", "1/1024..1024", "dynamic threshold of lossy egress queues: alpha x the free buffer"},
    {"scheduling", "strict", "strict | dwrr", "", "egress scheduling between priorities"},
    {"dwrr_weights", "1 each (a quantum of MTU + 128 bytes)", "[8 weights]", "0..1000",
     "scheduling: dwrr: a weight per priority, 0 = strict priority"},
    {"trust", "dscp", "dscp | pcp", "", "RoCEv2: a frame's priority from DSCP / 8 or the 802.1Q PCP"},
    {"forwarding_latency", "0ns", "time (500ns)", "", "added to each frame's store and forward"},
    {"ecn", "off", "map", "", "RED marking of ECN-capable frames at egress"},
};
const KeyInfo kEcnKeys[] = {
    {"kmin", "100KiB", "bytes (5KiB)", "", "queue length where marking starts"},
    {"kmax", "400KiB", "bytes (200KiB)", "above kmin", "queue length from which every frame is marked"},
    {"pmax", "0.2", "probability", "0..1", "marking probability at kmax"},
    {"priorities", "all", "[priorities]", "0..7", "the priorities marked"},
    {"mark_on", "dequeue", "dequeue | enqueue", "", "mark as a frame leaves the queue or as it joins it"},
};
const KeyInfo kPfcKeys[] = {
    {"priorities", "[3]", "[priorities]", "0..7", "lossless priorities (PFC on)"},
    {"xoff", "dynamic", "dynamic | bytes (64KiB)", "> 0", "pause above this per ingress port and priority"},
    {"xon", "xoff - xon_offset", "bytes (32KiB)", "below xoff", "static xoff: resume below this"},
    {"alpha", "0.125", "ratio", "1/1024..1024", "dynamic xoff: alpha x the free shared buffer"},
    {"xon_offset", "2KiB", "bytes (2KiB)", "", "xon this far below xoff"},
    {"headroom", "auto (mlx5's: response delay, cable, MTU, rate)", "auto | bytes (100KiB)", "",
     "buffer per lossless priority of a port for what arrives after XOFF; auto: rate x (response_delay + 17.28ns/m of "
     "cable) + 2.72 x nic.eth_mtu, as mlx5 computes it"},
    {"response_delay", "2408ns", "time (2408ns)", "", "a pause takes effect this long after it arrives (MAC/PHY and upper layer)"},
    {"quanta", "65535", "512-bit quanta", "1..65535", "pause time a PFC frame asks for"},
    {"refresh", "0.5", "share of the pause time", "0.01..1", "refresh a pause after this share of its time"},
    {"watchdog", "0 (off)", "time (100ms)", "", "a priority paused this long stops honouring pauses"},
    {"nic_rx_buffer", "256KiB", "bytes (256KiB)", ">= 16KiB", "a NIC pauses its peer when its receive pipeline holds more"},
};
const KeyInfo kIbCreditKeys[] = {
    {"vl_buffer", "64KiB", "bytes (32KiB)", ">= MTU + 128", "receive buffer per VL and port: the credits a sender gets"},
};
const KeyInfo kCaptureKeys[] = {
    {"host", "", "host name", "", "capture this host's port (or switch:)"},
    {"switch", "", "switch name", "", "capture a port of this switch (or host:)"},
    {"port", "", "count", "0..ports - 1", "switch: its port-th link in the scenario's order (required with switch)"},
    {"file", "", "file", "", "pcap file, under --out if given (required)"},
    {"snaplen", "65535", "bytes", "64..262144", "bytes kept of each frame"},
    {"priorities", "all", "[priorities]", "0..7", "data frames of these priorities (PFC frames always)"},
};

uint64_t rate_of(const Reader& r, const YAML::Node& n, const std::string& what) {
  return r.parsed<uint64_t>(n, what + " (like 100Gbps)", parse_rate);
}
sim::Duration delay_of(const Reader& r, const YAML::Node& n, const std::string& what) {
  return r.parsed<sim::Duration>(n, what + " (a time like 1us)", parse_duration);
}
uint64_t size_of(const Reader& r, const YAML::Node& n, const std::string& what) {
  return r.parsed<uint64_t>(n, what + " (bytes, like 64KiB)", parse_size);
}

// A size in bytes, or the word `other` (0).
uint64_t size_or(const Reader& r, const YAML::Node& n, const std::string& what, const std::string& other) {
  const std::string v = r.scalar(n, what);
  if (v == other) return 0;
  const auto bytes = parse_size(v);
  if (!bytes) r.fail(n, "expected " + what + " ('" + other + "' or bytes, like 64KiB), got '" + v + "'");
  return *bytes;
}

fabric::LinkShape shape(const Reader& r, const YAML::Node& n, const char* rate_key, const char* delay_key,
                        fabric::LinkShape d = {}) {
  if (n[rate_key]) d.rate_bps = rate_of(r, n[rate_key], std::string("topology.") + rate_key);
  if (n[delay_key]) d.delay = delay_of(r, n[delay_key], std::string("topology.") + delay_key);
  return d;
}

uint32_t count(const Reader& r, const YAML::Node& topo, const char* key, uint64_t lo, uint64_t hi) {
  const std::string what = std::string("topology.") + key;
  if (!topo[key]) r.fail(topo, "missing " + what);
  return static_cast<uint32_t>(r.integer(topo[key], what, lo, hi));
}

}  // namespace

void read_switch_settings(const Reader& r, const YAML::Node& n, FabricSpec& f, uint32_t mtu) {
  r.expect_keys(n, "switch settings", kSwitchKeys);
  fabric::SwitchParams& p = f.switch_params;
  if (const YAML::Node e = n["ecn"]) {
    r.expect_keys(e, "switch.ecn settings", kEcnKeys);
    fabric::EcnParams& ecn = p.ecn;
    ecn.enabled = true;
    if (e["kmin"]) ecn.kmin_bytes = size_of(r, e["kmin"], "switch.ecn.kmin");
    if (e["kmax"]) ecn.kmax_bytes = size_of(r, e["kmax"], "switch.ecn.kmax");
    if (ecn.kmax_bytes <= ecn.kmin_bytes) r.fail(e["kmax"] ? e["kmax"] : e, "switch.ecn.kmax must be above kmin");
    if (e["pmax"]) ecn.pmax = r.probability(e["pmax"], "switch.ecn.pmax");
    if (e["mark_on"]) {
      const std::string m = r.scalar(e["mark_on"], "switch.ecn.mark_on");
      if (m != "dequeue" && m != "enqueue") r.fail(e["mark_on"], "switch.ecn.mark_on must be dequeue or enqueue");
      ecn.on_dequeue = m == "dequeue";
    }
    if (const YAML::Node pr = e["priorities"]) {
      if (!pr.IsSequence() || pr.size() == 0) r.fail(pr, "expected switch.ecn.priorities to list priorities 0..7");
      ecn.priorities = 0;
      for (const YAML::Node& x : pr) ecn.priorities |= static_cast<uint8_t>(1u << r.integer(x, "an ECN priority", 0, 7));
    }
  }
  if (n["buffer"]) {
    p.buffer.size_bytes = size_of(r, n["buffer"], "switch.buffer");
    if (p.buffer.size_bytes < 16 * 1024) r.fail(n["buffer"], "switch.buffer must be at least 16KiB");
  }
  if (n["alpha"]) p.buffer.alpha = r.real(n["alpha"], "switch.alpha", 1.0 / 1024, 1024);
  if (n["trust"]) p.priorities.trust = r.choice(n["trust"], "switch.trust", kTrust);
  if (n["forwarding_latency"]) p.forwarding_latency = delay_of(r, n["forwarding_latency"], "switch.forwarding_latency");
  const Scheduling sched = n["scheduling"] ? r.choice(n["scheduling"], "switch.scheduling", kScheduling) : Scheduling::Strict;
  if (const YAML::Node w = n["dwrr_weights"]) {
    if (sched != Scheduling::Dwrr) r.fail(w, "switch.dwrr_weights needs scheduling: dwrr");
    if (!w.IsSequence() || w.size() != 8) r.fail(w, "expected switch.dwrr_weights to list 8 weights, one per priority (0 = strict)");
    for (size_t i = 0; i < 8; ++i)
      p.dwrr_quantum[i] = static_cast<uint32_t>(r.integer(w[i], "a DWRR weight", 0, 1000)) * (mtu + 128);
  } else if (sched == Scheduling::Dwrr) {
    p.dwrr_quantum.fill(mtu + 128);
  }
}

void read_pfc_settings(const Reader& r, const YAML::Node& n, FabricSpec& f) {
  r.expect_keys(n, "pfc settings", kPfcKeys);
  fabric::PfcParams& p = f.switch_params.pfc;
  p.priorities = 1u << 3;  // RoCE's usual lossless priority
  if (const YAML::Node pr = n["priorities"]) {
    if (!pr.IsSequence() || pr.size() == 0) r.fail(pr, "expected pfc.priorities to list priorities 0..7, like [3]");
    p.priorities = 0;
    for (const YAML::Node& e : pr) p.priorities |= static_cast<uint8_t>(1u << r.integer(e, "a PFC priority", 0, 7));
  }
  if (n["xoff"]) {
    p.xoff_bytes = size_or(r, n["xoff"], "pfc.xoff", "dynamic");
    if (r.scalar(n["xoff"], "pfc.xoff") != "dynamic" && p.xoff_bytes == 0)
      r.fail(n["xoff"], "pfc.xoff must be more than 0 bytes");
  }
  if (n["xon"]) {
    if (p.xoff_bytes == 0) r.fail(n["xon"], "pfc.xon goes with a static pfc.xoff (bytes)");
    p.xon_bytes = size_of(r, n["xon"], "pfc.xon");
    if (p.xon_bytes >= p.xoff_bytes) r.fail(n["xon"], "pfc.xon must be below pfc.xoff");
  } else if (p.xoff_bytes > 0) {
    p.xon_bytes = p.xoff_bytes > p.xon_offset_bytes ? p.xoff_bytes - p.xon_offset_bytes : 0;
  }
  if (n["alpha"]) {
    if (p.xoff_bytes > 0) r.fail(n["alpha"], "pfc.alpha goes with xoff: dynamic");
    p.alpha = r.real(n["alpha"], "pfc.alpha", 1.0 / 1024, 1024);
  }
  if (n["xon_offset"]) p.xon_offset_bytes = size_of(r, n["xon_offset"], "pfc.xon_offset");
  if (n["headroom"]) p.headroom_bytes = size_or(r, n["headroom"], "pfc.headroom", "auto");
  if (n["quanta"]) p.quanta = static_cast<uint16_t>(r.integer(n["quanta"], "pfc.quanta", 1, 0xFFFF));
  if (n["refresh"]) p.refresh = r.real(n["refresh"], "pfc.refresh (share of the pause time)", 0.01, 1.0);
  if (n["watchdog"]) f.pfc_watchdog = delay_of(r, n["watchdog"], "pfc.watchdog");
  if (n["response_delay"]) f.pfc_response_delay = delay_of(r, n["response_delay"], "pfc.response_delay");
  if (n["nic_rx_buffer"]) {
    f.nic_rx_buffer_bytes = size_of(r, n["nic_rx_buffer"], "pfc.nic_rx_buffer");
    if (f.nic_rx_buffer_bytes < 16 * 1024) r.fail(n["nic_rx_buffer"], "pfc.nic_rx_buffer must be at least 16KiB");
  }
}

void read_ib_credits(const Reader& r, const YAML::Node& n, FabricSpec& f, uint32_t mtu) {
  r.expect_keys(n, "ib_credits settings", kIbCreditKeys);
  f.ib_vl_buffer_bytes = 64 * 1024;
  if (n["vl_buffer"]) f.ib_vl_buffer_bytes = size_of(r, n["vl_buffer"], "ib_credits.vl_buffer");
  if (f.ib_vl_buffer_bytes < mtu + 128)
    r.fail(n["vl_buffer"], "ib_credits.vl_buffer must hold at least one packet (" + std::to_string(mtu + 128) + " bytes)");
  f.switch_params.buffer.credit_based = true;
}

void read_topology(const Reader& r, const YAML::Node& n, Scenario& s) {
  if (!n.IsMap() || !n["kind"]) r.fail(n, "expected topology to be a mapping with 'kind' (single_switch, leaf_spine or fat_tree)");
  const TopologyKind kind = r.choice(n["kind"], "topology.kind", kTopologies);
  std::vector<std::string> names;
  for (const HostSpec& h : s.hosts) names.push_back(h.name);
  fabric::Topology t;
  switch (kind) {
    case TopologyKind::SingleSwitch: {
      r.expect_keys(n, "a single_switch topology", kTopologyKeys, kSingleSwitchKeys);
      if (names.empty()) r.fail(n, "a single_switch topology needs 'hosts'");
      t = fabric::single_switch(names, shape(r, n, "rate", "delay"));
      s.fabric.kind = "single_switch";
      break;
    }
    case TopologyKind::LeafSpine: {
      r.expect_keys(n, "a leaf_spine topology", kTopologyKeys, kLeafSpineKeys);
      const uint32_t leaves = count(r, n, "leaves", 1, 1024);
      const uint32_t spines = count(r, n, "spines", 1, 1024);
      const uint32_t per_leaf = count(r, n, "hosts_per_leaf", 1, 1024);
      if (!names.empty() && names.size() != uint64_t{leaves} * per_leaf)
        r.fail(n, "the leaf_spine topology has " + std::to_string(leaves * per_leaf) + " hosts but 'hosts' names " +
                      std::to_string(names.size()));
      const fabric::LinkShape host = shape(r, n, "host_rate", "delay");
      fabric::LinkShape up = shape(r, n, "fabric_rate", "fabric_delay", host);
      if (n["oversubscription"]) {
        if (n["fabric_rate"]) r.fail(n["oversubscription"], "give topology.fabric_rate or topology.oversubscription, not both");
        const double o = r.real(n["oversubscription"], "topology.oversubscription", 0.01, 1000);
        // Leaf uplink capacity = downlink capacity / oversubscription, spread over the spines.
        const double bps = static_cast<double>(host.rate_bps) * per_leaf / spines / o;
        if (!(bps >= 1 && bps < 1.8e19))  // a cast of a double beyond uint64_t is undefined
          r.fail(n["oversubscription"], "the uplink rate this gives is out of range (1bps to 1.8e19bps)");
        up.rate_bps = static_cast<uint64_t>(bps);
      } else if (!n["fabric_rate"]) {
        up.rate_bps = host.rate_bps * per_leaf / spines;  // 1:1
      }
      t = fabric::leaf_spine(leaves, spines, per_leaf, names, host, up);
      s.fabric.kind = "leaf_spine";
      break;
    }
    case TopologyKind::FatTree: {
      r.expect_keys(n, "a fat_tree topology", kTopologyKeys, kFatTreeKeys);
      const uint32_t k = count(r, n, "k", 2, 64);
      if (k % 2 != 0) r.fail(n["k"], "topology.k must be even");
      if (!names.empty() && names.size() != uint64_t{k} * k * k / 4)
        r.fail(n, "a fat_tree of k = " + std::to_string(k) + " has " + std::to_string(k * k * k / 4) +
                      " hosts but 'hosts' names " + std::to_string(names.size()));
      t = fabric::fat_tree(k, names, shape(r, n, "rate", "delay"));
      s.fabric.kind = "fat_tree";
      break;
    }
  }
  if (s.hosts.empty())
    for (uint32_t h : t.hosts()) {
      HostSpec spec;
      spec.name = t.nodes[h].name;
      if (s.link_layer == LinkLayer::Ib) spec.lid = static_cast<uint16_t>(s.hosts.size() + 1);
      s.hosts.push_back(spec);
    }
  s.fabric.topology = std::move(t);
}

namespace {

// `switches:`, each a node of the topology.
void read_switch_list(const Reader& r, const YAML::Node& sw, fabric::Topology& t) {
  if (!sw.IsSequence()) r.fail(sw, "expected 'switches' to be a list of switches, like [{name: s1}]");
  for (const YAML::Node& e : sw) {
    r.expect_keys(e, "a switch", kSwitchListKeys);
    if (!e["name"]) r.fail(e, "a switch needs a 'name'");
    const std::string name = r.scalar(e["name"], "switch name");
    if (!valid_name(name)) r.fail(e["name"], "switch name '" + name + "' must be letters, digits, '_', '-' or '.'");
    if (t.find(name) >= 0) r.fail(e["name"], "the name '" + name + "' is taken already");
    t.add_node(name, true);
  }
}

// A link's `between:`: two different nodes, a host in one link at most
// (`linked` holds the hosts linked so far). Returns the nodes.
std::pair<int, int> read_link_ends(const Reader& r, const YAML::Node& l, const fabric::Topology& t,
                                   std::set<std::string>& linked, LinkSpec& spec) {
  const YAML::Node between = l["between"];
  if (!between) r.fail(l, "a link needs 'between: [node, node]'");
  if (!between.IsSequence() || between.size() != 2) r.fail(between, "expected 'between' to list exactly two hosts or switches");
  int end[2];
  for (size_t i = 0; i < 2; ++i) {
    const std::string name = r.scalar(between[i], "link end");
    end[i] = t.find(name);
    if (end[i] < 0) r.fail(between[i], "link end names unknown host '" + name + "' (no host or switch has that name)");
    if (!t.nodes[static_cast<size_t>(end[i])].is_switch && !linked.insert(name).second)
      r.fail(between, "host '" + name + "' already has a link (each host has one port in this version)");
    (i == 0 ? spec.a : spec.b) = name;
  }
  if (end[0] == end[1]) r.fail(between[1], "a link must join two different hosts or switches");
  return {end[0], end[1]};
}

void read_gilbert_elliott(const Reader& r, const YAML::Node& ge, fabric::GilbertElliott& g) {
  r.expect_keys(ge, "link gilbert_elliott settings", kGilbertElliottKeys);
  if (!ge["p_good_bad"]) r.fail(ge, "gilbert_elliott needs p_good_bad (and p_bad_good)");
  g.p_good_bad = r.probability(ge["p_good_bad"], "gilbert_elliott.p_good_bad");
  if (ge["p_bad_good"]) g.p_bad_good = r.probability(ge["p_bad_good"], "gilbert_elliott.p_bad_good");
  if (g.p_bad_good == 0) r.fail(ge["p_bad_good"], "gilbert_elliott.p_bad_good must be above 0 (else the link never recovers)");
  if (ge["loss_good"]) g.loss_good = r.probability(ge["loss_good"], "gilbert_elliott.loss_good");
  if (ge["loss_bad"]) g.loss_bad = r.probability(ge["loss_bad"], "gilbert_elliott.loss_bad");
}

// A link's `down:` intervals, in order and apart.
void read_link_down(const Reader& r, const YAML::Node& down, std::vector<std::pair<sim::Duration, sim::Duration>>& out) {
  if (!down.IsSequence()) r.fail(down, "expected link 'down' to be a list like [{from: 100us, to: 200us}]");
  sim::Duration last = sim::Duration::zero();
  for (const YAML::Node& d : down) {
    r.expect_keys(d, "a link down interval", kDownKeys);
    if (!d["from"] || !d["to"]) r.fail(d, "a link down interval needs 'from' and 'to'");
    const sim::Duration from = delay_of(r, d["from"], "down.from"), to = delay_of(r, d["to"], "down.to");
    if (to <= from) r.fail(d["to"], "down.to must be after down.from");
    if (from < last) r.fail(d["from"], "link down intervals must be in order and not overlap");
    last = to;
    out.emplace_back(from, to);
  }
}

// One entry of `links:`, into s.links and the topology.
void read_link(const Reader& r, const YAML::Node& l, Scenario& s, std::set<std::string>& linked) {
  fabric::Topology& t = s.fabric.topology;
  r.expect_keys(l, "a link", kLinkKeys);
  LinkSpec spec;
  const auto [a, b] = read_link_ends(r, l, t, linked, spec);
  if (l["rate"]) spec.rate_bps = rate_of(r, l["rate"], "link rate");
  if (l["delay"]) spec.delay = delay_of(r, l["delay"], "link delay");
  if (l["loss"]) spec.loss = r.probability(l["loss"], "link loss");
  if (const YAML::Node ge = l["gilbert_elliott"]) read_gilbert_elliott(r, ge, spec.gilbert_elliott);
  if (const YAML::Node down = l["down"]) read_link_down(r, down, spec.down);
  s.links.push_back(spec);
  t.add_link(static_cast<uint32_t>(a), static_cast<uint32_t>(b), spec.rate_bps, spec.delay, spec.loss);
  t.links.back().gilbert_elliott = spec.gilbert_elliott;
  t.links.back().down = spec.down;
}

}  // namespace

void read_links(const Reader& r, const YAML::Node& root, Scenario& s) {
  fabric::Topology& t = s.fabric.topology;
  for (const HostSpec& h : s.hosts) t.add_node(h.name, false);
  if (const YAML::Node sw = root["switches"]) read_switch_list(r, sw, t);
  const YAML::Node links = root["links"];
  if (!links) return;
  if (!links.IsSequence()) r.fail(links, "expected 'links' to be a list");
  std::set<std::string> linked;
  for (const YAML::Node& l : links) read_link(r, l, s, linked);
}

void read_captures(const Reader& r, const YAML::Node& n, Scenario& s) {
  if (!n.IsSequence()) r.fail(n, "expected 'captures' to be a list like [{host: a, file: a.pcap}]");
  const fabric::Topology& t = s.fabric.topology;
  const auto links_at = t.links_of_nodes();
  std::set<std::string> files;
  for (const YAML::Node& c : n) {
    r.expect_keys(c, "a capture", kCaptureKeys);
    CaptureSpec spec;
    if (!c["file"] || (!c["host"] == !c["switch"]))
      r.fail(c, "a capture needs 'file' and either 'host' or 'switch' (with 'port')");
    spec.file = r.scalar(c["file"], "capture file");
    if (!files.insert(spec.file).second) r.fail(c["file"], "two captures write '" + spec.file + "'");
    const YAML::Node at = c["host"] ? c["host"] : c["switch"];
    spec.node = r.scalar(at, c["host"] ? "capture host" : "capture switch");
    const int node = t.find(spec.node);
    if (node < 0 || t.nodes[static_cast<size_t>(node)].is_switch != !c["host"])
      r.fail(at, std::string("capture names unknown ") + (c["host"] ? "host" : "switch") + " '" + spec.node + "'");
    const size_t ports = links_at[static_cast<size_t>(node)].size();
    if (ports == 0) r.fail(at, "'" + spec.node + "' has no link to capture");
    if (c["port"]) {
      if (c["host"]) r.fail(c["port"], "a host has one port: 'port' goes with 'switch'");
      spec.port = static_cast<uint32_t>(r.integer(c["port"], "capture port", 0, ports - 1));
    } else if (c["switch"]) {
      r.fail(c, "a switch capture needs 'port' (0 to " + std::to_string(ports - 1) + ")");
    }
    if (c["snaplen"]) spec.snaplen = static_cast<uint32_t>(r.integer(c["snaplen"], "capture snaplen", 64, 262144));
    if (const YAML::Node pr = c["priorities"]) {
      if (!pr.IsSequence() || pr.size() == 0) r.fail(pr, "expected capture priorities to list priorities 0..7, like [3]");
      spec.priorities = 0;
      for (const YAML::Node& x : pr) spec.priorities |= static_cast<uint8_t>(1u << r.integer(x, "a capture priority", 0, 7));
    }
    s.captures.push_back(spec);
  }
}

std::vector<KeySection> fabric_key_sections() {
  return {{"links[]", "", kLinkKeys},
          {"links[].gilbert_elliott", "", kGilbertElliottKeys},
          {"links[].down[]", "", kDownKeys},
          {"switches[]", "", kSwitchListKeys},
          {"topology", "", kTopologyKeys},
          {"topology", "kind: single_switch", kSingleSwitchKeys},
          {"topology", "kind: leaf_spine", kLeafSpineKeys},
          {"topology", "kind: fat_tree", kFatTreeKeys},
          {"switch", "", kSwitchKeys},
          {"switch.ecn", "", kEcnKeys},
          {"pfc", "", kPfcKeys},
          {"ib_credits", "", kIbCreditKeys},
          {"captures[]", "", kCaptureKeys}};
}

bool reachable(const Scenario& s, const std::string& from, const std::string& to) {
  const fabric::Topology& t = s.fabric.topology;
  const int a = t.find(from), b = t.find(to);
  if (a < 0 || b < 0) return false;
  return t.distances_to(static_cast<uint32_t>(b))[static_cast<size_t>(a)] > 0;
}

}  // namespace rnicsim::scenario
