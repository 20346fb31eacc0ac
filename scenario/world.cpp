#include "scenario/world.hpp"

#include <arpa/inet.h>

#include <stdexcept>

namespace rnicsim::scenario {

uint64_t port_guid(size_t index) { return 0x020000FFFE000000ull | ((index + 1) & 0xFFFFFF); }

namespace {

packet::Ipv6Addr host_ip(const HostSpec& h, size_t index, LinkLayer layer) {
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
    const std::string text = h.ip.empty() ? "fd00::" + std::to_string(index + 1) : h.ip;
    if (inet_pton(AF_INET6, text.c_str(), ip.data()) != 1) throw std::invalid_argument("bad IPv6 address " + text);
    return ip;
  }
  const std::string text = h.ip.empty() ? "10.0.0." + std::to_string(index + 1) : h.ip;
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) != 1) throw std::invalid_argument("bad IPv4 address " + text);
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

}  // namespace

World::World(const Scenario& s, uint64_t seed, std::ostream& log_sink, const MemoryFor& memory)
    : sim_(seed, log_sink),
      pool_(s.nic.mtu + 512),
      link_kind_(link_kind_of(s)) {
  for (size_t i = 0; i < s.hosts.size(); ++i) {
    auto h = std::make_unique<Host>();
    h->name = s.hosts[i].name;
    // Locally administered MACs 02:00:00:00:00:NN.
    h->address.mac = {0x02, 0x00, 0x00, 0x00, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i + 1)};
    h->address.ip = host_ip(s.hosts[i], i, s.link_layer);
    // LIDs as a subnet manager would assign them: the scenario's, or 1, 2, ... in host order.
    h->address.lid = s.hosts[i].lid != 0 ? s.hosts[i].lid : static_cast<uint16_t>(i + 1);
    nic::NicConfig cfg;
    cfg.name = h->name + ".nic";
    cfg.params = s.nic;
    cfg.link = link_kind_;
    cfg.mac = h->address.mac;
    cfg.ip = h->address.ip;
    cfg.lid = h->address.lid;
    nic::HostMemory& mem = memory ? memory(i) : static_cast<nic::HostMemory&>(h->memory);
    h->nic = std::make_unique<nic::Nic>(sim_, pool_, mem, cfg);
    hosts_.push_back(std::move(h));
  }
  for (const LinkSpec& l : s.links) {
    fabric::PortParams p;
    p.set_framing(packet::is_ib(link_kind_) ? fabric::LinkFraming::Infiniband : fabric::LinkFraming::Ethernet);
    p.rate_bps = l.rate_bps;
    p.delay = l.delay;
    p.loss_rate = l.loss;
    Host& a = host(l.a);
    Host& b = host(l.b);
    a.port = std::make_unique<fabric::Port>(sim_, a.name + ".port0", p);
    b.port = std::make_unique<fabric::Port>(sim_, b.name + ".port0", p);
    fabric::Port::connect(*a.port, *b.port);
    a.nic->attach(*a.port);
    b.nic->attach(*b.port);
  }
}

Host& World::host(const std::string& name) {
  for (auto& h : hosts_)
    if (h->name == name) return *h;
  throw std::out_of_range("no host " + name);
}

}  // namespace rnicsim::scenario
