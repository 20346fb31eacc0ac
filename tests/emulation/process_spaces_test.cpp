#include "emulation/process_spaces.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <vector>

#include "emulation/program_state.hpp"
#include "nic_model/queue_format.hpp"

using rnicsim::emulation::ProcessHostMemory;
using rnicsim::emulation::ProcessSpaces;
namespace nic = rnicsim::nic;

namespace {
uint64_t addr_of(const void* p) { return reinterpret_cast<uint64_t>(p); }
}  // namespace

// Two processes' regions at one virtual address: the slot's tag says whose
// bytes the NIC reaches. Here both "processes" are this one, and the second
// slot's region is a buffer of its own at another address, reached through
// its tag: a read through the first slot's tag finds no region there.
TEST(ProcessSpaces, ASlotsTagSaysWhoseMemory) {
  std::vector<std::byte> mine(64, std::byte{0x11}), theirs(64, std::byte{0x22});
  ProcessSpaces spaces;
  const size_t a = spaces.attach(getpid());
  EXPECT_EQ(spaces.attach(getpid()), a);  // a second session of the same process
  const size_t b = spaces.attach(getpid() + 1000000);  // another process
  ASSERT_NE(a, b);
  spaces.space(a).add_region(addr_of(mine.data()), mine.size(), nic::kAccessLocalWrite);
  spaces.space(b).set_process(getpid());  // it reads this process, under its own slot
  spaces.space(b).add_region(addr_of(theirs.data()), theirs.size(), nic::kAccessLocalWrite);
  std::array<std::byte, 8> out{};
  ASSERT_TRUE(spaces.read(ProcessSpaces::nic_address(a, addr_of(mine.data())), out));
  EXPECT_EQ(out[0], std::byte{0x11});
  ASSERT_TRUE(spaces.read(ProcessSpaces::nic_address(b, addr_of(theirs.data())), out));
  EXPECT_EQ(out[0], std::byte{0x22});
  EXPECT_FALSE(spaces.read(ProcessSpaces::nic_address(b, addr_of(mine.data())), out));
  EXPECT_FALSE(spaces.read(ProcessSpaces::nic_address(a, addr_of(theirs.data())), out));
}

// A write the second slot's process could not take (its pages gone after the
// write was accepted) is reported at the address the NIC wrote to: the
// slot's tag above the process's address, so the NIC finds the QP that wrote.
TEST(ProcessSpaces, AFailedWriteIsReportedAtTheSlotsAddress) {
  struct Faults : nic::MemoryFaultListener {
    std::vector<std::pair<uint64_t, uint64_t>> failed;
    void access_failed(uint64_t addr, uint64_t length, bool write) override {
      if (write) failed.emplace_back(addr, length);
    }
  } faults;
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  ProcessSpaces spaces;
  spaces.set_fault_listener(&faults);
  const size_t a = spaces.attach(getpid() + 1000000);  // another process, first
  const size_t b = spaces.attach(getpid());
  ASSERT_NE(a, b);
  spaces.space(b).add_region(addr_of(page), 4096, nic::kAccessLocalWrite);
  ASSERT_EQ(mmap(page, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), page);
  const std::array<std::byte, 64> bytes{};
  const uint64_t at = ProcessSpaces::nic_address(b, addr_of(page) + 128);
  spaces.write(at, bytes);
  spaces.flush();
  ASSERT_EQ(faults.failed.size(), 1u);
  EXPECT_EQ(faults.failed[0], std::make_pair(at, uint64_t{64}));
  munmap(page, 4096);
}

// Segments go to the space they were added to; the daemon's own to none of
// the processes', and they stay when every process has gone.
TEST(ProcessSpaces, SegmentsBelongToTheirSpace) {
  std::vector<std::byte> ring(4096, std::byte{0x33}), agent(4096, std::byte{0x44});
  ProcessSpaces spaces;
  const size_t a = spaces.attach(getpid());
  spaces.add_segment(a, ProcessHostMemory::segment_address(7), ring.data(), ring.size());
  spaces.add_segment(ProcessSpaces::kDaemon, ProcessHostMemory::segment_address(0), agent.data(), agent.size());
  std::array<std::byte, 4> out{};
  ASSERT_TRUE(spaces.read(ProcessHostMemory::segment_address(7) + 16, out));
  EXPECT_EQ(out[0], std::byte{0x33});
  EXPECT_TRUE(spaces.detach(a));  // its last session: the slot's segments go
  EXPECT_TRUE(spaces.empty());
  EXPECT_FALSE(spaces.read(ProcessHostMemory::segment_address(7) + 16, out));
  ASSERT_TRUE(spaces.read(ProcessHostMemory::segment_address(0), out));
  EXPECT_EQ(out[0], std::byte{0x44});
}

// A slot stays while its process has a session; then it is free for another.
TEST(ProcessSpaces, ASlotIsFreedByItsLastSession) {
  ProcessSpaces spaces;
  const size_t a = spaces.attach(100);
  spaces.attach(100);
  EXPECT_FALSE(spaces.detach(a));
  EXPECT_TRUE(spaces.has(100));
  EXPECT_TRUE(spaces.detach(a));
  EXPECT_FALSE(spaces.has(100));
  EXPECT_EQ(spaces.attach(200), a);
}

// What the daemon walks to put a forked child on its parent's host.
TEST(ProgramState, ParentOfAChild) {
  EXPECT_EQ(rnicsim::emulation::parent_of(getpid()), getppid());
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  EXPECT_EQ(rnicsim::emulation::parent_of(child), getpid());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(rnicsim::emulation::parent_of(child), 0);  // gone
}
