// The DMA engine alone, over simulated host memory and a PCIe link: reads
// sample memory when they complete, writes become visible when they complete,
// each direction in issue order, and failures reach the client or the listener.
#include "nic_model/dma_engine.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "nic_model/host_memory.hpp"
#include "sim/simulator.hpp"

namespace rnicsim::nictest {
namespace {

using namespace rnicsim::nic;

struct Client : DmaClient, DmaFaultListener {
  struct Done {
    uint64_t tag;
    bool ok;
    sim::Time at;
  };
  explicit Client(sim::Simulator& s) : sim(s) {}
  void dma_done(uint64_t tag, bool ok) override { done.push_back({tag, ok, sim.now()}); }
  void dma_fault(std::optional<Qpn> qpn, uint64_t, uint64_t, bool write) override {
    faults.push_back({qpn ? qpn->value() : 0, write});
  }
  sim::Simulator& sim;
  std::vector<Done> done;
  std::vector<std::pair<uint32_t, bool>> faults;
};

class DmaEngineTest : public ::testing::Test {
protected:
  DmaEngineTest() : pcie(PcieParams{}), dma(sim, pcie, memory), client(sim) {
    dma.set_fault_listener(&client);
    base = memory.allocate(4096, 4096);
  }
  void run() {
    while (sim.scheduler().step()) {
    }
  }
  void put(uint64_t addr, uint8_t value, size_t n) {
    std::vector<std::byte> b(n, std::byte{value});
    ASSERT_TRUE(memory.write(addr, b));
  }
  uint8_t at(uint64_t addr) {
    std::array<std::byte, 1> b{};
    EXPECT_TRUE(memory.read(addr, b));
    return static_cast<uint8_t>(b[0]);
  }

