#include "scenario/world.hpp"

#include <arpa/inet.h>

#include <cstring>
#include <functional>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace rnicsim::scenario {

uint64_t port_guid(size_t index) { return 0x020000FFFE000000ull | ((index + 1) & 0xFFFFFF); }

packet::Ipv6Addr network_address(const Host& h, size_t index) {
  if (!packet::is_ib(h.nic->config().link)) return h.address.ip;
  return default_host_ip(index, LinkLayer::RoceV2Ipv4);
}

std::array<uint8_t, 6> host_mac(size_t index) {
  return {0x02, 0x00, 0x00, static_cast<uint8_t>(index >> 16), static_cast<uint8_t>(index >> 8),
          static_cast<uint8_t>(index + 1)};
}

packet::Ipv6Addr default_host_ip(size_t index, LinkLayer layer) {
  packet::Ipv6Addr ip{};
  if (layer == LinkLayer::RoceV2Ipv6) {
    if (index + 1 <= 9999) {  // the digits of index + 1 read as hex, as they always were
      const std::string text = "fd00::" + std::to_string(index + 1);
      inet_pton(AF_INET6, text.c_str(), ip.data());
      return ip;
    }
    if (index > 0xFFFFFFFFu) throw std::invalid_argument("more hosts than fd00::1:0:0/96 holds");
    ip[0] = 0xFD;
    ip[11] = 1;  // fd00::1:X:Y, apart from every fd00::N above
    for (int b = 0; b < 4; ++b) ip[12 + static_cast<size_t>(b)] = static_cast<uint8_t>(index >> (24 - 8 * b));
    return ip;
  }
  const size_t subnet = index / 254;  // the /24 within 10.0.0.0/8
  if (subnet > 0xFFFF) throw std::invalid_argument("more hosts than 10.0.0.0/8 holds");
  ip[10] = ip[11] = 0xFF;  // IPv4-mapped: ::ffff:a.b.c.d
  ip[12] = 10;
  ip[13] = static_cast<uint8_t>(subnet >> 8);
  ip[14] = static_cast<uint8_t>(subnet);
  ip[15] = static_cast<uint8_t>(index % 254 + 1);
  return ip;
}

