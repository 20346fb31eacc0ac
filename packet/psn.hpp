// Packet Sequence Numbers: 24-bit values compared modulo 2^24 (IBA 9.7.1).
#pragma once

#include <compare>
#include <cstdint>

namespace rnicsim::packet {

class Psn {
 public:
  static constexpr std::uint32_t kMask = 0xFFFFFF;
  constexpr Psn() noexcept = default;
  constexpr explicit Psn(std::uint32_t v) noexcept : v_(v & kMask) {}
  constexpr std::uint32_t value() const noexcept { return v_; }

  constexpr Psn operator+(std::uint32_t n) const noexcept { return Psn(v_ + n); }
  constexpr Psn operator-(std::uint32_t n) const noexcept { return Psn(v_ - n); }
  constexpr Psn& operator++() noexcept { v_ = (v_ + 1) & kMask; return *this; }

  /// Signed distance b - a in (-2^23, 2^23]: positive when b is "after" a.
  static constexpr std::int32_t distance(Psn a, Psn b) noexcept {
    std::int32_t d = static_cast<std::int32_t>((b.v_ - a.v_) & kMask);
    return d > 0x800000 ? d - 0x1000000 : d;
  }
  /// Modular order: a < b when b is at most 2^23 ahead of a.
  friend constexpr std::strong_ordering operator<=>(Psn a, Psn b) noexcept { return distance(b, a) <=> 0; }
  friend constexpr bool operator==(Psn a, Psn b) noexcept = default;

 private:
  std::uint32_t v_ = 0;
};

static_assert(Psn(0xFFFFFF) + 1 == Psn(0));
static_assert(Psn(0xFFFFFF) < Psn(2));
static_assert(Psn::distance(Psn(0xFFFFFE), Psn(1)) == 3);
static_assert(Psn::distance(Psn(5), Psn(2)) == -3);

}  // namespace rnicsim::packet
