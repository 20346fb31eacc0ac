// The transmit pipeline alone, on a fake wire: frames leave in the order they
// were built once their payload reads land, and a rewind takes back a QP's
// requests that have not reached the wire, those still reading their payload too.
#include "nic_model/tx_pipeline.hpp"

#include "block_fixture.hpp"

namespace rnicsim::nictest {
namespace {

using packet::Opcode;

// A pipeline on a fake wire, with QP 0x11 and a payload area.
struct Pipeline {
  BlockContext b;
  TxPipeline tx{b.ctx};
  FakeWire wire;
  uint64_t payload = b.memory.allocate(64 * 1024, 4096);
  Pipeline() {
    tx.connect({.wire = &wire});
    b.add_qp(0x11, QpState::Rts);
  }
  // A WRITE MIDDLE of QP 0x11 whose 256 bytes are read from host memory (at
  // payload + psn * 256), with the reads of a chunk as given.
  void submit(uint32_t psn, const ChunkRead& chunk = {}) {
    packet::PacketFields f;
    f.opcode = Opcode::RcRdmaWriteMiddle;
    f.psn = packet::Psn(psn);
    f.dest_qp = Qpn(0x22);
    InPacket in = make_packet(b.pool, f, pattern(256));
    in.frame.meta().psn = packet::Psn(psn);
    in.frame.meta().request = true;
    in.frame.meta().flow_id = 0x11;
    const DmaPiece piece{payload + psn * 256, 0, 256};
    tx.submit(std::move(in.frame), in.p.layout, std::span<const DmaPiece>(&piece, 1), Qpn(0x11), TxOrigin::Request,
              chunk);
  }
  std::vector<uint32_t> sent_psns() const {
    std::vector<uint32_t> v;
    for (const packet::PacketFields& f : wire.sent) v.push_back(f.psn.value());
    return v;
  }
};
struct TxPipelineTest : ::testing::Test, Pipeline {};

TEST_F(TxPipelineTest, FramesLeaveInOrderWhenTheirReadsLand) {
  for (uint32_t psn = 10; psn < 14; ++psn) submit(psn);
  EXPECT_TRUE(wire.sent.empty()) << "the payload reads take the PCIe round trip";
  b.run();
  EXPECT_EQ(sent_psns(), (std::vector<uint32_t>{10, 11, 12, 13}));
}

// Going back to PSN 12 while 10..13 still read their payload: 12 and 13 never
// reach the wire (their reads land and are thrown away); 10 and 11 go.
TEST_F(TxPipelineTest, ARewindTakesBackTheQpsFramesStillReadingTheirPayload) {
  for (uint32_t psn = 10; psn < 14; ++psn) submit(psn);
  EXPECT_EQ(tx.withdraw(Qpn(0x11), 0, Psn(12)), 2u);
  EXPECT_EQ(tx.withdraw(Qpn(0x11), 0, Psn(12)), 0u) << "taken back once";
  EXPECT_EQ(tx.withdraw(Qpn(0x12), 0, Psn(0)), 0u) << "another QP's";
  b.run();
  EXPECT_EQ(sent_psns(), (std::vector<uint32_t>{10, 11}));
  EXPECT_EQ(tx.depth(), 0u);
  submit(12);  // built again after the rewind
  b.run();
  EXPECT_EQ(sent_psns(), (std::vector<uint32_t>{10, 11, 12}));
}

// A chunk of four packets read by its first: the first leaves once all 1 KiB
// has landed, and the three others right behind it with the bytes of host
// memory, having crossed PCIe once. Read per
// packet, the first leaves after a 256-byte read, sooner.
TEST_F(TxPipelineTest, AChunksPacketsLeaveOnceTheChunkHasLanded) {
  const std::vector<std::byte> bytes = pattern(1024, 3);
  ASSERT_TRUE(b.memory.write(payload + 10 * 256, bytes));
  wire.sim = &b.sim;
  const DmaPiece rest{payload + 11 * 256, 0, 3 * 256};
  submit(10, ChunkRead{.ahead = std::span(&rest, 1), .buffered = false});
  for (uint32_t psn = 11; psn < 14; ++psn) submit(psn, ChunkRead{.ahead = {}, .buffered = true});
  b.run();
  EXPECT_EQ(sent_psns(), (std::vector<uint32_t>{10, 11, 12, 13}));
  ASSERT_EQ(wire.payloads.size(), 4u);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_TRUE(std::equal(wire.payloads[i].begin(), wire.payloads[i].end(), bytes.begin() + i * 256)) << i;
  PcieLink once(PcieParams{});  // its own 256 bytes, then the chunk's rest
  static_cast<void>(once.read(sim::Time(), 256));
  const sim::Time whole = once.read(sim::Time(), 3 * 256);
  EXPECT_EQ(b.pcie.downstream_bytes(), once.downstream_bytes()) << "the chunk crossed once";
  EXPECT_GE(wire.at[0], whole);
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(wire.at[i], wire.at[0]) << "right behind the first: " << i;

  Pipeline alone;
  alone.wire.sim = &alone.b.sim;
  alone.submit(10);
  alone.b.run();
  ASSERT_EQ(alone.wire.at.size(), 1u);
  EXPECT_LT(alone.wire.at[0], wire.at[0]) << "a packet read alone leaves sooner";
}

}  // namespace
}  // namespace rnicsim::nictest