namespace {

packet::Ipv6Addr host_ip(const HostSpec& h, size_t index, LinkLayer layer) {
  if (h.ip.empty() && layer != LinkLayer::Ib) return default_host_ip(index, layer);
  packet::Ipv6Addr ip{};
  if (layer == LinkLayer::Ib) {
    // The port GID: the default subnet prefix fe80::/64 and the port GUID, or the given one.
    if (!h.ip.empty()) {
      if (inet_pton(AF_INET6, h.ip.c_str(), ip.data()) != 1) throw std::invalid_argument("bad GID (IPv6 text) " + h.ip);
      return ip;
    }
    ip[0] = 0xFE;
    ip[1] = 0x80;
    const uint64_t guid = port_guid(index);
    for (int b = 0; b < 8; ++b) ip[8 + static_cast<size_t>(b)] = static_cast<uint8_t>(guid >> (56 - 8 * b));
    return ip;
  }
  if (layer == LinkLayer::RoceV2Ipv6) {
    if (inet_pton(AF_INET6, h.ip.c_str(), ip.data()) != 1) throw std::invalid_argument("bad IPv6 address " + h.ip);
    return ip;
  }
  in_addr v4{};
  if (inet_pton(AF_INET, h.ip.c_str(), &v4) != 1) throw std::invalid_argument("bad IPv4 address " + h.ip);
  ip[10] = ip[11] = 0xFF;  // IPv4-mapped: ::ffff:a.b.c.d
  std::memcpy(ip.data() + 12, &v4, 4);
  return ip;
}

packet::LinkKind link_kind_of(const Scenario& s) {
  switch (s.link_layer) {
    case LinkLayer::RoceV2Ipv4: return packet::LinkKind::RoceV2Ipv4;
    case LinkLayer::RoceV2Ipv6: return packet::LinkKind::RoceV2Ipv6;
    case LinkLayer::Ib: return s.ib_grh ? packet::LinkKind::IbGlobal : packet::LinkKind::IbLocal;
  }
  return packet::LinkKind::RoceV2Ipv4;
}

// The faults' ports, given each host's port and the far end of a port's link
// (null: none), in a fixed order; a fault on a link that does not exist throws.
std::vector<fabric::Port*> fault_ports(const FaultSpec& f,
                                       const std::function<fabric::Port*(const std::string&)>& host_port,
                                       const std::function<fabric::Port*(const fabric::Port*)>& far_end) {
  std::vector<fabric::Port*> v;
  if (!f.host.empty()) {
    fabric::Port* p = host_port(f.host);
    if (p == nullptr || far_end(p) == nullptr) throw std::invalid_argument("fault host '" + f.host + "' has no link");
    if (f.tx) v.push_back(p);
    if (f.rx) v.push_back(far_end(p));
    return v;
  }
  fabric::Port* a = host_port(f.link_a);
  fabric::Port* b = host_port(f.link_b);
  if (a == nullptr || b == nullptr || far_end(a) != b)
    throw std::invalid_argument("no link between '" + f.link_a + "' and '" + f.link_b + "' for the fault");
  v.push_back(a);
  v.push_back(b);
  return v;
}

// The smallest delay of a link (none without links).
std::optional<sim::Duration> shortest_delay(const fabric::Topology& t) {
  std::optional<sim::Duration> shortest;
  for (const fabric::TopoLink& l : t.links)
    if (l.delay > sim::Duration::zero()) shortest = std::min(shortest.value_or(l.delay), l.delay);
  return shortest;
}

nic::NicConfig nic_config(const Scenario& s, const HostSpec& spec, const Host& h, packet::LinkKind link,
                          sim::Actor actor) {
  nic::NicConfig cfg;
  cfg.name = h.name + ".nic";
  cfg.actor = actor;
  cfg.params = spec.nic.value_or(s.nic);
  cfg.link = link;
  cfg.mac = h.address.mac;
  cfg.ip = h.address.ip;
  cfg.lid = h.address.lid;
  cfg.elide_payload = s.size_only;
  cfg.priorities = s.fabric.switch_params.priorities;
  return cfg;
}

// Both ends of a link have the same port settings.
fabric::PortParams link_port_params(const Scenario& s, const fabric::TopoLink& l, bool ib) {
  fabric::PortParams p;
  p.set_framing(ib ? fabric::LinkFraming::Infiniband : fabric::LinkFraming::Ethernet);
  p.rate_bps = l.rate_bps;
  p.delay = l.delay;
  p.loss_rate = l.loss;
  p.gilbert_elliott = l.gilbert_elliott;
  if (ib) p.vl_credit_bytes = s.fabric.ib_vl_buffer_bytes;
  p.pfc_watchdog = s.fabric.pfc_watchdog;
  p.pfc_response_delay = s.fabric.pfc_response_delay;
  return p;
}

}  // namespace

World::World(const Scenario& s, uint64_t seed, std::ostream& log_sink, const MemoryFor& memory, Outside outside,
             uint32_t partitions)
    : outside_apart_(outside == Outside::Apart),
      map_(partition_map(s, partitions)),
      link_kind_(link_kind_of(s)),
      size_only_(s.size_only) {
  if (partitions > 1 && !outside_apart_) throw std::invalid_argument("a world in partitions has its outside apart");
  for (uint32_t p = 0; p < partitions; ++p) {
    parts_.push_back(std::make_unique<Partition>(seed, log_sink, s.nic.mtu + 512, partitions));
    if (outside_apart_) parts_.back()->sim.scheduler().take_outside_keys_from(outside_);  // before anything is scheduled
  }
  add_hosts(s, memory);
  control_delay_ = shortest_delay(s.fabric.topology).value_or(control_delay_);
  // The fabric: one port per link end; a switch's port i is its i-th link.
  const std::vector<fabric::Switch*> switch_of = add_switches(s);
  add_links(s, switch_of);
  for (auto& h : hosts_) {
    if (!h->port) continue;
    h->nic->attach(*h->port);
    if (!packet::is_ib(link_kind_) && s.fabric.switch_params.pfc.enabled())
      h->nic->enable_pfc(s.fabric.switch_params.pfc, s.fabric.nic_rx_buffer_bytes);
  }
  add_routes(s.fabric.topology, switch_of);
  auto far_end = [this](const fabric::Port* p) -> fabric::Port* {
    for (auto [a, b] : wires_)
      if (a == p || b == p) return a == p ? b : a;
    return nullptr;
  };
  auto host_port = [this](const std::string& name) { return host(name).port.get(); };
  for (const FaultSpec& f : s.faults)
    for (fabric::Port* p : fault_ports(f, host_port, far_end)) p->faults().add_rule(f.rule);
}

