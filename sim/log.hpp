// Leveled logging with the simulated time in front of every line. A Logger is an
// object handed to the components that use it, never a global.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <sstream>
#include <string_view>

#include "sim/time.hpp"

namespace rnicsim::sim {

enum class LogLevel : uint8_t { Trace, Debug, Info, Warn, Error, Off };
// The levels' names, in the enum's order (the command line lists them).
inline constexpr std::array<std::string_view, 6> kLogLevelNames = {"trace", "debug", "info", "warn", "error", "off"};

std::string_view to_string(LogLevel l);
std::optional<LogLevel> parse_log_level(std::string_view s);

class Logger {
public:
  // `clock` supplies the simulated time printed on each line (may be empty).
  Logger(std::ostream& sink, LogLevel level, std::function<Time()> clock = {})
      : sink_(&sink), level_(level), clock_(std::move(clock)) {}

  bool enabled(LogLevel l) const { return l >= level_; }
  LogLevel level() const { return level_; }
  void set_level(LogLevel l) { level_ = l; }
  void set_clock(std::function<Time()> clock) { clock_ = std::move(clock); }

  // Formats only when the level is enabled: log(Debug, "qp", [&](auto& os){ os << ...; }).
  template <class F>
  void log(LogLevel l, std::string_view component, F&& body) {
    if (!enabled(l)) return;
    std::ostringstream os;
    body(os);
    write(l, component, os.str());
  }
  void write(LogLevel l, std::string_view component, std::string_view message);

private:
  std::ostream* sink_;
  LogLevel level_;
  std::function<Time()> clock_;
};

}  // namespace rnicsim::sim
