#include "scenario/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <string>

namespace rnicsim::scenario {
namespace {

struct Unit {
  std::string_view suffix;
  double scale;
};

// Splits "12.5Gbps" into 12.5 and "Gbps"; nullopt if there is no leading number.
std::optional<std::pair<double, std::string_view>> split(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == 0) return std::nullopt;
  double v = 0;
  const std::string num(s.substr(0, i));
  char* end = nullptr;
  v = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  std::string_view rest = s.substr(i);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return std::make_pair(v, rest);
}

template <size_t N>
std::optional<double> scaled(std::string_view s, const std::array<Unit, N>& units) {
  auto parts = split(s);
  if (!parts) return std::nullopt;
  for (const Unit& u : units)
    if (parts->second == u.suffix) return parts->first * u.scale;
  return std::nullopt;
}

// Picoseconds as a Duration, if they fit: NaN and infinities fail both comparisons.
std::optional<sim::Duration> from_ps(double ps) {
  if (!(ps >= -9.2e18 && ps <= 9.2e18)) return std::nullopt;
  return sim::Duration::ps(static_cast<int64_t>(std::llround(ps)));
}

std::optional<uint64_t> whole(std::optional<double> v) {
  if (!v || *v > 1.8e19 || std::floor(*v) != *v) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

}  // namespace

std::optional<uint64_t> parse_size(std::string_view s) {
  static constexpr std::array<Unit, 10> kUnits = {{{"", 1}, {"B", 1}, {"KiB", 1024.0}, {"MiB", 1024.0 * 1024},
                                                   {"GiB", 1024.0 * 1024 * 1024}, {"KB", 1e3}, {"MB", 1e6},
                                                   {"GB", 1e9}, {"K", 1024.0}, {"M", 1024.0 * 1024}}};
  return whole(scaled(s, kUnits));
}

std::optional<uint64_t> parse_rate(std::string_view s) {
  static constexpr std::array<Unit, 12> kUnits = {{{"bps", 1}, {"Kbps", 1e3}, {"Mbps", 1e6}, {"Gbps", 1e9},
                                                   {"Tbps", 1e12}, {"Kb/s", 1e3}, {"Mb/s", 1e6}, {"Gb/s", 1e9},
                                                   {"Tb/s", 1e12}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}}};
  auto v = whole(scaled(s, kUnits));
  if (v && *v == 0) return std::nullopt;
  return v;
}

std::optional<sim::Duration> parse_duration(std::string_view s) {
  static constexpr std::array<Unit, 6> kUnits = {
      {{"ps", 1}, {"ns", 1e3}, {"us", 1e6}, {"ms", 1e9}, {"s", 1e12}, {"µs", 1e6}}};
  auto v = scaled(s, kUnits);
  if (!v) return std::nullopt;
  return from_ps(*v);
}

std::optional<sim::Duration> duration_from_seconds(double seconds) { return from_ps(seconds * 1e12); }

std::optional<uint64_t> parse_frequency(std::string_view s) {
  static constexpr std::array<Unit, 4> kUnits = {{{"Hz", 1}, {"KHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}}};
  auto v = whole(scaled(s, kUnits));
  if (v && *v == 0) return std::nullopt;
  return v;
}

}  // namespace rnicsim::scenario
