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
// `m` reaches this process's `buf` (local write); returns buf's address.
uint64_t register_own(ProcessHostMemory& m, std::vector<std::byte>& buf) {
  m.set_process(getpid());
  m.add_region(addr_of(buf.data()), buf.size(), nic::kAccessLocalWrite);
  return addr_of(buf.data());
}
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
  m.flush();
  EXPECT_EQ(buf[1], std::byte{2});
}

// Writes that continue each other go out as one process_vm_writev, at flush()
// or before a CQE (which must not overtake the data it completes).
TEST(ProcessHostMemory, ConsecutiveWritesGoOutTogetherBeforeTheCqe) {
  std::vector<std::byte> buf(64, std::byte{0});
  std::vector<std::byte> segment(4096);
  ProcessHostMemory m;
  m.set_process(getpid());
  const uint64_t base = ProcessHostMemory::segment_address(1);
  m.add_segment(base, segment.data(), segment.size());
  m.add_region(addr_of(buf.data()), buf.size(), nic::kAccessLocalWrite);
  const std::array<std::byte, 16> a{std::byte{1}}, b{std::byte{2}};
  EXPECT_TRUE(m.write(addr_of(buf.data()), a));
  EXPECT_TRUE(m.write(addr_of(buf.data()) + 16, b));
  EXPECT_EQ(m.system_calls(), 0u);
  EXPECT_TRUE(m.write(base, nic::bytes_of(nic::Cqe{})));
  EXPECT_EQ(m.system_calls(), 1u);
  EXPECT_EQ(buf[0], std::byte{1});
  EXPECT_EQ(buf[16], std::byte{2});
  EXPECT_TRUE(m.write(addr_of(buf.data()) + 48, a));
  m.flush();
  EXPECT_EQ(m.system_calls(), 2u);
  EXPECT_EQ(buf[48], std::byte{1});
}

// A read that continues the last one fills a read-ahead window; the reads after
// it come from there until the window is dropped: by forget_reads() (the
// program posted work, it may have changed its buffers), by a write into it,
// by a read elsewhere.
TEST(ProcessHostMemory, ReadAheadWindowAndWhatDropsIt) {
  std::vector<std::byte> buf(256, std::byte{7});
  ProcessHostMemory m;
  const uint64_t at = register_own(m, buf);
  std::array<std::byte, 16> out{};
  EXPECT_TRUE(m.read(at, out));       // direct
  EXPECT_TRUE(m.read(at + 16, out));  // continues: fills the window (to the region's end)
  EXPECT_TRUE(m.read(at + 32, out));  // from the window
  EXPECT_EQ(m.system_calls(), 2u);
  buf[48] = std::byte{9};
  EXPECT_TRUE(m.read(at + 48, out));
  EXPECT_EQ(out[0], std::byte{7});  // read ahead before the change
  m.forget_reads();
  buf[64] = std::byte{9};
  EXPECT_TRUE(m.read(at + 64, out));
  EXPECT_EQ(out[0], std::byte{9});
  EXPECT_EQ(m.system_calls(), 3u);
  const std::array<std::byte, 16> five{std::byte{5}};
  EXPECT_TRUE(m.write(at + 80, five));
  EXPECT_TRUE(m.read(at + 80, out));  // the write went out first, the window is gone
  EXPECT_EQ(out[0], std::byte{5});
  buf[0] = std::byte{3};
  EXPECT_TRUE(m.read(at, out));  // elsewhere: direct
  EXPECT_EQ(out[0], std::byte{3});
}

// An RDMA READ's or an atomic's target is read as it is at that moment, never
// from what was read ahead, and such a read drops the window.
TEST(ProcessHostMemory, ReadNowIgnoresAndDropsTheReadAheadWindow) {
  std::vector<std::byte> buf(256, std::byte{7});
  ProcessHostMemory m;
  const uint64_t at = register_own(m, buf);
  std::array<std::byte, 16> out{};
  EXPECT_TRUE(m.read(at, out));
  EXPECT_TRUE(m.read(at + 16, out));  // fills the window
  buf[32] = std::byte{9};
  EXPECT_TRUE(m.read_now(at + 32, out));
  EXPECT_EQ(out[0], std::byte{9});
  buf[48] = std::byte{4};
  EXPECT_TRUE(m.read(at + 48, out));  // the window is gone: direct
  EXPECT_EQ(out[0], std::byte{4});
  std::array<std::byte, 16> outside{};
  EXPECT_FALSE(m.read_now(at + 250, outside));  // past the region
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
