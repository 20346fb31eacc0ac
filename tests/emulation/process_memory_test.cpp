#include "emulation/process_memory.hpp"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <span>
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

// The region found last is remembered while the regions are disjoint; every
// change of the regions is seen at once, overlapping ones included.
TEST(ProcessHostMemory, RightsFollowEveryChangeOfTheRegions) {
  std::vector<std::byte> buf(512, std::byte{0});
  ProcessHostMemory m;
  m.set_process(getpid());
  const uint64_t a = addr_of(buf.data());
  const std::array<std::byte, 8> data{std::byte{7}};
  m.add_region(a, 128, nic::kAccessRemoteRead);           // read only
  m.add_region(a + 256, 128, nic::kAccessLocalWrite);     // disjoint, writable
  for (int i = 0; i < 2; ++i) {  // back and forth between the two
    EXPECT_FALSE(m.write(a + 8, data));
    EXPECT_TRUE(m.write(a + 264, data));
  }
  m.add_region(a, 256, nic::kAccessLocalWrite);  // overlaps the read-only one
  EXPECT_TRUE(m.write(a + 8, data));
  m.remove_region(a, 256, nic::kAccessLocalWrite);
  EXPECT_FALSE(m.write(a + 8, data));
  EXPECT_TRUE(m.write(a + 264, data));
  m.remove_region(a + 256, 128, nic::kAccessLocalWrite);
  EXPECT_FALSE(m.write(a + 264, data));
  std::array<std::byte, 8> out{};
  EXPECT_TRUE(m.read(a + 8, out));
  m.clear();
  EXPECT_FALSE(m.read(a + 8, out));
  m.flush();
  EXPECT_EQ(buf[264], std::byte{7});
  EXPECT_EQ(buf[8], std::byte{7});
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

// Through process_vm_readv, a packet that continues the last one borrows its
// payload from the read-ahead window, the daemon's own copy: a window lent is
// not filled again while a frame borrows it, and with too many such windows
// the oldest one's borrowers copy their bytes in.
TEST(ProcessHostMemory, FramesBorrowFromTheReadAheadWindow) {
  std::vector<std::byte> buf(64 * 1024, std::byte{7});
  ProcessHostMemory m;
  const uint64_t at = register_own(m, buf);
  rnicsim::fabric::FramePool pool;
  auto borrow = [&](uint64_t addr) {
    rnicsim::fabric::Frame f = pool.acquire(64);
    const nic::Loan loan = m.loan(addr, 64);
    if (loan.bytes != nullptr) f.lend_payload(*loan.lender, 0, loan.bytes, 64);
    return f;
  };
  // Where it lies: in the window while borrowed, else in the frame's buffer.
  auto first_byte = [](rnicsim::fabric::Frame& f) { return f.source_of(f.bytes_as_built())[0]; };
  std::array<std::byte, 64> out{};
  EXPECT_EQ(m.loan(at, 64).bytes, nullptr);  // a message's first read: nothing read ahead
  ASSERT_TRUE(m.read(at, out));              // so the DMA engine reads it
  rnicsim::fabric::Frame a = borrow(at + 64);  // continues: fills the window, lends from it
  ASSERT_TRUE(a.borrowing());
  EXPECT_EQ(m.system_calls(), 2u);
  rnicsim::fabric::Frame b = borrow(at + 128);  // from the same window
  ASSERT_TRUE(b.borrowing());
  EXPECT_EQ(m.system_calls(), 2u);
  // The program posts more work (its buffers changed before): the window
  // goes, and the next read fills a new one; the lent one stays as it was.
  buf[192] = std::byte{5};
  m.forget_reads();
  rnicsim::fabric::Frame c = borrow(at + 192);
  ASSERT_TRUE(c.borrowing());
  EXPECT_EQ(m.system_calls(), 3u);
  EXPECT_EQ(first_byte(c), std::byte{5});
  EXPECT_EQ(first_byte(a), std::byte{7});
  EXPECT_EQ(first_byte(b), std::byte{7});
  // More windows lent and held: the one a and b borrow from is the oldest
  // when kMaxRetired are kept, and they copy their bytes in.
  std::vector<rnicsim::fabric::Frame> held;
  for (uint64_t i = 0; i < ProcessHostMemory::kMaxRetired; ++i) {
    EXPECT_TRUE(a.borrowing());
    m.forget_reads();
    held.push_back(borrow(at + 256 + 64 * i));
  }
  EXPECT_FALSE(a.borrowing());
  EXPECT_FALSE(b.borrowing());
  EXPECT_TRUE(c.borrowing());
  EXPECT_EQ(first_byte(a), std::byte{7});
  EXPECT_EQ(first_byte(b), std::byte{7});
  // Nobody borrows any more: the windows are filled again, with what is there now.
  a = {};
  b = {};
  c = {};
  held.clear();
  const uint64_t next = at + 256 + 64 * ProcessHostMemory::kMaxRetired;  // continues the last read
  buf[next - at] = std::byte{6};
  m.forget_reads();
  rnicsim::fabric::Frame d = borrow(next);
  EXPECT_TRUE(d.borrowing());
  EXPECT_EQ(first_byte(d), std::byte{6});
  // Lending off: the same reads, copied.
  m.set_lending(false);
  m.forget_reads();
  EXPECT_EQ(m.loan(next + 64, 64).bytes, nullptr);
}

// The kernel copies at a fraction of its speed on some CPUs when the
// destination lies 1 to 31 bytes past the source modulo a page (AMD Zen's rep
// movsb): bytes read ahead sit at their program address's offset within a
// page, and reads and batched writes at any offset still carry the right bytes.
TEST(ProcessHostMemory, ReadAheadKeepsTheProgramsOffsetWithinAPage) {
  std::vector<std::byte> buf(4 * 4096);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<std::byte>(i * 7 + i / 251);
  ProcessHostMemory m;
  const uint64_t at = register_own(m, buf);
  for (uint64_t off : {0u, 1u, 16u, 100u, 4095u}) {
    std::array<std::byte, 64> out{};
    m.forget_reads();
    ASSERT_TRUE(m.read(at + off, out));                // a message's first read: direct
    const nic::Loan loan = m.loan(at + off + 64, 64);  // continues it: from the window
    ASSERT_NE(loan.bytes, nullptr) << off;
    EXPECT_EQ(addr_of(loan.bytes) % 4096, (at + off + 64) % 4096) << off;
    EXPECT_EQ(std::memcmp(loan.bytes, buf.data() + off + 64, 64), 0) << off;
  }
  // A direct read into a buffer 16 bytes past its source, modulo a page.
  std::vector<std::byte> dst(3 * 4096);
  size_t skip = 0;
  while ((addr_of(dst.data() + skip) - (at + 200)) % 4096 != 16) ++skip;
  m.forget_reads();
  ASSERT_TRUE(m.read(at + 200, std::span(dst.data() + skip, 2048)));
  EXPECT_EQ(std::memcmp(dst.data() + skip, buf.data() + 200, 2048), 0);
  // Writes at an odd address that continue each other go out as one.
  std::vector<std::byte> src(3000);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(i * 13 + 1);
  const uint64_t before = m.system_calls();
  ASSERT_TRUE(m.write(at + 4099, std::span(src).first(1000)));
  ASSERT_TRUE(m.write(at + 5099, std::span(src).subspan(1000)));
  m.flush();
  EXPECT_EQ(m.system_calls(), before + 1);
  EXPECT_EQ(std::memcmp(buf.data() + 4099, src.data(), src.size()), 0);
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

// --- shared pages (runs): the shim moved the program's pages onto a memfd
// the daemon maps; here the runs are buffers of this test at made-up program
// addresses, and no process is reachable (pid 0), so every byte the memory
// returns came from a run.
namespace {
constexpr uint64_t kProgram = 0x7000'0000'0000ull;  // a program address
constexpr uint64_t kPage = 4096;
}  // namespace

TEST(ProcessHostMemoryRuns, ReadsAndWritesGoStraightToTheRun) {
  std::vector<std::byte> page(kPage, std::byte{0x11});
  ProcessHostMemory m;
  m.add_region(kProgram, kPage, nic::kAccessLocalWrite);
  m.add_run(kProgram, page.data(), kPage);
  std::array<std::byte, 8> out{};
  ASSERT_TRUE(m.read(kProgram + 100, out));
  EXPECT_EQ(out[0], std::byte{0x11});
  const std::array<std::byte, 4> data{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  ASSERT_TRUE(m.write(kProgram + 200, data));
  EXPECT_EQ(page[203], std::byte{4});  // at once: no batching, no flush
  page[300] = std::byte{0x77};        // the program changes its memory
  ASSERT_TRUE(m.read_now(kProgram + 300, out));
  EXPECT_EQ(out[0], std::byte{0x77});
  EXPECT_EQ(m.system_calls(), 0u);
  EXPECT_EQ(m.shared_accesses(), 3u);
}

TEST(ProcessHostMemoryRuns, RegionRightsAreStillEnforced) {
  std::vector<std::byte> page(kPage, std::byte{0});
  ProcessHostMemory m;
  m.add_run(kProgram, page.data(), kPage);
  std::array<std::byte, 8> out{};
  const std::array<std::byte, 8> data{std::byte{9}};
  EXPECT_FALSE(m.read(kProgram, out));  // shared, but not registered
  m.add_region(kProgram + 64, 128, nic::kAccessRemoteRead);
  EXPECT_TRUE(m.read(kProgram + 64, out));
  EXPECT_FALSE(m.read(kProgram + 60, out));   // starts before the region
  EXPECT_FALSE(m.read(kProgram + 188, out));  // runs past its end
  EXPECT_FALSE(m.write(kProgram + 64, data));  // no write right
  EXPECT_EQ(page[64], std::byte{0});
  m.remove_region(kProgram + 64, 128, nic::kAccessRemoteRead);
  EXPECT_FALSE(m.read(kProgram + 64, out));
  EXPECT_EQ(m.denied(), 5u);
  EXPECT_EQ(m.shared_accesses(), 1u);
}

// Consecutive program pages moved at different times are separate runs at
// unrelated places in the daemon; an access across them is split.
TEST(ProcessHostMemoryRuns, AnAccessSpansTwoRuns) {
  std::vector<std::byte> first(kPage, std::byte{0xA1}), second(kPage, std::byte{0xB2});
  ProcessHostMemory m;
  m.add_region(kProgram, 2 * kPage, nic::kAccessRemoteWrite | nic::kAccessLocalWrite);
  m.add_run(kProgram, first.data(), kPage);
  m.add_run(kProgram + kPage, second.data(), kPage);
  std::array<std::byte, 8> out{};
  ASSERT_TRUE(m.read(kProgram + kPage - 3, out));
  EXPECT_EQ(out[2], std::byte{0xA1});
  EXPECT_EQ(out[3], std::byte{0xB2});
  std::array<std::byte, 6> data{};
  data.fill(std::byte{0x5C});
  ASSERT_TRUE(m.write(kProgram + kPage - 2, data));
  EXPECT_EQ(first[kPage - 3], std::byte{0xA1});
  EXPECT_EQ(first[kPage - 2], std::byte{0x5C});
  EXPECT_EQ(second[3], std::byte{0x5C});
  EXPECT_EQ(second[4], std::byte{0xB2});
}

// Bytes outside every run are not read from anywhere when the process cannot
// be reached (the daemon has no other way to its memory).
TEST(ProcessHostMemoryRuns, AnAccessOutsideTheRunsIsRefused) {
  std::vector<std::byte> page(kPage, std::byte{0x42});
  ProcessHostMemory m;
  m.add_region(kProgram, 3 * kPage, nic::kAccessLocalWrite);
  m.add_run(kProgram, page.data(), kPage);
  std::array<std::byte, 8> out{};
  const std::array<std::byte, 8> data{std::byte{7}};
  EXPECT_FALSE(m.read(kProgram + 2 * kPage, out));     // in the region, in no run
  EXPECT_FALSE(m.read(kProgram + kPage - 4, out));     // half in the run
  EXPECT_FALSE(m.write(kProgram + kPage - 4, data));   // half in the run
  EXPECT_EQ(page[kPage - 4], std::byte{0x42});
  m.remove_run(page.data());
  EXPECT_FALSE(m.read(kProgram, out));
  EXPECT_EQ(m.shared_accesses(), 0u);
}

// Where the process can be reached, an access not wholly in runs is made
// with process_vm_readv, as without runs.
TEST(ProcessHostMemoryRuns, AnAccessPartlyOutsideTheRunsReadsTheProcess) {
  std::vector<std::byte> buf(2 * kPage, std::byte{0x33});
  std::vector<std::byte> shared(kPage, std::byte{0x44});
  ProcessHostMemory m;
  const uint64_t at = register_own(m, buf);
  m.add_run(at, shared.data(), kPage);
  std::array<std::byte, 8> out{};
  ASSERT_TRUE(m.read_now(at + kPage - 4, out));
  EXPECT_EQ(out[0], std::byte{0x33});  // the process's bytes, not the run's
  EXPECT_EQ(m.system_calls(), 1u);
  ASSERT_TRUE(m.read_now(at, out));
  EXPECT_EQ(out[0], std::byte{0x44});
  EXPECT_EQ(m.system_calls(), 1u);
}

// The newest run at an address wins (the program unmapped the pages of an
// older one and shared new pages there).
TEST(ProcessHostMemoryRuns, TheNewestRunWins) {
  std::vector<std::byte> old_page(kPage, std::byte{1}), new_page(kPage, std::byte{2});
  ProcessHostMemory m;
  m.add_region(kProgram, kPage, 0);
  m.add_run(kProgram, old_page.data(), kPage);
  m.add_run(kProgram, new_page.data(), kPage);
  std::array<std::byte, 1> out{};
  ASSERT_TRUE(m.read(kProgram, out));
  EXPECT_EQ(out[0], std::byte{2});
  m.remove_run(new_page.data());
  ASSERT_TRUE(m.read(kProgram + 1, out));
  EXPECT_EQ(out[0], std::byte{1});
}

// map_run maps a memfd the program sent: only page-aligned runs of a memfd
// sealed against shrinking, within its size; the daemon sees the program's
// writes and the program the daemon's.
TEST(ProcessHostMemoryRuns, MapRunTakesOnlySealedMemfds) {
  const int unsealed = memfd_create("test-unsealed", MFD_CLOEXEC);
  const int fd = memfd_create("test-sealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_GE(unsealed, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(unsealed, 2 * kPage), 0);
  ASSERT_EQ(ftruncate(fd, 2 * kPage), 0);
  ASSERT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
  ProcessHostMemory m;
  EXPECT_EQ(m.map_run(kProgram, kPage, unsealed, 0), nullptr);
  EXPECT_EQ(m.map_run(kProgram + 1, kPage, fd, 0), nullptr);   // not page-aligned
  EXPECT_EQ(m.map_run(kProgram, 100, fd, 0), nullptr);         // not whole pages
  EXPECT_EQ(m.map_run(kProgram, kPage, fd, 2 * kPage), nullptr);  // past its end
  std::byte* p = m.map_run(kProgram, kPage, fd, kPage);
  ASSERT_NE(p, nullptr);
  const char text[] = "program";
  ASSERT_EQ(pwrite(fd, text, sizeof text, kPage + 8), static_cast<ssize_t>(sizeof text));
  m.add_region(kProgram, kPage, nic::kAccessLocalWrite);
  std::array<std::byte, sizeof text> out{};
  ASSERT_TRUE(m.read(kProgram + 8, out));
  EXPECT_EQ(std::memcmp(out.data(), text, sizeof text), 0);
  const std::array<std::byte, 2> data{std::byte{'N'}, std::byte{'I'}};
  ASSERT_TRUE(m.write(kProgram + 100, data));
  char back[2] = {};
  ASSERT_EQ(pread(fd, back, 2, kPage + 100), 2);
  EXPECT_EQ(back[1], 'I');
  m.remove_run(p);
  EXPECT_FALSE(m.read(kProgram + 8, out));
  close(unsealed);
  close(fd);
}

// Bytes wholly in one run are lent to frames (see fabric::Frame, "Borrowed
// payload"). A frame copies them in before the NIC writes over them, when
// the send work it was built for completes (the program may then change those
// buffers; frames of later work or other QPs keep borrowing) and before the
// run goes; a borrower whose bytes nobody changes keeps borrowing.
TEST(ProcessHostMemoryRuns, LentBytesAreCopiedInBeforeTheyCanChange) {
  std::vector<std::byte> page(kPage, std::byte{0x11});
  std::vector<std::byte> ring(kPage, std::byte{0});
  ProcessHostMemory m;
  m.add_region(kProgram, kPage, nic::kAccessLocalWrite);
  m.add_run(kProgram, page.data(), kPage);
  const uint64_t cq = ProcessHostMemory::segment_address(0);
  m.add_segment(cq, ring.data(), ring.size());
  rnicsim::fabric::FramePool pool;
  auto borrow = [&](uint64_t addr, uint32_t len) {
    rnicsim::fabric::Frame f = pool.acquire(len);
    const nic::Loan loan = m.loan(addr, len);
    EXPECT_EQ(loan.bytes, page.data() + (addr - kProgram));
    if (loan.bytes != nullptr) f.lend_payload(*loan.lender, 0, loan.bytes, len);
    return f;
  };
  rnicsim::fabric::Frame a = borrow(kProgram, 64);
  rnicsim::fabric::Frame b = borrow(kProgram + 1024, 64);
  EXPECT_EQ(m.borrowers().borrowers(), 2u);
  // Requests of QP 7: b the packet with PSN 100, d the next (later work); e
  // a packet of QP 8.
  b.meta().flow_id = 7;
  b.meta().psn = rnicsim::packet::Psn(100);
  rnicsim::fabric::Frame d = borrow(kProgram + 3072, 64);
  d.meta().flow_id = 7;
  d.meta().psn = rnicsim::packet::Psn(101);
  rnicsim::fabric::Frame e = borrow(kProgram + 3072, 64);
  e.meta().flow_id = 8;
  e.meta().psn = rnicsim::packet::Psn(50);

  const std::array<std::byte, 4> data{std::byte{0x22}, std::byte{0x22}, std::byte{0x22}, std::byte{0x22}};
  ASSERT_TRUE(m.write(kProgram + 8, data));  // the NIC writes into a's bytes
  EXPECT_FALSE(a.borrowing());
  EXPECT_TRUE(b.borrowing());
  EXPECT_EQ(a.bytes()[8], std::byte{0x11});  // what was lent, not what came after

  // QP 7's work up to PSN 100 completes: its buffers are the program's again;
  // the work after it and other QPs' work is still posted.
  m.work_completed(rnicsim::nic::Qpn(7), rnicsim::nic::Psn(100));
  EXPECT_FALSE(b.borrowing());
  EXPECT_TRUE(d.borrowing());
  EXPECT_TRUE(e.borrowing());
  nic::Cqe cqe{};
  ASSERT_TRUE(m.write(cq, std::as_bytes(std::span(&cqe, 1))));
  EXPECT_TRUE(d.borrowing());  // a CQE settles nothing by itself
  page[1024] = std::byte{0x44};  // the program reuses a completed buffer
  EXPECT_EQ(b.bytes()[0], std::byte{0x11});
  m.work_completed(rnicsim::nic::Qpn(7), rnicsim::nic::Psn(0xFFFFF0));  // PSNs compare modulo 2^24: 101 is after it
  EXPECT_TRUE(d.borrowing());
  m.work_completed(rnicsim::nic::Qpn(8), rnicsim::nic::Psn(60));
  EXPECT_FALSE(e.borrowing());

  rnicsim::fabric::Frame c = borrow(kProgram + 2048, 64);
  m.remove_run(page.data());
  EXPECT_FALSE(c.borrowing());
  EXPECT_EQ(m.loan(kProgram, 16).bytes, nullptr);  // in no run any more
  EXPECT_FALSE(d.borrowing());  // the run went
  EXPECT_EQ(m.borrowers().settled(), 5u);
}

// Only bytes wholly in one run, inside a registration, are lent; no loan is
// counted as a denied access (the read that follows it is).
TEST(ProcessHostMemoryRuns, WhatIsNotLent) {
  std::vector<std::byte> first(kPage), second(kPage), ring(kPage);
  ProcessHostMemory m;
  m.add_region(kProgram, kPage + 512, 0);
  m.add_run(kProgram, first.data(), kPage);
  m.add_run(kProgram + kPage, second.data(), kPage);
  const uint64_t seg = ProcessHostMemory::segment_address(0);
  m.add_segment(seg, ring.data(), ring.size());
  EXPECT_EQ(m.loan(kProgram + kPage - 8, 16).bytes, nullptr);  // across two runs
  EXPECT_EQ(m.loan(kProgram + kPage + 500, 16).bytes, nullptr);  // past the region
  EXPECT_EQ(m.loan(seg, 16).bytes, nullptr);                     // a ring
  EXPECT_EQ(m.loan(kProgram, 0).bytes, nullptr);
  EXPECT_EQ(m.denied(), 0u);
  EXPECT_NE(m.loan(kProgram + kPage, 512).bytes, nullptr);
  m.set_lending(false);
  EXPECT_EQ(m.loan(kProgram + kPage, 512).bytes, nullptr);
}
