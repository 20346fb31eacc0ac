// Simulated host memory: its deferred writes (a received frame's payload
// written when somebody looks at it; every test compares what a reader sees
// with what writing at once would have left) and the pages behind its regions.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "fabric/frame.hpp"
#include "nic_model/host_memory.hpp"

namespace rnicsim::nic {
namespace {

constexpr size_t kHeader = 64;  // where the payload starts in the test frames

std::vector<std::byte> pattern(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::byte(static_cast<uint8_t>(seed + i * 7));
  return v;
}

// A frame with `payload` after a header, as a receiver holds it.
fabric::Frame frame_with(fabric::FramePool& pool, const std::vector<std::byte>& payload) {
  fabric::Frame f = pool.acquire(kHeader + payload.size());
  std::memcpy(f.bytes().data() + kHeader, payload.data(), payload.size());
  return f;
}

// The DMA write of a frame's payload, the way the DMA engine makes it.
bool write_payload(HostMemory& m, uint64_t addr, fabric::Frame&& f, size_t len) {
  const std::span<const std::byte> src = f.bytes_as_built().subspan(kHeader, len);
  return m.write_frame(addr, src, std::move(f));
}

std::vector<std::byte> read(const HostMemory& m, uint64_t addr, size_t n) {
  std::vector<std::byte> v(n);
  EXPECT_TRUE(m.read(addr, v));
  return v;
}

class DeferredWrites : public ::testing::Test {
protected:
  DeferredWrites() {
    mem.set_deferring(true);
    buf = mem.allocate(64 << 10, 4096);
  }
  fabric::FramePool pool{16384};
  SimulatedHostMemory mem;
  uint64_t buf = 0;
};

TEST_F(DeferredWrites, WaitUntilReadThenReadAsWritten) {
  const auto a = pattern(4096, 1);
  ASSERT_TRUE(write_payload(mem, buf, frame_with(pool, a), a.size()));
  EXPECT_EQ(mem.deferred_writes(), 1u);
  EXPECT_EQ(pool.in_use(), 1u) << "the memory keeps the frame";
  EXPECT_EQ(read(mem, buf, 4096), a);
  EXPECT_EQ(mem.deferred_writes(), 0u);
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_EQ(mem.writes_dropped(), 0u);
}

TEST_F(DeferredWrites, AWriteOverTheSameBytesMakesTheFirstMoot) {
  const auto a = pattern(4096, 1), b = pattern(4096, 2);
  ASSERT_TRUE(write_payload(mem, buf, frame_with(pool, a), a.size()));
  ASSERT_TRUE(write_payload(mem, buf, frame_with(pool, b), b.size()));
  EXPECT_EQ(mem.writes_dropped(), 1u);
  EXPECT_EQ(mem.deferred_writes(), 1u);
  EXPECT_EQ(pool.in_use(), 1u);
  EXPECT_EQ(read(mem, buf, 4096), b);
}

TEST_F(DeferredWrites, AWriteCoveringSeveralDropsThemAndCompletesWhatItOnlyOverlaps) {
  const auto a = pattern(1024, 1), b = pattern(1024, 2), c = pattern(1024, 3), d = pattern(2048, 4);
  ASSERT_TRUE(write_payload(mem, buf, frame_with(pool, a), a.size()));            // [0, 1024)
  ASSERT_TRUE(write_payload(mem, buf + 1024, frame_with(pool, b), b.size()));     // [1024, 2048)
  ASSERT_TRUE(write_payload(mem, buf + 2048, frame_with(pool, c), c.size()));     // [2048, 3072)
  ASSERT_TRUE(write_payload(mem, buf + 512, frame_with(pool, d), d.size()));      // [512, 2560)
  EXPECT_EQ(mem.writes_dropped(), 1u) << "only b lies wholly under d";
  std::vector<std::byte> want(3072);
  std::memcpy(want.data(), a.data(), 1024);
  std::memcpy(want.data() + 2048, c.data(), 1024);
  std::memcpy(want.data() + 512, d.data(), 2048);
  EXPECT_EQ(read(mem, buf, 3072), want);
}

TEST_F(DeferredWrites, APlainWriteInsideOneCompletesItFirst) {
  const auto a = pattern(4096, 1), patch = pattern(16, 9);
  ASSERT_TRUE(write_payload(mem, buf, frame_with(pool, a), a.size()));
  ASSERT_TRUE(mem.write(buf + 100, patch));
  auto want = a;
  std::memcpy(want.data() + 100, patch.data(), patch.size());
  EXPECT_EQ(read(mem, buf, 4096), want);
  EXPECT_EQ(mem.writes_dropped(), 0u);
}

TEST_F(DeferredWrites, APlainWriteOverItWholeDropsIt) {
  const auto a = pattern(1024, 1), b = pattern(2048, 2);
  ASSERT_TRUE(write_payload(mem, buf + 512, frame_with(pool, a), a.size()));
  ASSERT_TRUE(mem.write(buf, b));
  EXPECT_EQ(mem.writes_dropped(), 1u);
  EXPECT_EQ(read(mem, buf, 2048), b);
}

TEST_F(DeferredWrites, ALoanAndAnAccessSeeTheWrite) {
  const auto a = pattern(4096, 1);
  ASSERT_TRUE(write_payload(mem, buf, frame_with(pool, a), a.size()));
  const Loan loan = mem.loan(buf + 1000, 100);
  ASSERT_NE(loan.bytes, nullptr);
  EXPECT_EQ(std::memcmp(loan.bytes, a.data() + 1000, 100), 0);
  ASSERT_TRUE(write_payload(mem, buf, frame_with(pool, pattern(4096, 5)), 4096));
  const auto seen = mem.access(buf + 4000, 96);
  EXPECT_EQ(std::memcmp(seen.data(), pattern(4096, 5).data() + 4000, 96), 0);
}

TEST_F(DeferredWrites, SmallWritesAndSpannedRegionsAreWrittenAtOnce) {
  const auto small = pattern(SimulatedHostMemory::kDeferMinBytes - 1, 1);
  ASSERT_TRUE(write_payload(mem, buf, frame_with(pool, small), small.size()));
  EXPECT_EQ(mem.deferred_writes(), 0u);
  // A span's holder reads the bytes directly, so its region is never written late.
  const uint64_t ring = mem.allocate(8192, 4096);
  const std::span<std::byte> held = mem.span(ring, 8192);
  const auto a = pattern(4096, 3);
  ASSERT_TRUE(write_payload(mem, ring + 4096, frame_with(pool, a), a.size()));
  EXPECT_EQ(mem.deferred_writes(), 0u);
  EXPECT_EQ(std::memcmp(held.data() + 4096, a.data(), a.size()), 0);
}

TEST_F(DeferredWrites, AtMostTheLimitWait) {
  const uint64_t big = mem.allocate((SimulatedHostMemory::kDeferMax + 8) * 512, 4096);
  const auto a = pattern(512, 1);
  for (size_t i = 0; i < SimulatedHostMemory::kDeferMax + 8; ++i)
    ASSERT_TRUE(write_payload(mem, big + i * 512, frame_with(pool, a), a.size()));
  EXPECT_EQ(mem.deferred_writes(), SimulatedHostMemory::kDeferMax);
  for (size_t i = 0; i < SimulatedHostMemory::kDeferMax + 8; ++i) ASSERT_EQ(read(mem, big + i * 512, 512), a) << i;
}

TEST_F(DeferredWrites, TurningItOffCompletesEveryWrite) {
  const auto a = pattern(4096, 1);
  ASSERT_TRUE(write_payload(mem, buf + 8192, frame_with(pool, a), a.size()));
  mem.set_deferring(false);
  EXPECT_EQ(mem.deferred_writes(), 0u);
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_EQ(std::memcmp(mem.access(buf + 8192, 4096).data(), a.data(), 4096), 0);
  ASSERT_TRUE(write_payload(mem, buf, frame_with(pool, a), a.size()));
  EXPECT_EQ(mem.deferred_writes(), 0u);
}

TEST_F(DeferredWrites, WritesOutsideTheMemoryFailAndKeepNothing) {
  const auto a = pattern(4096, 1);
  EXPECT_FALSE(write_payload(mem, buf + (64 << 10) - 100, frame_with(pool, a), a.size()));
  EXPECT_EQ(mem.deferred_writes(), 0u);
  EXPECT_EQ(pool.in_use(), 0u);
}

// The payload of a deferred write may still be borrowed from the sender's
// memory. The sender changing those bytes afterwards must not reach the
// receiver: it sees what the sender held when the DMA read took them.
TEST_F(DeferredWrites, ABorrowedPayloadKeepsTheBytesOfItsRead) {
  SimulatedHostMemory sender;
  const uint64_t src = sender.allocate(4096, 4096);
  const auto before = pattern(4096, 1), after = pattern(4096, 2);
  ASSERT_TRUE(sender.write(src, before));
  fabric::Frame f = pool.acquire(kHeader + 4096);
  const Loan loan = sender.loan(src, 4096);
  ASSERT_NE(loan.bytes, nullptr);
  f.lend_payload(*loan.lender, kHeader, loan.bytes, 4096);
  ASSERT_TRUE(write_payload(mem, buf, std::move(f), 4096));
  EXPECT_EQ(mem.deferred_writes(), 1u);
  ASSERT_TRUE(sender.write(src, after));
  EXPECT_EQ(sender.borrowers().settled(), 1u) << "the held frame copied the old bytes in";
  EXPECT_EQ(read(mem, buf, 4096), before);
}

// Resident memory of this process, from /proc/self/statm (pages).
size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t total = 0, resident = 0;
  statm >> total >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// Regions are zero and cost memory only once touched: rings that nobody
// writes (a host another rank runs) and a payload buffer larger than the
// machine's memory take none. Before the regions were mapped lazily, their
// zeroing touched every ring.
TEST(SimulatedMemoryPages, UntouchedRegionsTakeNoMemory) {
  SimulatedHostMemory mem;
  const size_t before = resident_bytes();
  std::vector<uint64_t> rings;
  for (int i = 0; i < 4096; ++i) rings.push_back(mem.allocate(16384, 4096));  // 64 MiB of rings
  const uint64_t huge = mem.allocate(size_t{64} << 30, 4096);                  // 64 GiB of payload
  for (uint64_t r : rings) (void)mem.span(r, 16384);  // spans held, as a host's rings are
  EXPECT_LT(resident_bytes() - before, size_t{8} << 20);
  EXPECT_EQ(read(mem, huge + (size_t{32} << 30), 64), std::vector<std::byte>(64));
  EXPECT_EQ(read(mem, rings[100] + 16000, 384), std::vector<std::byte>(384));
  EXPECT_EQ(mem.bytes_allocated(), 4096u * 16384u + (size_t{64} << 30));
}

// Regions never share bytes, whichever mapping holds them, and keep what was written.
TEST(SimulatedMemoryPages, RegionsAreApartAndKeepTheirBytes) {
  SimulatedHostMemory mem;
  std::vector<uint64_t> addrs;
  for (size_t i = 0; i < 300; ++i) addrs.push_back(mem.allocate(1 + i * 997 % 400000, i % 2 ? 64 : 4096));
  for (size_t i = 0; i < addrs.size(); ++i) ASSERT_TRUE(mem.write(addrs[i], pattern(1 + i * 997 % 400000, uint8_t(i))));
  for (size_t i = 0; i < addrs.size(); ++i) EXPECT_EQ(read(mem, addrs[i], 1 + i * 997 % 400000), pattern(1 + i * 997 % 400000, uint8_t(i)));
  const std::span<std::byte> s = mem.span(addrs[7], 64);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(s.data()) % 64, 0u) << "a region's bytes are aligned as asked, up to a page";
}

// The receiver's memory may go first or last; its frames are released either way.
TEST(DeferredWritesLifetime, TheMemoryMayGoBeforeOrAfterTheSender) {
  fabric::FramePool pool(16384);
  for (const bool receiver_first : {true, false}) {
    auto sender = std::make_unique<SimulatedHostMemory>();
    auto receiver = std::make_unique<SimulatedHostMemory>();
    receiver->set_deferring(true);
    const uint64_t src = sender->allocate(4096, 4096), dst = receiver->allocate(4096, 4096);
    ASSERT_TRUE(sender->write(src, pattern(4096, 1)));
    fabric::Frame f = pool.acquire(kHeader + 4096);
    const Loan loan = sender->loan(src, 4096);
    f.lend_payload(*loan.lender, kHeader, loan.bytes, 4096);
    ASSERT_TRUE(write_payload(*receiver, dst, std::move(f), 4096));
    if (receiver_first) {
      receiver.reset();
    } else {
      sender.reset();
      EXPECT_EQ(read(*receiver, dst, 4096), pattern(4096, 1));
    }
    receiver.reset();
    sender.reset();
    EXPECT_EQ(pool.in_use(), 0u);
  }
}

}  // namespace
}  // namespace rnicsim::nic
