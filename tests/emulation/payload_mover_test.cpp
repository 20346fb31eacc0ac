#include "emulation/payload_mover.hpp"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <span>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "emulation/process_memory.hpp"
#include "nic_model/queue_format.hpp"

using rnicsim::emulation::PayloadMover;
using rnicsim::emulation::ProcessHostMemory;
using rnicsim::fabric::Frame;
using rnicsim::fabric::FramePool;
namespace nic = rnicsim::nic;

namespace {
// Long enough that the thread never falls asleep during a test.
constexpr std::chrono::microseconds kAwake{std::chrono::seconds(60)};

std::vector<std::byte> filled(size_t n, uint8_t v) { return std::vector<std::byte>(n, std::byte{v}); }

// A received frame whose payload is `n` bytes of `v` in its own buffer.
Frame frame_of(FramePool& pool, size_t n, uint8_t v) {
  Frame f = pool.acquire(n);
  std::memset(f.builder_bytes().data(), v, n);
  return f;
}
}  // namespace

TEST(PayloadMover, MakesMovesInTheOrderTheyCame) {
  PayloadMover mover(kAwake);
  std::vector<std::byte> dst(4096);
  std::vector<std::vector<std::byte>> sources;
  for (int i = 0; i < 1000; ++i) sources.push_back(filled(4096, static_cast<uint8_t>(i)));
  for (int i = 0; i < 1000; ++i) {
    // Every move overlaps the last; each starts a little further in.
    const size_t at = static_cast<size_t>(i % 7) * 16;
    mover.push({dst.data() + at, sources[static_cast<size_t>(i)].data(), 4096 - at, {}}, false);
  }
  mover.drain();
  EXPECT_EQ(mover.moves(), 1000u);
  // The last move (i = 999, at 999 % 7 * 16 = 96) wrote [96, 4096); the one
  // before that reached lower, i = 994 (at 0).
  EXPECT_EQ(dst[4095], std::byte{999 % 256});
  EXPECT_EQ(dst[96], std::byte{999 % 256});
  EXPECT_EQ(dst[0], std::byte{994 % 256});
}

