#include "sim/time.hpp"

#include <cstdio>

namespace rnicsim::sim {

std::string to_string(Duration d) {
  const int64_t ps = d.picoseconds();
  const int64_t mag = ps < 0 ? -ps : ps;
  struct Unit { int64_t scale; const char* name; };
  static constexpr Unit kUnits[] = {{1'000'000'000'000, "s"}, {1'000'000'000, "ms"}, {1'000'000, "us"}, {1'000, "ns"}};
  char buf[48];
  for (const Unit& u : kUnits) {
    if (mag >= u.scale) {
      std::snprintf(buf, sizeof buf, "%.3f%s", static_cast<double>(ps) / static_cast<double>(u.scale), u.name);
      return buf;
    }
  }
  std::snprintf(buf, sizeof buf, "%lldps", static_cast<long long>(ps));
  return buf;
}

}  // namespace rnicsim::sim
