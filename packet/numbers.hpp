// The numbers that name things on the wire: a queue pair (24 bits in BTH and
// DETH), and the 32-bit keys and SRQ numbers, each a type of its own so that
// one is never passed where another is meant. PSNs are in psn.hpp.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace rnicsim::packet {

class Qpn {
public:
  static constexpr std::uint32_t kMask = 0xFFFFFF;
  constexpr Qpn() = default;
  constexpr explicit Qpn(std::uint32_t v) : v_(v & kMask) {}
  constexpr std::uint32_t value() const { return v_; }
  constexpr auto operator<=>(const Qpn&) const = default;

private:
  std::uint32_t v_ = 0;
};

// A 32-bit number that names one kind of object, a type of its own per `Tag`:
// numbers of different kinds do not mix. Kept whole (no bits masked off), as
// the control path hands them out and its callers pass them back.
template <class Tag>
class Number32 {
public:
  constexpr Number32() = default;
  constexpr explicit Number32(std::uint32_t v) : v_(v) {}
  constexpr std::uint32_t value() const { return v_; }
  constexpr auto operator<=>(const Number32&) const = default;

private:
  std::uint32_t v_ = 0;
};

struct SrqnTag;
struct LkeyTag;
struct RkeyTag;
struct QkeyTag;
// A shared receive queue's number (from 1; 0 names none).
using Srqn = Number32<SrqnTag>;
// A memory region's keys: the lkey local work names it by, the rkey remote
// requests carry (RETH, AtomicETH); and the Q_Key of a UD datagram (DETH).
using Lkey = Number32<LkeyTag>;
using Rkey = Number32<RkeyTag>;
using Qkey = Number32<QkeyTag>;

// QP1, the General Services Interface QP that carries management datagrams
// (the CM's), and its well-known Q_Key (IBA 13.5.1, 13.5.3.2).
inline constexpr Qpn kGsiQpn{1};
inline constexpr Qkey kGsiQkey{0x80010000};

}  // namespace rnicsim::packet

// Hashed as the number they hold.
namespace std {
template <>
struct hash<rnicsim::packet::Qpn> {
  size_t operator()(rnicsim::packet::Qpn n) const noexcept { return hash<uint32_t>{}(n.value()); }
};
template <class Tag>
struct hash<rnicsim::packet::Number32<Tag>> {
  size_t operator()(rnicsim::packet::Number32<Tag> n) const noexcept { return hash<uint32_t>{}(n.value()); }
};
}  // namespace std
