// What every subcommand of rnicsim shares: exit codes, the checks of option
// values (each refusal names what was expected; CLI11 puts the option's name in
// front), the help layout, and --log-level.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

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

// The help layout: "--idle-exit SECONDS   what it does (range; default X)".
std::shared_ptr<CLI::Formatter> help_formatter();

// --log-level NAME, bound to `level` (default warn).
CLI::Option* add_log_level(CLI::App& app, sim::LogLevel& level);

}  // namespace rnicsim::cli