// More than half the slots waiting: behind() says so (the simulation thread
// then fills a read-ahead window itself), and once they are made it does not.
TEST(PayloadMover, SaysWhenMoreThanHalfItsSlotsWait) {
  PayloadMover mover(std::chrono::microseconds(1));
  for (int i = 0; i < 10000 && mover.accepting(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_FALSE(mover.accepting());  // asleep: what is handed over waits for a wake-up
  EXPECT_FALSE(mover.behind());
  std::vector<std::byte> src = filled(64, 1), dst(64);
  for (size_t i = 0; i < PayloadMover::kSlots / 2; ++i) mover.push({dst.data(), src.data(), 64, {}}, false);
  EXPECT_FALSE(mover.behind());
  mover.push({dst.data(), src.data(), 64, {}}, false);
  EXPECT_TRUE(mover.behind());
  mover.drain();
  EXPECT_FALSE(mover.behind());
  EXPECT_EQ(dst[63], std::byte{1});
}

TEST(PayloadMover, KeepsAFrameUntilItsMoveIsMade) {
  FramePool pool;
  std::vector<std::byte> dst(2048);
  {
    PayloadMover mover(kAwake);
    Frame f = frame_of(pool, 2048, 0x5a);
    const std::byte* src = f.builder_bytes().data();
    const uint64_t n = mover.push({dst.data(), src, 2048, std::move(f)}, false);
    EXPECT_EQ(pool.in_use(), 1u);  // until the simulation thread reaps it
    mover.wait_until_made(n);
    EXPECT_TRUE(mover.made(n));
    mover.drain();
    EXPECT_EQ(pool.in_use(), 0u);
    EXPECT_EQ(dst[2047], std::byte{0x5a});
    // A frame still in flight when the mover goes is released with it.
    Frame g = frame_of(pool, 1024, 0x6b);
    src = g.builder_bytes().data();
    mover.push({dst.data(), src, 1024, std::move(g)}, false);
  }
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_EQ(dst[1023], std::byte{0x6b});
}

TEST(PayloadMover, SleepsWhenIdleAndWakesForAStream) {
  PayloadMover mover(std::chrono::microseconds(200));
  auto wait_for = [&](bool awake) {
    for (int i = 0; i < 5000 && mover.accepting() != awake; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return mover.accepting() == awake;
  };
  ASSERT_TRUE(wait_for(false));
  const uint64_t wakes = mover.wake_ups();
  // Copies made inline in rounds that follow each other wake it once they
  // reach kWakeBytes; a round without one starts the count again.
  const size_t quarter = PayloadMover::kWakeBytes / 4;
  for (int i = 0; i < 3; ++i) {
    mover.copied_inline(quarter);
    mover.end_round();
  }
  mover.end_round();  // nothing copied: a ping-pong, not a stream
  for (int i = 0; i < 3; ++i) {
    mover.copied_inline(quarter);
    mover.end_round();
  }
  EXPECT_EQ(mover.wake_ups(), wakes);
  EXPECT_FALSE(mover.accepting());
  mover.copied_inline(quarter);
  mover.end_round();
  EXPECT_EQ(mover.wake_ups(), wakes + 1);
  EXPECT_TRUE(mover.accepting());
}

// --- ProcessHostMemory with a mover: runs are buffers of the test at made-up
// program addresses, as in process_memory_test.cpp.
namespace {
constexpr uint64_t kSender = 0x7000'0000'0000ull;
constexpr uint64_t kReceiver = 0x7100'0000'0000ull;

struct TwoHosts {
  explicit TwoHosts(size_t bytes) : sender(filled(bytes, 0x11)), receiver(filled(bytes, 0)), ring(4096) {
    s.add_region(kSender, bytes, nic::kAccessLocalWrite);
    s.add_run(kSender, sender.data(), bytes);
    r.add_region(kReceiver, bytes, nic::kAccessLocalWrite | nic::kAccessRemoteWrite);
    r.add_run(kReceiver, receiver.data(), bytes);
    r.add_segment(ProcessHostMemory::segment_address(0), ring.data(), ring.size());
    s.set_mover(&mover);
    r.set_mover(&mover);
  }
  ~TwoHosts() {
    s.set_mover(nullptr);
    r.set_mover(nullptr);
  }
  // A frame carrying `len` bytes of the sender's memory at `addr`, lent.
  Frame lent_frame(FramePool& pool, uint64_t addr, uint32_t len) {
    Frame f = pool.acquire(len);
    const nic::Loan loan = s.loan(addr, len);
    EXPECT_NE(loan.bytes, nullptr);
    if (loan.bytes != nullptr) f.lend_payload(*loan.lender, 0, loan.bytes, len);
    return f;
  }
  PayloadMover mover{kAwake};
  std::vector<std::byte> sender, receiver, ring;
  ProcessHostMemory s, r;
};

// Pages of this process, registered in `m` (which moves through `mover` and
// reports late faults to `faults`), that a test can take away: registered,
// and gone, an inaccessible mapping in their place (an unmapped range could
// be mapped again at once by an allocator, a sanitizer's).
struct Unmapped {
  static constexpr size_t kPage = 4096;
  struct Faults : nic::MemoryFaultListener {
    std::vector<std::tuple<uint64_t, uint64_t, bool>> seen;  // address, length, write
    void access_failed(uint64_t addr, uint64_t length, bool write) override { seen.emplace_back(addr, length, write); }
  };
  Unmapped(size_t pages, uint8_t fill)
      : bytes(pages * kPage), p(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)),
        base(reinterpret_cast<uint64_t>(p)) {
    EXPECT_NE(p, MAP_FAILED);
    std::memset(p, fill, bytes);
    m.set_process(getpid());
    m.add_region(base, bytes, nic::kAccessLocalWrite);
    m.set_mover(&mover);
    m.set_fault_listener(&faults);
  }
  ~Unmapped() {
    m.set_fault_listener(nullptr);
    m.set_mover(nullptr);
    munmap(p, bytes);
  }
  void take_away(size_t first, size_t pages) {
    void* at = static_cast<std::byte*>(p) + first * kPage;
    EXPECT_EQ(mmap(at, pages * kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), at);
  }
  size_t bytes;
  void* p;
  uint64_t base;
  PayloadMover mover{kAwake};
  Faults faults;
  ProcessHostMemory m;
};

bool write_frame(ProcessHostMemory& m, uint64_t addr, Frame&& f) {
  const auto bytes = f.bytes_as_built();
  return m.write_frame(addr, bytes, std::move(f));
}
}  // namespace

// A read move fills daemon memory from a process (a read-ahead window filled
// beside the simulation); one that fails leaves zeros, never older bytes, and
// is reported as a read.
TEST(PayloadMover, ReadsFromAProcessAndAFailedReadLeavesZeros) {
  PayloadMover mover(kAwake);
  std::vector<std::byte> src = filled(8192, 0x5a), dst = filled(8192, 0x77);
  const uint64_t n = mover.push({dst.data(), nullptr, 8192, {}, getpid(), reinterpret_cast<uint64_t>(src.data()), true}, false);
  mover.wait_until_made(n);
  EXPECT_EQ(dst[0], std::byte{0x5a});
  EXPECT_EQ(dst[8191], std::byte{0x5a});
  EXPECT_EQ(mover.system_calls(), 1u);
  void* gone = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(gone, MAP_FAILED);
  mover.push({dst.data(), nullptr, 4096, {}, getpid(), reinterpret_cast<uint64_t>(gone), true}, false);
  mover.drain();
  EXPECT_EQ(dst[0], std::byte{0});
  EXPECT_EQ(dst[4095], std::byte{0});
  EXPECT_EQ(dst[4096], std::byte{0x5a});
  EXPECT_EQ(mover.failed_calls(), 1u);
  std::vector<std::tuple<uint64_t, uint64_t, bool>> seen;
  mover.take_failures(getpid(), [&](uint64_t a, uint64_t b, bool read) { seen.emplace_back(a, b, read); });
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], std::make_tuple(reinterpret_cast<uint64_t>(gone), uint64_t{4096}, true));
  munmap(gone, 4096);
}

