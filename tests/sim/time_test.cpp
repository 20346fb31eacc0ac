#include "sim/time.hpp"

#include <gtest/gtest.h>

using namespace rnicsim::sim;
using namespace rnicsim::sim::literals;

TEST(Time, LiteralsAreIntegerPicoseconds) {
  EXPECT_EQ((1_ns).picoseconds(), 1000);
  EXPECT_EQ((4_us).picoseconds(), 4'000'000);
  EXPECT_EQ((2_ms + 3_ns).picoseconds(), 2'000'003'000);
  EXPECT_EQ((1_s / 1_us), 1'000'000);
}

TEST(Time, TimePointArithmetic) {
  Time t = Time::zero() + 5_us;
  EXPECT_EQ(t - Time::zero(), 5_us);
  EXPECT_LT(t, t + 1_ps);
  EXPECT_EQ((t - 5_us), Time::zero());
}

TEST(Time, SerializationTimeAtLineRate) {
  // A byte at 100 Gb/s is 80 ps; at 400 Gb/s 20 ps.
  EXPECT_EQ(serialization_time(1, 100'000'000'000), 80_ps);
  EXPECT_EQ(serialization_time(1, 400'000'000'000), 20_ps);
  // 4096+58 bytes at 100 Gb/s.
  EXPECT_EQ(serialization_time(4154, 100'000'000'000), 332'320_ps);
  // Rounds up: 1 byte at 3 Gb/s is 2666.67 ps.
  EXPECT_EQ(serialization_time(1, 3'000'000'000), 2667_ps);
}

TEST(Time, RememberedSerializationTimesAreTheComputedOnes) {
  // Sizes that repeat, alternate and change, as a link and a PCIe queue see them.
  SerializationTimes at(3'000'000'000);
  const uint64_t sizes[] = {4154, 4154, 64, 4154, 64, 64, 1, 5000, 4154, 0, 0, 1 << 22, 4154};
  for (uint64_t n : sizes) EXPECT_EQ(at(n), serialization_time(n, 3'000'000'000)) << n;
}

TEST(Time, ClockDomainConvertsCycles) {
  ClockDomain nic(250'000'000);  // 4 ns period
  EXPECT_EQ(nic.period(), 4_ns);
  EXPECT_EQ(nic.to_duration(Cycles(10)), 40_ns);
  ClockDomain fast(312'500'000);  // 3.2 ns
  EXPECT_EQ(fast.to_duration(Cycles(5)), 16_ns);
  EXPECT_EQ(nic.next_edge(Time::zero() + 5_ns), Time::zero() + 8_ns);
  EXPECT_EQ(nic.next_edge(Time::zero() + 8_ns), Time::zero() + 8_ns);
}

TEST(Time, Rendering) {
  EXPECT_EQ(to_string(1500_ns), "1.500us");
  EXPECT_EQ(to_string(999_ps), "999ps");
  EXPECT_EQ(to_string(2_s), "2.000s");
}
