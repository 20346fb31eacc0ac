// Strong types of the transport: queue pair and message sequence numbers; PSNs come from the
// packet layer (24-bit modular arithmetic). Strong types of the control path: CQ, SRQ and
// protection-domain numbers, and the memory keys.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "packet/psn.hpp"
#include "packet/syndrome.hpp"

namespace rnicsim::nic {

using packet::Psn;
using packet::AckKind;
using packet::NakCode;
using packet::Syndrome;

class Qpn {
public:
  constexpr Qpn() = default;
  constexpr explicit Qpn(uint32_t v) : v_(v & 0xFFFFFF) {}
  constexpr uint32_t value() const { return v_; }
  constexpr auto operator<=>(const Qpn&) const = default;

private:
  uint32_t v_ = 0;
};

// A message sequence number: 24 bits, counting messages a responder completed.
class Msn {
public:
  constexpr Msn() = default;
  constexpr explicit Msn(uint32_t v) : v_(v & 0xFFFFFF) {}
  constexpr uint32_t value() const { return v_; }
  constexpr Msn& operator++() {
    v_ = (v_ + 1) & 0xFFFFFF;
    return *this;
  }
  constexpr bool operator==(const Msn&) const = default;

private:
  uint32_t v_ = 0;
};

// A 32-bit number that names one kind of object, a type of its own per `Tag`:
// numbers of different kinds do not mix. Kept whole (no bits masked off), as
// the control path hands them out and its callers pass them back.
template <class Tag>
class Number32 {
public:
  constexpr Number32() = default;
  constexpr explicit Number32(uint32_t v) : v_(v) {}
  constexpr uint32_t value() const { return v_; }
  constexpr auto operator<=>(const Number32&) const = default;

private:
  uint32_t v_ = 0;
};

struct CqnTag;
struct SrqnTag;
struct PdnTag;
struct LkeyTag;
struct RkeyTag;
// Completion queue, shared receive queue and protection domain numbers (from 1; 0 names none).
using Cqn = Number32<CqnTag>;
using Srqn = Number32<SrqnTag>;
using Pdn = Number32<PdnTag>;
// A memory region's keys: the lkey local work names it by, the rkey remote requests do.
// Packets and the WQEs in host memory carry them as raw 32-bit fields.
using Lkey = Number32<LkeyTag>;
using Rkey = Number32<RkeyTag>;

// The queues a doorbell advances: a QP's send or receive queue, or a shared receive queue.
enum class QueueKind : uint8_t { Send, Recv, Srq };

// Asynchronous events (values match ibv_event_type).
enum class AsyncEvent : uint8_t {
  CqErr = 0,
  QpFatal = 1,
  QpReqErr = 2,
  QpAccessErr = 3,
  CommEst = 4,
  SqDrained = 5,
  SrqErr = 14,
  SrqLimitReached = 15,
  QpLastWqeReached = 16,
};

}  // namespace rnicsim::nic

// Hashed as the number they hold.
namespace std {
template <class Tag>
struct hash<rnicsim::nic::Number32<Tag>> {
  size_t operator()(rnicsim::nic::Number32<Tag> n) const noexcept { return hash<uint32_t>{}(n.value()); }
};
}  // namespace std