World::~World() = default;

sim::Time World::now() const {
  sim::Time t = outside_.now();
  for (const auto& p : parts_) t = std::max(t, p->sim.now());
  return t;
}

sim::Time World::now_anywhere() const {
  const sim::Time t = now();
  return ranks_ == nullptr ? t : sim::Time::from_ps(ranks_->max(t.picoseconds()));
}

bool World::any_rank(bool b) const { return ranks_ == nullptr ? b : ranks_->max(b) != 0; }

bool World::pending() const {
  if (!outside_.empty()) return true;
  for (const auto& p : parts_)
    if (!p->sim.scheduler().empty()) return true;
  return false;
}

uint64_t World::events_fired() const {
  uint64_t n = outside_apart_ ? outside_.events_fired() : 0;
  for (const auto& p : parts_) n += p->sim.scheduler().events_fired();
  return n;
}

uint32_t World::listen(Listener listener) {
  listeners_.push_back(std::move(listener));
  return static_cast<uint32_t>(listeners_.size() - 1);
}

void World::tell(uint32_t from, uint32_t to, const fabric::CrossingWord& word) {
  if (from == to) {
    listeners_.at(word.listener)(word);
    return;
  }
  parts_.at(from)->to.at(to).word(word);
}

// Lands one partition's crossings into partition `p` (what another rank's
// partition sent, or a partition of this process).
void World::land_from(uint32_t p, std::span<const std::byte> bytes) {
  fabric::CrossingReader in(bytes, parts_.at(p)->pool, destinations_.get());
  for (;;) {
    fabric::CrossingReader::Record r = in.next();
    if (auto* f = std::get_if<fabric::CrossingFrame>(&r)) {
      ports_.at(f->port)->land(f->arrival, f->key, std::move(f->frame));
    } else if (auto* c = std::get_if<fabric::CrossingCredit>(&r)) {
      ports_.at(c->port)->land_credit(*c);
    } else if (auto* w = std::get_if<fabric::CrossingWord>(&r)) {
      listeners_.at(w->listener)(*w);
    } else {
      break;
    }
  }
  if (in.malformed()) throw std::logic_error("a crossing record between partitions does not parse");
}

// A partition held by this process wrote its outbox; one of another rank's
// came as bytes. Each is empty where the other is.
void World::land(uint32_t p) {
  Partition& here = *parts_.at(p);
  for (uint32_t q = 0; q < parts_.size(); ++q) {
    if (q == p) continue;
    land_from(p, parts_[q]->to[p].bytes());
    land_from(p, here.inbox[q]);
  }
}

void World::clear(uint32_t p) {
  Partition& part = *parts_.at(p);
  for (size_t q = 0; q < part.to.size(); ++q) {
    if (const size_t n = part.to[q].bytes().size(); n > 0) {
      ++part.crossed[q].windows;
      part.crossed[q].bytes += n;
    }
    part.to[q].clear();
  }
  for (auto& bytes : part.inbox) bytes = {};
}

