// Simulated time: strong types over integer picoseconds.
//
// At 400 Gb/s a byte takes 20 ps, so picoseconds in an int64 cover about 106 days of
// simulated time with exact arithmetic. No floating point time anywhere in the model.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace rnicsim::sim {

// A span of simulated time (may be negative as the result of a subtraction).
class Duration {
public:
  constexpr Duration() = default;
  static constexpr Duration ps(int64_t v) { return Duration(v); }
  static constexpr Duration ns(int64_t v) { return Duration(v * 1000); }
  static constexpr Duration us(int64_t v) { return Duration(v * 1000'000); }
  static constexpr Duration ms(int64_t v) { return Duration(v * 1000'000'000); }
  static constexpr Duration s(int64_t v) { return Duration(v * 1000'000'000'000); }
  static constexpr Duration zero() { return Duration(0); }
  static constexpr Duration max() { return Duration(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t picoseconds() const { return ps_; }
  constexpr double nanoseconds() const { return static_cast<double>(ps_) / 1e3; }
  constexpr double microseconds() const { return static_cast<double>(ps_) / 1e6; }
  constexpr double seconds() const { return static_cast<double>(ps_) / 1e12; }

  constexpr Duration operator+(Duration o) const { return Duration(ps_ + o.ps_); }
  constexpr Duration operator-(Duration o) const { return Duration(ps_ - o.ps_); }
  constexpr Duration operator*(int64_t k) const { return Duration(ps_ * k); }
  constexpr Duration operator/(int64_t k) const { return Duration(ps_ / k); }
  constexpr int64_t operator/(Duration o) const { return ps_ / o.ps_; }
  constexpr Duration& operator+=(Duration o) { ps_ += o.ps_; return *this; }
  constexpr Duration& operator-=(Duration o) { ps_ -= o.ps_; return *this; }
  constexpr auto operator<=>(const Duration&) const = default;

private:
  constexpr explicit Duration(int64_t v) : ps_(v) {}
  int64_t ps_ = 0;
};

// A point in simulated time, measured from the start of the run.
class Time {
public:
  constexpr Time() = default;
  static constexpr Time zero() { return Time(); }
  static constexpr Time max() { return Time() + Duration::max(); }
  static constexpr Time from_ps(int64_t v) { return Time() + Duration::ps(v); }

  constexpr int64_t picoseconds() const { return since_start_.picoseconds(); }
  constexpr Duration since_start() const { return since_start_; }

  constexpr Time operator+(Duration d) const { return Time(since_start_ + d); }
  constexpr Time operator-(Duration d) const { return Time(since_start_ - d); }
  constexpr Duration operator-(Time o) const { return since_start_ - o.since_start_; }
  constexpr Time& operator+=(Duration d) { since_start_ += d; return *this; }
  constexpr auto operator<=>(const Time&) const = default;

private:
  constexpr explicit Time(Duration d) : since_start_(d) {}
  Duration since_start_;
};

// Time to put `bytes` on a wire of `bits_per_second`, rounded up to a whole picosecond.
constexpr Duration serialization_time(uint64_t bytes, uint64_t bits_per_second) {
  // bytes * 8 * 1e12 / bps, in 64 bits while that fits (up to ~2 MB: every
  // frame and PCIe transfer), else in 128 (a 128-bit division is a library call).
  if (bytes < (uint64_t{1} << 21)) {
    const uint64_t num = bytes * 8'000'000'000'000u;
    return Duration::ps(static_cast<int64_t>((num + bits_per_second - 1) / bits_per_second));
  }
  const unsigned __int128 num = static_cast<unsigned __int128>(bytes) * 8u * 1'000'000'000'000u;
  return Duration::ps(static_cast<int64_t>((num + bits_per_second - 1) / bits_per_second));
}

// serialization_time at one rate, remembering its last two answers: a link
// carries few distinct sizes, and each answer costs a 64-bit division.
class SerializationTimes {
public:
  constexpr explicit SerializationTimes(uint64_t bits_per_second) : bps_(bits_per_second) {}
  Duration operator()(uint64_t bytes) const {
    if (bytes == known_[0].bytes) return known_[0].time;
    if (bytes != known_[1].bytes) known_[1] = Known{bytes, serialization_time(bytes, bps_)};
    std::swap(known_[0], known_[1]);
    return known_[0].time;
  }

private:
  struct Known {
    uint64_t bytes = UINT64_MAX;  // no size: nothing known yet
    Duration time;
  };
  uint64_t bps_;
  mutable Known known_[2];
};

// "12.345us" style rendering, choosing a unit that keeps 3-4 significant digits.
std::string to_string(Duration d);
inline std::string to_string(Time t) { return to_string(t.since_start()); }

namespace literals {
constexpr Duration operator""_ps(unsigned long long v) { return Duration::ps(static_cast<int64_t>(v)); }
constexpr Duration operator""_ns(unsigned long long v) { return Duration::ns(static_cast<int64_t>(v)); }
constexpr Duration operator""_us(unsigned long long v) { return Duration::us(static_cast<int64_t>(v)); }
constexpr Duration operator""_ms(unsigned long long v) { return Duration::ms(static_cast<int64_t>(v)); }
constexpr Duration operator""_s(unsigned long long v) { return Duration::s(static_cast<int64_t>(v)); }
}  // namespace literals

// A number of cycles of some clock. Converted to time only by a ClockDomain.
class Cycles {
public:
  constexpr Cycles() = default;
  constexpr explicit Cycles(uint64_t n) : n_(n) {}
  constexpr uint64_t count() const { return n_; }
  constexpr Cycles operator+(Cycles o) const { return Cycles(n_ + o.n_); }
  constexpr Cycles operator*(uint64_t k) const { return Cycles(n_ * k); }
  constexpr auto operator<=>(const Cycles&) const = default;

private:
  uint64_t n_ = 0;
};

// A clock of a fixed frequency. The period is kept in femtoseconds so that common
// NIC clocks (e.g. 250 MHz, 312.5 MHz, 1 GHz) convert exactly.
class ClockDomain {
public:
  constexpr explicit ClockDomain(uint64_t hertz) : hertz_(hertz) {}
  constexpr uint64_t hertz() const { return hertz_; }
  constexpr Duration to_duration(Cycles c) const {
    if (c.count() < 16384) {  // c * 1e15 fits in 64 bits: no 128-bit division
      const uint64_t fs = c.count() * 1'000'000'000'000'000u / hertz_;
      return Duration::ps(static_cast<int64_t>((fs + 999) / 1000));
    }
    const unsigned __int128 fs = static_cast<unsigned __int128>(c.count()) * 1'000'000'000'000'000u / hertz_;
    return Duration::ps(static_cast<int64_t>((fs + 999) / 1000));
  }
  constexpr Duration period() const { return to_duration(Cycles(1)); }
  // The first clock edge at or after t.
  constexpr Time next_edge(Time t) const {
    const int64_t p = period().picoseconds();
    const int64_t v = t.picoseconds();
    return Time::from_ps((v + p - 1) / p * p);
  }

private:
  uint64_t hertz_;
};

}  // namespace rnicsim::sim
