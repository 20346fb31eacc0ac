// Strong types of the transport: queue pair numbers, memory keys; PSNs come from the
// packet layer (24-bit modular arithmetic).
#pragma once

#include <compare>
#include <cstdint>

#include "packet/psn.hpp"

namespace rnicsim::nic {

using packet::Psn;

class Qpn {
public:
  constexpr Qpn() = default;
  constexpr explicit Qpn(uint32_t v) : v_(v & 0xFFFFFF) {}
  constexpr uint32_t value() const { return v_; }
  constexpr auto operator<=>(const Qpn&) const = default;

private:
  uint32_t v_ = 0;
};

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