sim::Partitions::Mail World::mail(uint32_t p) {
  Partition& part = *parts_.at(p);
  auto earliest = [&part] {
    sim::Time t = sim::Time::max();
    for (const fabric::CrossingWriter& w : part.to) t = std::min(t, w.earliest());
    return t;
  };
  return {[&part](size_t to) { return part.to.at(to).bytes(); },
          [&part](size_t from, std::span<const std::byte> bytes) { part.inbox.at(from) = bytes; }, earliest};
}

void World::add_hosts(const Scenario& s, const MemoryFor& memory) {
  for (size_t i = 0; i < s.hosts.size(); ++i) {
    auto h = std::make_unique<Host>();
    h->name = s.hosts[i].name;
    h->address.mac = host_mac(i);
    h->address.ip = host_ip(s.hosts[i], i, s.link_layer);
    // LIDs as a subnet manager would assign them: the scenario's, or 1, 2, ... in host order.
    h->address.lid = s.hosts[i].lid != 0 ? s.hosts[i].lid : static_cast<uint16_t>(i + 1);
    const nic::NicConfig cfg = nic_config(s, s.hosts[i], *h, link_kind_, sim::Actor(static_cast<uint32_t>(i + 1)));
    // Simulated memory defers DMA writes of payload until somebody looks:
    // the workloads look through access(), and keep span()s of rings only.
    if (!memory) h->memory.set_deferring(true);
    nic::HostMemory& mem = memory ? memory(i) : static_cast<nic::HostMemory&>(h->memory);
    host_partition_.push_back(map_.of_node[static_cast<uint32_t>(s.fabric.topology.find(h->name))]);
    Partition& part = *parts_[host_partition_.back()];
    h->nic = std::make_unique<nic::Nic>(part.sim, part.pool, mem, cfg);
    host_named_.emplace(h->name, h.get());
    hosts_.push_back(std::move(h));
  }
}

std::vector<fabric::Switch*> World::add_switches(const Scenario& s) {
  const fabric::Topology& t = s.fabric.topology;
  const bool ib = packet::is_ib(link_kind_);
  std::vector<fabric::Switch*> switch_of(t.nodes.size(), nullptr);
  // One numbering of the hosts for every switch: a frame learns its number once.
  destinations_ = std::make_shared<fabric::Destinations>();
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    if (!t.nodes[n].is_switch) continue;
    const sim::Actor actor(static_cast<uint32_t>(hosts_.size() + switches_.size() + 1));
    Partition& part = part_of_node(n);
    switches_.push_back(std::make_unique<fabric::Switch>(
        part.sim, part.pool, t.nodes[n].name, s.fabric.switch_params,
        ib ? packet::LinkType::Infiniband : packet::LinkType::Ethernet, actor));
    switches_.back()->share_destinations(destinations_);
    switch_partition_.push_back(map_.of_node[n]);
    switch_of[n] = switches_.back().get();
  }
  return switch_of;
}

void World::add_links(const Scenario& s, const std::vector<fabric::Switch*>& switch_of) {
  const fabric::Topology& t = s.fabric.topology;
  auto port_at = [&](uint32_t node, const fabric::PortParams& p) -> fabric::Port& {
    if (fabric::Switch* sw = switch_of[node]) return sw->port(sw->add_port(p));
    Host& h = host(t.nodes[node].name);
    h.port = std::make_unique<fabric::Port>(part_of_node(node).sim, h.name + ".port0", p, h.actor());
    return *h.port;
  };
  std::vector<std::tuple<fabric::Port*, uint32_t, fabric::Port*, uint32_t, sim::Duration>> links;
  for (const fabric::TopoLink& l : t.links) {
    const fabric::PortParams p = link_port_params(s, l, packet::is_ib(link_kind_));
    fabric::Port& a = port_at(l.a, p);
    fabric::Port& b = port_at(l.b, p);
    links.emplace_back(&a, l.a, &b, l.b, l.delay);
    for (const auto& [from, to] : l.down)
      for (const auto& [when, up] : {std::pair{from, false}, std::pair{to, true}}) {
        link_events_.push_back(std::make_unique<sim::Event>(
            [&a, &b, up = up] {
              a.set_link_up(up);
              b.set_link_up(up);
            },
            "link.state"));
        outside().schedule(*link_events_.back(), sim::Time::zero() + when);
      }
  }
  // Ports of switches live in the switch; connect once every port exists.
  for (auto& sw : switches_) sw->finish();
  for (auto [a, node_a, b, node_b, delay] : links) wire(*a, node_a, *b, node_b, delay);
}

