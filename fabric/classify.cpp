#include "fabric/classify.hpp"

namespace rnicsim::fabric {
namespace {

uint64_t load64(const std::byte* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
uint16_t load16(const std::byte* p) { return static_cast<uint16_t>((static_cast<uint8_t>(p[0]) << 8) | static_cast<uint8_t>(p[1])); }
uint32_t load32(const std::byte* p) { return (uint32_t{load16(p)} << 16) | load16(p + 2); }

std::optional<HeaderFields> read_ethernet(std::span<const std::byte> f) {
  if (f.size() < 14) return std::nullopt;
  size_t off = 12;
  uint16_t type = load16(f.data() + off);
  HeaderFields c;
  if (type == packet::kEtherTypeVlan) {
    if (f.size() < 18) return std::nullopt;
    c.markings.tagged = true;
    c.markings.pcp = static_cast<uint8_t>(static_cast<uint8_t>(f[14]) >> 5);
    off += 4;
    type = load16(f.data() + off);
  }
  off += 2;  // the IP header
  c.ip_offset = static_cast<uint16_t>(off);
  uint8_t proto = 0;
  size_t l4 = 0;
  uint64_t src_hi = 0, src_lo = 0;
  if (type == packet::kEtherTypeIpv4) {
    if (f.size() < off + 20) return std::nullopt;
    const std::byte* ip = f.data() + off;
    c.markings.dscp = static_cast<uint8_t>(static_cast<uint8_t>(ip[1]) >> 2);
    proto = static_cast<uint8_t>(ip[9]);
    l4 = off + (static_cast<size_t>(static_cast<uint8_t>(ip[0]) & 0x0F) * 4);
    c.destination = RouteKey{0, 0x0000FFFF00000000ull | load32(ip + 16)};
    src_lo = load32(ip + 12);
  } else if (type == packet::kEtherTypeIpv6) {
    if (f.size() < off + 40) return std::nullopt;
    const std::byte* ip = f.data() + off;
    c.markings.dscp = static_cast<uint8_t>((load16(ip) >> 6) & 0x3F);
    proto = static_cast<uint8_t>(ip[6]);
    l4 = off + 40;
    c.destination = RouteKey{load64(ip + 24), load64(ip + 32)};
    src_hi = load64(ip + 8);
    src_lo = load64(ip + 16);
  } else {
    return std::nullopt;
  }
  uint32_t ports = 0;
  if (proto == packet::kIpProtoUdp && f.size() >= l4 + 4) ports = load32(f.data() + l4);
  c.flow_hash = mix64(mix64(src_hi ^ mix64(src_lo)) ^ c.destination.hi ^ mix64(c.destination.lo) ^
                      (uint64_t{proto} << 32 | ports));
  return c;
}

std::optional<HeaderFields> read_ib(std::span<const std::byte> f) {
  if (f.size() < 8) return std::nullopt;
  HeaderFields c;
  c.markings.sl = static_cast<uint8_t>(static_cast<uint8_t>(f[1]) >> 4);
  const uint16_t dlid = load16(f.data() + 2);
  const uint16_t slid = load16(f.data() + 6);
  c.destination = RouteKey::of_lid(dlid);
  c.flow_hash = mix64(uint64_t{slid} << 16 | dlid);
  return c;
}

}  // namespace

RouteKey RouteKey::of_ip(const packet::Ipv6Addr& a) {
  return RouteKey{load64(reinterpret_cast<const std::byte*>(a.data())),
                  load64(reinterpret_cast<const std::byte*>(a.data() + 8))};
}

std::optional<HeaderFields> read_headers(std::span<const std::byte> frame, packet::LinkType link) noexcept {
  return link == packet::LinkType::Ethernet ? read_ethernet(frame) : read_ib(frame);
}

std::optional<Classified> classify(std::span<const std::byte> frame, packet::LinkType link,
                                   const PriorityMap& map) noexcept {
  const auto h = read_headers(frame, link);
  if (!h) return std::nullopt;
  return Classified{priority_of(link, map, h->markings), h->destination, h->flow_hash, h->ip_offset};
}

}  // namespace rnicsim::fabric