// Through process_vm_readv, a read-ahead window is filled on the mover's
// thread while it takes moves: the simulation thread makes no system call for
// it, and a copy from the window or a borrower copying in sees the bytes.
TEST(ProcessHostMemoryMoves, TheMoverFillsTheReadAheadWindow) {
  FramePool pool;
  PayloadMover mover(kAwake);
  std::vector<std::byte> src(64 * 1024);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(i * 7 + i / 4096);
  ProcessHostMemory s;
  s.set_process(getpid());
  const uint64_t from = reinterpret_cast<uint64_t>(src.data());
  s.add_region(from, src.size(), nic::kAccessLocalWrite);
  s.set_mover(&mover);
  std::array<std::byte, 4096> out{};
  ASSERT_TRUE(s.read(from, out));  // a message's first read: here, at once
  EXPECT_EQ(s.system_calls(), 1u);
  Frame f = pool.acquire(4096);
  const nic::Loan loan = s.loan(from + 4096, 4096);  // continues it: the mover fills the window
  ASSERT_NE(loan.bytes, nullptr);
  f.lend_payload(*loan.lender, 0, loan.bytes, 4096);
  EXPECT_EQ(mover.moves(), 1u);
  ASSERT_TRUE(s.read(from + 8192, out));  // from the window
  EXPECT_EQ(std::memcmp(out.data(), src.data() + 8192, out.size()), 0);
  f.copy_in_payload();
  EXPECT_EQ(std::memcmp(f.bytes_as_built().data(), src.data() + 4096, 4096), 0);
  EXPECT_EQ(s.system_calls(), 1u);
  EXPECT_EQ(mover.system_calls(), 1u);
  s.set_mover(nullptr);
}

// A window the mover cannot fill (the program unmapped the registered memory
// after a message's first packet) holds zeros, and the memory's fault
// listener hears of the read.
TEST(ProcessHostMemoryMoves, AWindowThatCannotBeFilledIsZerosAndReported) {
  FramePool pool;
  Unmapped u(4, 0x5a);
  std::array<std::byte, Unmapped::kPage> out{};
  ASSERT_TRUE(u.m.read(u.base, out));
  u.take_away(1, 3);
  Frame f = pool.acquire(Unmapped::kPage);
  const nic::Loan loan = u.m.loan(u.base + Unmapped::kPage, Unmapped::kPage);
  ASSERT_NE(loan.bytes, nullptr);
  f.lend_payload(*loan.lender, 0, loan.bytes, Unmapped::kPage);
  f.copy_in_payload();
  EXPECT_EQ(f.bytes_as_built()[0], std::byte{0});
  EXPECT_EQ(f.bytes_as_built()[Unmapped::kPage - 1], std::byte{0});
  u.m.flush();
  ASSERT_EQ(u.faults.seen.size(), 1u);
  EXPECT_EQ(u.faults.seen[0], std::make_tuple(u.base + Unmapped::kPage, uint64_t{3 * Unmapped::kPage}, false));
}