  sim::Simulator sim{1};
  SimulatedHostMemory memory;
  PcieLink pcie;
  DmaEngine dma;
  Client client;
  uint64_t base = 0;
};

TEST_F(DmaEngineTest, AReadSamplesMemoryWhenItCompletes) {
  put(base, 1, 64);
  std::array<std::byte, 64> dst{};
  dma.read(base, dst, &client, 7);
  put(base, 2, 64);  // changed after issue, before completion
  run();
  ASSERT_EQ(client.done.size(), 1u);
  EXPECT_EQ(client.done[0].tag, 7u);
  EXPECT_TRUE(client.done[0].ok);
  EXPECT_GT(client.done[0].at, sim::Time()) << "a read crosses PCIe";
  EXPECT_EQ(static_cast<uint8_t>(dst[0]), 2);
}

TEST_F(DmaEngineTest, ReadsCompleteInIssueOrder) {
  std::array<std::byte, 2048> big{};
  std::array<std::byte, 8> small{};
  dma.read(base, big, &client, 1);
  dma.read(base + 2048, small, &client, 2);
  run();
  ASSERT_EQ(client.done.size(), 2u);
  EXPECT_EQ(client.done[0].tag, 1u);
  EXPECT_EQ(client.done[1].tag, 2u);
  EXPECT_LE(client.done[0].at, client.done[1].at);
}

// Bytes a chunk read ahead brought onto the NIC: a buffered read crosses no
// PCIe (alone, it is done at once) and lands with the read before it, never
// before; it still takes host memory's bytes.
TEST_F(DmaEngineTest, ABufferedReadTakesNoPcieTimeAndLandsWithTheReadBeforeIt) {
  put(base, 5, 64);
  std::array<std::byte, 64> alone{};
  dma.read(base, alone, &client, 1, ReadMode::Copy, std::nullopt, ReadSource::Buffered);
  run();
  ASSERT_EQ(client.done.size(), 1u);
  EXPECT_EQ(client.done[0].at, sim::Time()) << "nothing crossed PCIe";
  EXPECT_EQ(pcie.downstream_bytes() + pcie.upstream_bytes(), 0u);
  EXPECT_EQ(static_cast<uint8_t>(alone[0]), 5);

  std::array<std::byte, 2048> chunk{};
  std::array<std::byte, 256> later{};
  const sim::Time start = sim.now();
  dma.read(base, chunk, &client, 2);
  dma.read(base + 2048, later, &client, 3, ReadMode::Copy, std::nullopt, ReadSource::Buffered);
  dma.read_elided(base + 2048, 256, &client, 4, ReadSource::Buffered);
  run();
  ASSERT_EQ(client.done.size(), 4u);
  EXPECT_GT(client.done[1].at, start);
  EXPECT_EQ(client.done[2].at, client.done[1].at) << "with the chunk's read, not before";
  EXPECT_EQ(client.done[3].at, client.done[1].at);
  PcieLink one(PcieParams{});
  static_cast<void>(one.read(sim::Time(), 2048));
  EXPECT_EQ(pcie.downstream_bytes(), one.downstream_bytes()) << "only the chunk's read crossed";
  EXPECT_EQ(pcie.upstream_bytes(), one.upstream_bytes());
}

TEST_F(DmaEngineTest, AWriteIsVisibleOnlyWhenItCompletes) {
  put(base, 0, 16);
  const std::array<std::byte, 16> src{std::byte{9}};
  dma.write_small(base, src, &client, 3);
  EXPECT_EQ(at(base), 0) << "not yet across PCIe";
  run();
  EXPECT_EQ(at(base), 9);
  ASSERT_EQ(client.done.size(), 1u);
  EXPECT_TRUE(client.done[0].ok);
  EXPECT_EQ(dma.writes_done(), 1u);
}

// What a QP's writes still carry over PCIe: a throughput series counts its
// payload as placed only once that is zero.
TEST_F(DmaEngineTest, AQpsWritesAreInFlightUntilTheyLand) {
  const std::array<std::byte, 64> src{};
  dma.write_small(base, src, &client, 1, Qpn(0x11));
  dma.write_small(base + 64, src, &client, 2, Qpn(0x11));
  dma.write_small(base + 128, src, &client, 3, Qpn(0x12));
  dma.write_small(base + 192, src, &client, 4);  // nobody's (a CQE)
  EXPECT_EQ(dma.writing(Qpn(0x11)), 128u);
  EXPECT_EQ(dma.writing(Qpn(0x12)), 64u);
  ASSERT_TRUE(sim.scheduler().step());  // the first write lands
  EXPECT_EQ(dma.writing(Qpn(0x11)), 64u);
  std::vector<std::pair<uint32_t, uint64_t>> each;
  dma.for_each_writing([&](Qpn q, uint64_t bytes) { each.emplace_back(q.value(), bytes); });
  EXPECT_EQ(each, (std::vector<std::pair<uint32_t, uint64_t>>{{0x11, 64}, {0x12, 64}}));
  run();
  EXPECT_EQ(dma.writing(Qpn(0x11)), 0u);
  EXPECT_EQ(dma.writing(Qpn(0x12)), 0u);
  dma.for_each_writing([&](Qpn, uint64_t) { ADD_FAILURE() << "nothing is in flight"; });
}

TEST_F(DmaEngineTest, AnEventEntryLandsAfterTheWritesBeforeIt) {
  const std::array<std::byte, 64> src{};
  dma.write_small(base, src, &client, 1);
  dma.write_small(base + 64, src, &client, 2);
  dma.write_event_entry(&client, 3);
  run();
  ASSERT_EQ(client.done.size(), 3u);
  EXPECT_EQ(client.done[2].tag, 3u);
  EXPECT_GE(client.done[2].at, client.done[1].at);
}

TEST_F(DmaEngineTest, AReadOfUnbackedMemoryFailsToItsClient) {
  std::array<std::byte, 64> dst{};
  dma.read(0xdead0000000, dst, &client, 5, ReadMode::Copy, packet::Qpn(0x11));
  run();
  ASSERT_EQ(client.done.size(), 1u);
  EXPECT_FALSE(client.done[0].ok);
}

TEST_F(DmaEngineTest, AWriteToUnbackedMemoryFailsAndItsQpIsNamed) {
  const std::array<std::byte, 16> src{};
  dma.write_small(0xdead0000000, src, &client, 6, packet::Qpn(0x12));
  run();
  ASSERT_EQ(client.done.size(), 1u);
  EXPECT_FALSE(client.done[0].ok);
  ASSERT_EQ(client.faults.size(), 1u);
  EXPECT_EQ(client.faults[0], std::make_pair(0x12u, true));
}

}  // namespace
}  // namespace rnicsim::nictest
