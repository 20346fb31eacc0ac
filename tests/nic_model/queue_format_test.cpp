// What a BlueFlame write carries (queue_format.hpp): a send WQE at its own size
// in the NIC's format, rounded up to 64-byte lines, as mlx5 writes it; and the
// ring slot, which the presets' hosts write by default.
#include "nic_model/queue_format.hpp"

#include <gtest/gtest.h>

namespace rnicsim::nictest {
namespace {

using namespace rnicsim::nic;

SendWqe wqe(WrOpcode op, uint8_t sges, uint32_t inline_len = 0) {
  SendWqe w{};
  w.opcode = op;
  w.num_sge = sges;
  if (inline_len > 0) {
    w.send_flags = kSendInline;
    w.inline_len = inline_len;
  }
  return w;
}

// Control 16 bytes; remote address 16 (RDMA), and an atomic segment 16 more
// (atomics); 16 per SGE, or inline data behind 4 bytes, padded to 16; a UD
// WQE's datagram segment 48.
TEST(BlueflameBytes, AWqeIsItsSegmentsInWholeLines) {
  EXPECT_EQ(blueflame_bytes(wqe(WrOpcode::RdmaWrite, 1), QpType::Rc), 64u) << "16 + 16 + 16";
  EXPECT_EQ(blueflame_bytes(wqe(WrOpcode::RdmaRead, 1), QpType::Rc), 64u);
  EXPECT_EQ(blueflame_bytes(wqe(WrOpcode::Send, 1), QpType::Rc), 64u) << "16 + 16";
  EXPECT_EQ(blueflame_bytes(wqe(WrOpcode::AtomicCmpSwap, 1), QpType::Rc), 64u) << "16 + 32 + 16";
  EXPECT_EQ(blueflame_bytes(wqe(WrOpcode::RdmaWrite, 0, 8), QpType::Rc), 64u) << "16 + 16 + (4 + 8 -> 16)";
  EXPECT_EQ(blueflame_bytes(wqe(WrOpcode::RdmaWrite, 0, 28), QpType::Rc), 64u) << "16 + 16 + 32";
  EXPECT_EQ(blueflame_bytes(wqe(WrOpcode::RdmaWrite, 0, 29), QpType::Rc), 128u) << "16 + 16 + 48";
  EXPECT_EQ(blueflame_bytes(wqe(WrOpcode::RdmaWrite, 2), QpType::Rc), 64u) << "16 + 16 + 32";
  EXPECT_EQ(blueflame_bytes(wqe(WrOpcode::RdmaWrite, 3), QpType::Rc), 128u) << "16 + 16 + 48";
  EXPECT_EQ(blueflame_bytes(wqe(WrOpcode::Send, 1), QpType::Ud), 128u) << "16 + 48 + 16";
  EXPECT_EQ(blueflame_bytes(wqe(WrOpcode::Send, 0, 188), QpType::Ud), 256u) << "16 + 48 + 192";
}

TEST(BlueflameBytes, TheRingSlotIsTwoLinesForUpToFourSges) {
  EXPECT_EQ(wqe_bytes(wqe(WrOpcode::RdmaWrite, 1)), 128u);
  EXPECT_EQ(wqe_bytes(wqe(WrOpcode::RdmaWrite, 0, 8)), 128u);
  EXPECT_EQ(wqe_bytes(wqe(WrOpcode::Send, 5)), 192u);
}

}  // namespace
}  // namespace rnicsim::nictest