void World::wire(fabric::Port& a, uint32_t node_a, fabric::Port& b, uint32_t node_b, sim::Duration delay) {
  wires_.emplace_back(&a, &b);
  const uint32_t pa = map_.of_node[node_a], pb = map_.of_node[node_b];
  if (pa == pb) {
    fabric::Port::connect(a, b);
    return;
  }
  // Nothing sent across may arrive within the window it was sent in.
  if (delay < control_delay_)
    throw std::invalid_argument("the link between " + a.name() + " and " + b.name() +
                                " is cut between partitions but is shorter than the engine's window");
  cut_delay_ = std::min(cut_delay_, delay);
  const auto na = static_cast<uint32_t>(ports_.size());
  ports_.push_back(&a);
  const auto nb = static_cast<uint32_t>(ports_.size());
  ports_.push_back(&b);
  a.connect_across(parts_[pa]->to[pb], nb);
  b.connect_across(parts_[pb]->to[pa], na);
}

void World::add_routes(const fabric::Topology& t, const std::vector<fabric::Switch*>& switch_of) {
  const bool ib = packet::is_ib(link_kind_);
  for (const fabric::SwitchRoutes& r : fabric::shortest_path_routes(t)) {
    fabric::Switch& sw = *switch_of[r.node];
    for (const auto& [node, ports] : r.to_host) {
      const Host& h = host(t.nodes[node].name);
      sw.add_route(ib ? fabric::RouteKey::of_lid(h.address.lid) : fabric::RouteKey::of_ip(h.address.ip), ports);
    }
  }
}

uint32_t World::node_partition(const std::string& node) const {
  for (size_t i = 0; i < switches_.size(); ++i)
    if (switches_[i]->name() == node) return switch_partition_[i];
  if (const auto it = host_named_.find(node); it != host_named_.end()) return partition_of(*it->second);
  throw std::out_of_range("no host or switch " + node);
}

fabric::Port& World::capture_port(const std::string& node, uint32_t port) {
  for (auto& sw : switches_)
    if (sw->name() == node) return sw->port(port);
  Host& h = host(node);
  if (!h.port) throw std::out_of_range("host " + node + " has no port");
  return *h.port;
}

std::optional<nic::AddressVector> World::address_of(const packet::Ipv6Addr& gid, uint16_t lid) const {
  for (const auto& h : hosts_)
    if ((gid != packet::Ipv6Addr{} && h->address.ip == gid) || (lid != 0 && h->address.lid == lid)) return h->address;
  return std::nullopt;
}

cm::ConnectionManager& World::connection_manager(const Host& host) {
  cms_.resize(hosts_.size());
  for (size_t i = 0; i < hosts_.size(); ++i) {
    if (hosts_[i].get() != &host) continue;
    if (!cms_[i]) {
      Host& h = *hosts_[i];
      const uint64_t addr = h.memory.allocate(cm::MadAgent::kMemoryBytes, 4096);
      auto resolve = [this](const cm::MadSource& s) { return address_of(s.gid, s.lid); };
      cms_[i] = std::make_unique<cm::ConnectionManager>(
          sim(partition_of(h)), *h.nic, cm::AgentMemory{addr, h.memory.span(addr, cm::MadAgent::kMemoryBytes)},
          resolve);
    }
    return *cms_[i];
  }
  throw std::out_of_range("no such host");
}

Host& World::host(const std::string& name) {
  const auto it = host_named_.find(name);
  if (it == host_named_.end()) throw std::out_of_range("no host " + name);
  return *it->second;
}

}  // namespace rnicsim::scenario
