// The one way the scenario language reads a file: scenarios, NIC presets, flow
// CSV files, ns-3 flow files and CDF files all come through here.
#pragma once

#include <cstdint>
#include <string>

namespace rnicsim::scenario {

// Scenarios and presets are a few kilobytes; flow files may list millions of flows.
inline constexpr uint64_t kMaxScenarioFileBytes = uint64_t{16} << 20;
inline constexpr uint64_t kMaxDataFileBytes = uint64_t{1} << 30;

// The whole content of `path`, a regular file of at most `max_bytes`. Anything
// else (a FIFO would block, /dev/zero never ends, a directory means nothing) is
// refused before a byte is read: ScenarioError(path, 0, 0, why).
std::string read_text_file(const std::string& path, uint64_t max_bytes);

}  // namespace rnicsim::scenario
