// Random streams derived from (scenario seed, component path): adding or removing a
// component never perturbs the numbers another component draws. The generator is
// xoshiro256** and every distribution is written here, so a seed gives the same
// numbers on every platform and standard library.
#pragma once

#include <cstdint>
#include <string_view>

namespace rnicsim::sim {

class RandomStream {
public:
  RandomStream(uint64_t seed, std::string_view path);

  uint64_t next_u64();
  // Uniform in [0, bound), bound > 0 (Lemire's nearly-divisionless method).
  uint64_t uniform(uint64_t bound);
  // Uniform in [0, 1) with 53 random bits.
  double uniform01();
  bool bernoulli(double p) { return uniform01() < p; }
  // Exponential with the given mean.
  double exponential(double mean);

private:
  uint64_t s_[4];
};

// FNV-1a, used to fold a component path into the seed.
constexpr uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace rnicsim::sim
