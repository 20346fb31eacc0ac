// Fuzzes `rnicsim lint` on a capture file: the input is the whole file (pcap or
// pcapng), read from memory through the same code as a file on disk. Lint must
// answer with a report or an error and an exit status of 0, 1 or 2.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "lint/lint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;  // fmemopen() refuses an empty buffer
  std::vector<std::uint8_t> copy(data, data + size);
  std::FILE* file = fmemopen(copy.data(), copy.size(), "rb");
  if (file == nullptr) return 0;
  std::ostringstream out, err;
  const int status = rnicsim::lint::run_lint(file, "fuzz.pcap", out, err);
  if (status < 0 || status > 2) {
    std::fprintf(stderr, "pcap fuzzer: lint returned %d\n", status);
    std::abort();
  }
  return 0;
}
