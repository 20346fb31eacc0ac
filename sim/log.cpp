#include "sim/log.hpp"

#include <array>

namespace rnicsim::sim {
namespace {
constexpr std::array<std::string_view, 6> kNames = {"trace", "debug", "info", "warn", "error", "off"};
}

std::string_view to_string(LogLevel l) { return kNames[static_cast<size_t>(l)]; }

std::optional<LogLevel> parse_log_level(std::string_view s) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == s) return static_cast<LogLevel>(i);
  return std::nullopt;
}

void Logger::write(LogLevel l, std::string_view component, std::string_view message) {
  std::ostream& out = *sink_;
  if (clock_) out << '[' << to_string(clock_()) << "] ";
  out << to_string(l) << ' ' << component << ": " << message << '\n';
}

}  // namespace rnicsim::sim