TEST(ProcessHostMemoryMoves, ReceivedPayloadGoesThroughTheMover) {
  FramePool pool;  // before the mover, which may hold its frames
  TwoHosts h(64 * 1024);
  ASSERT_TRUE(write_frame(h.r, kReceiver, frame_of(pool, 4096, 0x33)));
  EXPECT_EQ(h.mover.moves(), 1u);
  std::array<std::byte, 8> out{};
  ASSERT_TRUE(h.r.read(kReceiver + 4088, out));  // a read waits for the move
  EXPECT_EQ(out[7], std::byte{0x33});
  // Small payloads, rings and bytes outside the runs are written at once.
  ASSERT_TRUE(write_frame(h.r, kReceiver + 8192, frame_of(pool, ProcessHostMemory::kMoveMinBytes - 1, 0x44)));
  EXPECT_EQ(h.receiver[8192], std::byte{0x44});
  EXPECT_EQ(h.mover.moves(), 1u);
  // A write outside every region is refused, moved or not.
  EXPECT_FALSE(write_frame(h.r, kReceiver + 64 * 1024, frame_of(pool, 4096, 0x55)));
  EXPECT_EQ(h.mover.moves(), 1u);
}

TEST(ProcessHostMemoryMoves, ACqeWaitsForEveryMoveOfEveryMemory) {
  FramePool pool(1 << 20);
  TwoHosts h(1 << 20);
  // Lent payload, from the sender's pages straight into the receiver's; the
  // frame goes at once.
  for (uint64_t off = 0; off < (1 << 20); off += 256 * 1024)
    ASSERT_TRUE(write_frame(h.r, kReceiver + off, h.lent_frame(pool, kSender + off, 256 * 1024)));
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_EQ(h.s.borrowers().borrowers(), 0u);
  nic::Cqe cqe{};
  cqe.owner = 1;
  ASSERT_TRUE(h.r.write(ProcessHostMemory::segment_address(0), nic::bytes_of(cqe)));
  EXPECT_TRUE(h.mover.made(h.mover.moves()));
  EXPECT_EQ(h.receiver[(1 << 20) - 1], std::byte{0x11});
  EXPECT_EQ(h.receiver[0], std::byte{0x11});
}

TEST(ProcessHostMemoryMoves, LentBytesStayUntilTheirMoveHasReadThem) {
  // One big move takes the mover a while; a write into the bytes it reads,
  // made at once after it, must wait for it.
  constexpr uint32_t kBig = 8 << 20;
  FramePool pool(kBig);
  TwoHosts h(kBig);
  ASSERT_TRUE(write_frame(h.r, kReceiver, h.lent_frame(pool, kSender, kBig)));
  const std::vector<std::byte> news = filled(64, 0x99);
  ASSERT_TRUE(h.s.write(kSender + kBig - 64, news));  // the NIC writes into the sender's memory
  EXPECT_EQ(h.sender[kBig - 1], std::byte{0x99});
  h.mover.drain();
  EXPECT_EQ(h.receiver[kBig - 1], std::byte{0x11});  // what the DMA read saw
}

TEST(ProcessHostMemoryMoves, ALoanWaitsForTheMovesIntoItsMemory) {
  constexpr uint32_t kBig = 8 << 20;
  FramePool pool(kBig);
  TwoHosts h(kBig);
  ASSERT_TRUE(write_frame(h.r, kReceiver, frame_of(pool, kBig, 0x77)));
  // The receiver's NIC now reads what was just written (an RDMA READ of it).
  const nic::Loan loan = h.r.loan(kReceiver + kBig - 16, 16);
  ASSERT_NE(loan.bytes, nullptr);
  EXPECT_EQ(loan.bytes[15], std::byte{0x77});
}

TEST(ProcessHostMemoryMoves, RegistrationChangesWaitForEveryMove) {
  constexpr uint32_t kBig = 8 << 20;
  FramePool pool(kBig);
  TwoHosts h(kBig);
  ASSERT_TRUE(write_frame(h.r, kReceiver, frame_of(pool, kBig, 0x66)));
  h.r.remove_region(kReceiver, kBig, nic::kAccessLocalWrite | nic::kAccessRemoteWrite);
  EXPECT_TRUE(h.mover.made(h.mover.moves()));
  EXPECT_EQ(h.receiver[kBig - 1], std::byte{0x66});
}

