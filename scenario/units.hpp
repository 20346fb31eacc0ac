// Quantities written the way people write them: 100Gbps, 1us, 4KiB, 9MB, 500MHz.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/time.hpp"

namespace rnicsim::scenario {

std::optional<uint64_t> parse_size(std::string_view s);        // bytes: 64, 4KiB, 9MB, 1GiB
std::optional<uint64_t> parse_rate(std::string_view s);        // bits/s: 100Gbps, 25Gb/s, 400G
std::optional<sim::Duration> parse_duration(std::string_view s);  // 1us, 250ns, 10ms, 2s, 100ps
std::optional<uint64_t> parse_frequency(std::string_view s);   // Hz: 500MHz, 1GHz

// Seconds as a Duration, or nullopt when they are not a number or do not fit in
// its picoseconds (about +-106 days): a cast of such a double is undefined.
std::optional<sim::Duration> duration_from_seconds(double seconds);

}  // namespace rnicsim::scenario
