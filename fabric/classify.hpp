// What a switch reads of a frame: its priority (from DSCP or the 802.1Q PCP for
// RoCEv2, from the LRH SL for native IB), the destination it is forwarded by
// (the destination IP address, or the DLID) and the 5-tuple ECMP hashes (RoCEv2
// puts the flow's entropy in the UDP source port). Reads the headers in place,
// without completing a deferred seal; allocates nothing.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "fabric/frame.hpp"
#include "packet/packet.hpp"

namespace rnicsim::fabric {

// Maps the marking a frame carries to one of the 8 priorities.
struct PriorityMap {
  enum class Trust : uint8_t { Dscp, Pcp };
  Trust trust = Trust::Dscp;  // RoCEv2: which marking counts (untagged frames fall back to DSCP)
  std::array<uint8_t, 64> dscp{};  // default: the class selector, DSCP / 8 (DSCP 26 -> 3)
  std::array<uint8_t, 8> pcp{};    // default: identity
  std::array<uint8_t, 16> sl{};    // IB SL -> priority (VL); default SL mod 8
  PriorityMap() {
    for (size_t i = 0; i < dscp.size(); ++i) dscp[i] = static_cast<uint8_t>(i >> 3);
    for (size_t i = 0; i < pcp.size(); ++i) pcp[i] = static_cast<uint8_t>(i);
    for (size_t i = 0; i < sl.size(); ++i) sl[i] = static_cast<uint8_t>(i & 7);
  }
};

// A destination a switch forwards by: an IPv6 address (IPv4-mapped for IPv4) or,
// for native IB, a LID (in the low 16 bits, `lid` set).
struct RouteKey {
  uint64_t hi = 0, lo = 0;
  bool operator==(const RouteKey&) const = default;
  static RouteKey of_ip(const packet::Ipv6Addr& a);
  static RouteKey of_lid(uint16_t lid) { return RouteKey{1ull << 63, lid}; }
};
struct RouteKeyHash {
  size_t operator()(const RouteKey& k) const noexcept { return std::hash<uint64_t>()(k.hi * 0x9E3779B97F4A7C15ull ^ k.lo); }
};

struct Classified {
  uint8_t priority = 0;
  RouteKey destination;
  uint64_t flow_hash = 0;  // of the 5-tuple (RoCEv2) or SLID/DLID (IB), before any per-switch seed
  uint16_t ip_offset = 0;  // RoCEv2: where the IP header starts (for ECN marking)
};

// What a frame's headers say, whatever a switch's priority map: where it goes,
// its flow, and the markings a map reads.
struct HeaderFields {
  RouteKey destination;
  uint64_t flow_hash = 0;
  uint16_t ip_offset = 0;
  Markings markings;
};
// nullopt: not a frame the switch can forward (not IP, truncated, ...).
std::optional<HeaderFields> read_headers(std::span<const std::byte> frame, packet::LinkType link) noexcept;
// The priority `map` gives markings read from a frame of `link`.
inline uint8_t priority_of(packet::LinkType link, const PriorityMap& map, const Markings& m) {
  if (link != packet::LinkType::Ethernet) return map.sl[m.sl & 0x0F];
  return map.trust == PriorityMap::Trust::Pcp && m.tagged ? map.pcp[m.pcp & 7] : map.dscp[m.dscp & 0x3F];
}

// nullopt: not a frame the switch can forward (not IP, truncated, ...).
std::optional<Classified> classify(std::span<const std::byte> frame, packet::LinkType link,
                                   const PriorityMap& map) noexcept;

// A 64-bit mix (splitmix64's finalizer): the ECMP hash of a flow hash and a seed.
constexpr uint64_t mix64(uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

}  // namespace rnicsim::fabric
