// The transmit pipeline alone, on a fake wire: frames leave in the order they
// were built once their payload reads land, and a rewind takes back a QP's
// requests that have not reached the wire, those still reading their payload too.
#include "nic_model/tx_pipeline.hpp"

#include "block_fixture.hpp"

namespace rnicsim::nictest {
namespace {

using packet::Opcode;

struct TxPipelineTest : ::testing::Test {
  BlockContext b;
  TxPipeline tx{b.ctx};
  FakeWire wire;
  uint64_t payload = b.memory.allocate(64 * 1024, 4096);
  TxPipelineTest() {
    tx.connect({.wire = &wire});
    b.add_qp(0x11, QpState::Rts);
  }
  // A WRITE MIDDLE of QP 0x11 whose 256 bytes are read from host memory.
  void submit(uint32_t psn) {
    packet::PacketFields f;
    f.opcode = Opcode::RcRdmaWriteMiddle;
    f.psn = packet::Psn(psn);
    f.dest_qp = Qpn(0x22);
    InPacket in = make_packet(b.pool, f, pattern(256));
    in.frame.meta().psn = packet::Psn(psn);
    in.frame.meta().request = true;
    in.frame.meta().flow_id = 0x11;
    const DmaPiece piece{payload + psn * 256, 0, 256};
    tx.submit(std::move(in.frame), in.p.layout, std::span<const DmaPiece>(&piece, 1), Qpn(0x11), TxOrigin::Request);
  }
  std::vector<uint32_t> sent_psns() const {
    std::vector<uint32_t> v;
    for (const packet::PacketFields& f : wire.sent) v.push_back(f.psn.value());
    return v;
  }
};

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

}  // namespace
}  // namespace rnicsim::nictest
