#include "sim/log.hpp"

namespace rnicsim::sim {

std::string_view to_string(LogLevel l) { return kLogLevelNames[static_cast<size_t>(l)]; }

std::optional<LogLevel> parse_log_level(std::string_view s) {
  for (size_t i = 0; i < kLogLevelNames.size(); ++i)
    if (kLogLevelNames[i] == s) return static_cast<LogLevel>(i);
  return std::nullopt;
}

void Logger::write(LogLevel l, std::string_view component, std::string_view message) {
  std::ostream& out = *sink_;
  if (clock_) out << '[' << to_string(clock_()) << "] ";
  out << to_string(l) << ' ' << component << ": " << message << '\n';
}

}  // namespace rnicsim::sim
