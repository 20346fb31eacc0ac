// Processing units: a NIC spreads its per-packet work over several units that
// run side by side, and steers each QP to one of them by its number, so that a
// QP's packets are handled in order by one unit while other QPs' packets go
// through the others (Kalia et al., ATC 2016: one QP is bound to one unit, so
// its rate is one unit's; many QPs reach the NIC's). A block keeps the state of
// each unit (its queue, its event, when it is free again) in one of these.
#pragma once

#include <cstdint>
#include <deque>

#include "packet/numbers.hpp"

namespace rnicsim::nic {

// The unit a QP's work goes to, out of `units`: the one steering rule.
inline uint32_t unit_of(packet::Qpn qpn, uint32_t units) { return qpn.value() % units; }

template <class Unit>
class ProcessingUnits {
public:
  // `count` units (at least one), each made as Unit(index, args...).
  template <class... Args>
  explicit ProcessingUnits(uint32_t count, const Args&... args) {
    for (uint32_t i = 0; i < (count == 0 ? 1 : count); ++i) units_.emplace_back(i, args...);
  }
  uint32_t count() const { return static_cast<uint32_t>(units_.size()); }
  Unit& of(packet::Qpn qpn) { return units_[unit_of(qpn, count())]; }
  Unit& operator[](uint32_t i) { return units_[i]; }
  const Unit& operator[](uint32_t i) const { return units_[i]; }
  auto begin() { return units_.begin(); }
  auto end() { return units_.end(); }
  auto begin() const { return units_.begin(); }
  auto end() const { return units_.end(); }

private:
  std::deque<Unit> units_;  // a deque: units hold events, which never move
};

}  // namespace rnicsim::nic
