#include "emulation/process_memory.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <vector>

#include "nic_model/queue_format.hpp"

using rnicsim::emulation::ProcessHostMemory;
namespace nic = rnicsim::nic;

namespace {
uint64_t addr_of(const void* p) { return reinterpret_cast<uint64_t>(p); }
}  // namespace

// The process's memory is reached only inside registered regions.
TEST(ProcessHostMemory, ReadsOnlyInsideRegisteredRegions) {
  std::vector<std::byte> buf(256, std::byte{0x5a});
  ProcessHostMemory m;
  m.set_process(getpid());
  std::array<std::byte, 16> out{};
  EXPECT_FALSE(m.read(addr_of(buf.data()), out));  // nothing registered yet
  m.add_region(addr_of(buf.data()) + 64, 128, 0);
  EXPECT_TRUE(m.read(addr_of(buf.data()) + 64, out));
  EXPECT_EQ(out[0], std::byte{0x5a});
  EXPECT_FALSE(m.read(addr_of(buf.data()) + 60, out));   // starts before the region
  EXPECT_FALSE(m.read(addr_of(buf.data()) + 180, out));  // runs past its end
  m.remove_region(addr_of(buf.data()) + 64, 128, 0);
  EXPECT_FALSE(m.read(addr_of(buf.data()) + 64, out));
  EXPECT_EQ(m.denied(), 4u);
}

// Writing needs a write right of the registration (local write, remote write or atomic).
TEST(ProcessHostMemory, WritesNeedAWriteRight) {
  std::vector<std::byte> buf(64, std::byte{0});
  ProcessHostMemory m;
  m.set_process(getpid());
  const std::array<std::byte, 8> data{std::byte{1}, std::byte{2}};
  m.add_region(addr_of(buf.data()), buf.size(), nic::kAccessRemoteRead);
  EXPECT_FALSE(m.write(addr_of(buf.data()), data));
  EXPECT_EQ(buf[0], std::byte{0});
  m.add_region(addr_of(buf.data()), buf.size(), nic::kAccessLocalWrite);
  EXPECT_TRUE(m.write(addr_of(buf.data()), data));
  EXPECT_EQ(buf[1], std::byte{2});
}

// A process that has gone (no pid) has no memory left but its segments.
TEST(ProcessHostMemory, NoProcessNoMemory) {
  std::vector<std::byte> buf(64);
  ProcessHostMemory m;
  m.add_region(addr_of(buf.data()), buf.size(), nic::kAccessLocalWrite);
  std::array<std::byte, 8> out{};
  EXPECT_FALSE(m.read(addr_of(buf.data()), out));
}

// Rings: the shared segment at its NIC-side address; a CQE lands whole, its
// owner byte as written.
TEST(ProcessHostMemory, SegmentsServeRingsAndCqes) {
  std::vector<std::byte> segment(4096);
  ProcessHostMemory m;
  const uint64_t base = ProcessHostMemory::segment_address(3);
  m.add_segment(base, segment.data(), segment.size());
  nic::Cqe c{};
  c.wr_id = 42;
  c.byte_len = 7;
  c.owner = 1;
  EXPECT_TRUE(m.write(base + 128, nic::bytes_of(c)));
  nic::Cqe back;
  std::memcpy(&back, segment.data() + 128, sizeof back);
  EXPECT_EQ(back.wr_id, 42u);
  EXPECT_EQ(back.byte_len, 7u);
  EXPECT_EQ(back.owner, 1);
  std::array<std::byte, 16> out{};
  EXPECT_TRUE(m.read(base + 128, out));
  EXPECT_FALSE(m.read(base + 4090, out));  // past the segment
  m.remove_segment(base);
  EXPECT_FALSE(m.read(base + 128, out));
}
