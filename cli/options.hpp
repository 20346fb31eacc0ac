// What every subcommand of rnicsim shares: exit codes, the checks of option
// values (each refusal names what was expected; CLI11 puts the option's name in
// front), the help layout, and --log-level.
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "scenario/timeline.hpp"
#include "sim/log.hpp"

namespace rnicsim::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

// What a subcommand does once its command line is parsed; returns the exit code.
using Action = std::function<int()>;

// A whole number in [lo, hi], written in decimal digits only ("abc", "1.5",
// "-1" and "12x" are refused, as is anything outside).
CLI::Validator whole_number(uint64_t lo, uint64_t hi);
// A decimal number (1, 0.5, 1e-3) in [lo, hi]; NaN and infinities are refused.
CLI::Validator real_number(double lo, double hi);
// A time with its unit, as scenario files write it (10us, 250ns), above zero.
CLI::Validator positive_duration();
// Text of lo to hi characters.
CLI::Validator text_length(size_t lo, size_t hi);

// `opt` takes one of `names`: its type is written "a|b|c" (the help shows it,
// and the completion offers the names from it) and anything else is refused.
CLI::Option* one_of(CLI::Option* opt, std::span<const std::string_view> names);

// `name` takes one of `names`, the enum values of `value`'s type in order, and
// sets `value` to it; the help's default is `value`'s name now.
template <class E>
CLI::Option* add_choice(CLI::App& app, const std::string& name, E& value, std::span<const std::string_view> names,
                        const std::string& description) {
  auto* opt = app.add_option_function<std::string>(
      name,
      [&value, names](const std::string& s) {
        value = static_cast<E>(std::find(names.begin(), names.end(), s) - names.begin());
      },
      description);
  opt->default_str(std::string(names[static_cast<size_t>(value)]));
  return one_of(opt, names);
}

// The help layout: "--idle-exit SECONDS   what it does (range; default X)".
std::shared_ptr<CLI::Formatter> help_formatter();

// --log-level NAME, bound to `level` (default warn).
CLI::Option* add_log_level(CLI::App& app, sim::LogLevel& level);

// --timeline FILE, --timeline-qps LIST and --timeline-window START:END, bound to `timeline`.
void add_timeline(CLI::App& app, scenario::TimelineOptions& timeline);

// --ib-capture erf|infiniband, the scenario's ib_capture, bound to `name`
// (empty when not given).
CLI::Option* add_ib_capture(CLI::App& app, std::string& name);

}  // namespace rnicsim::cli