TEST(ProcessHostMemoryMoves, WritesIntoTheProcessGoOutTogether) {
  // The process is this test itself, reached through process_vm_writev.
  FramePool pool;
  PayloadMover mover(kAwake);
  std::vector<std::byte> buf(16 * 4096);
  ProcessHostMemory m;
  m.set_process(getpid());
  const uint64_t base = reinterpret_cast<uint64_t>(buf.data());
  m.add_region(base, buf.size(), nic::kAccessLocalWrite);
  m.set_mover(&mover);
  for (uint64_t i = 0; i < 16; ++i)
    ASSERT_TRUE(write_frame(m, base + i * 4096, frame_of(pool, 4096, static_cast<uint8_t>(i + 1))));
  EXPECT_EQ(mover.moves(), 16u);
  std::array<std::byte, 4> out{};
  ASSERT_TRUE(m.read(base + 15 * 4096 + 4092, out));  // a read waits for the moves
  EXPECT_EQ(out[3], std::byte{16});
  EXPECT_EQ(buf[0], std::byte{1});
  // Handed over eight at a time, each eight continuing each other: one call
  // for several moves.
  EXPECT_GE(mover.system_calls(), 1u);
  EXPECT_LT(mover.system_calls(), 16u);
  EXPECT_EQ(mover.failed_calls(), 0u);
  // A small write made at once lands after the moves before it.
  ASSERT_TRUE(write_frame(m, base, frame_of(pool, 4096, 0x21)));
  const std::array<std::byte, 2> small{std::byte{0x31}, std::byte{0x31}};
  ASSERT_TRUE(m.write(base + 100, small));
  m.flush();
  EXPECT_EQ(buf[100], std::byte{0x31});
  EXPECT_EQ(buf[99], std::byte{0x21});
  m.set_mover(nullptr);
}

// Through process_vm_readv/writev (both memories this test's own process): a
// received payload borrowed from the sender's read-ahead window is written by
// the mover from that window, which is not filled again until the move is made.
TEST(ProcessHostMemoryMoves, AWindowIsNotFilledAgainBeforeItsMovesAreMade) {
  FramePool pool;
  PayloadMover mover(kAwake);
  std::vector<std::byte> src = filled(1 << 20, 0x11), dst(4096);
  ProcessHostMemory s, r;
  s.set_process(getpid());
  r.set_process(getpid());
  const uint64_t from = reinterpret_cast<uint64_t>(src.data()), to = reinterpret_cast<uint64_t>(dst.data());
  s.add_region(from, src.size(), nic::kAccessLocalWrite);
  r.add_region(to, dst.size(), nic::kAccessLocalWrite);
  s.set_mover(&mover);
  r.set_mover(&mover);
  auto lent = [&](uint64_t addr) {
    Frame f = pool.acquire(4096);
    const nic::Loan loan = s.loan(addr, 4096);
    if (loan.bytes != nullptr) f.lend_payload(*loan.lender, 0, loan.bytes, 4096);
    return f;
  };
  std::array<std::byte, 4096> first{};
  ASSERT_TRUE(s.read(from, first));
  Frame f = lent(from + 4096);  // continues: borrowed from the window
  ASSERT_TRUE(f.borrowing());
  ASSERT_TRUE(write_frame(r, to, std::move(f)));  // handed over; the frame goes at once
  EXPECT_EQ(mover.moves(), 2u);                   // the window's fill and the write
  // Later work finds other bytes; each post drops the window and the next
  // packet fills one: never the window the move still reads. (The bytes the
  // move reads stay as they were: their work has not completed, and the
  // window's own fill may still be on its way.)
  std::memset(src.data() + 8192, 0x22, src.size() - 8192);
  for (uint64_t i = 0; i <= ProcessHostMemory::kMaxRetired; ++i) {
    s.forget_reads();
    Frame g = lent(from + 8192 + 4096 * i);
    EXPECT_TRUE(g.borrowing());
  }
  r.flush();
  mover.drain();
  EXPECT_EQ(dst[0], std::byte{0x11});
  EXPECT_EQ(dst[4095], std::byte{0x11});
  s.set_mover(nullptr);
  r.set_mover(nullptr);
}

// A write into the process that fails when it is made (the program unmapped the
// registered memory) reaches the memory's fault listener, whether the mover
// made it or the memory's own batch of small writes did.
TEST(ProcessHostMemoryMoves, WritesThatFailLaterAreReported) {
  FramePool pool;
  Unmapped u(4, 0);
  const uint64_t page = Unmapped::kPage;
  u.take_away(0, 4);
  ASSERT_TRUE(write_frame(u.m, u.base, frame_of(pool, 4096, 1)));  // through the mover
  u.mover.drain();
  const std::array<std::byte, 2> small{};
  ASSERT_TRUE(u.m.write(u.base + 2 * page, small));  // batched
  u.m.flush();
  ASSERT_EQ(u.faults.seen.size(), 2u);
  EXPECT_EQ(u.faults.seen[0], std::make_tuple(u.base + 2 * page, uint64_t{2}, true));
  EXPECT_EQ(u.faults.seen[1], std::make_tuple(u.base, uint64_t{4096}, true));
  u.m.flush();
  EXPECT_EQ(u.faults.seen.size(), 2u) << "a failure is reported once";
}
