// The opcode table against the spec's opcode list (IBA Vol. 1 table 35).
#include <gtest/gtest.h>

#include <set>

#include "packet/opcode.hpp"
#include "packet/psn.hpp"

namespace rnicsim::packet {
namespace {

TEST(Opcode, EveryIbtaRcUcUdOpcodeIsValidAndNothingElse) {
  std::set<unsigned> expected;
  for (unsigned i = 0x00; i <= 0x14; ++i) expected.insert(i);
  expected.insert(0x16);
  expected.insert(0x17);
  for (unsigned i = 0x20; i <= 0x2B; ++i) expected.insert(i);
  expected.insert(0x64);
  expected.insert(0x65);
  expected.insert(0x81);
  for (unsigned i = 0; i < 256; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(is_valid_opcode(static_cast<std::uint8_t>(i)), expected.count(i) == 1);
    if (!is_valid_opcode(static_cast<std::uint8_t>(i))) { EXPECT_EQ(opcode_info(static_cast<std::uint8_t>(i)).name, "RESERVED"); }
  }
  EXPECT_EQ(expected.size(), kValidOpcodeCount);
}

TEST(Opcode, NamesAndTransports) {
  EXPECT_EQ(to_string(Opcode::RcSendFirst), "RC_SEND_FIRST");
  EXPECT_EQ(to_string(Opcode::RcRdmaWriteOnlyWithImmediate), "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
  EXPECT_EQ(to_string(Opcode::RcSendOnlyWithInvalidate), "RC_SEND_ONLY_WITH_INVALIDATE");
  EXPECT_EQ(to_string(Opcode::RcAcknowledge), "RC_ACKNOWLEDGE");
  EXPECT_EQ(to_string(Opcode::UcRdmaWriteLast), "UC_RDMA_WRITE_LAST");
  EXPECT_EQ(to_string(Opcode::UdSendOnlyWithImmediate), "UD_SEND_ONLY_WITH_IMMEDIATE");
  EXPECT_EQ(to_string(Opcode::Cnp), "CNP");
  for (unsigned i = 0; i < 256; ++i) {
    const OpcodeInfo& info = opcode_info(static_cast<std::uint8_t>(i));
    if (!info.valid) continue;
    SCOPED_TRACE(info.name);
    // The name's prefix is the transport, and the transport is the opcode's top 3 bits.
    if (info.transport != Transport::Cnp) { EXPECT_EQ(info.name.substr(0, 2), to_string(info.transport)); }
    switch (i >> 5) {
      case 0: EXPECT_EQ(info.transport, Transport::Rc); break;
      case 1: EXPECT_EQ(info.transport, Transport::Uc); break;
      case 3: EXPECT_EQ(info.transport, Transport::Ud); break;
      case 4: EXPECT_EQ(info.transport, Transport::Cnp); break;
      default: ADD_FAILURE();
    }
    // Names agree with the header mask and position.
    const bool imm = info.name.find("IMMEDIATE") != std::string_view::npos;
    EXPECT_EQ(imm, info.has(Hdr::ImmDt));
    EXPECT_EQ(info.name.find("INVALIDATE") != std::string_view::npos, info.has(Hdr::Ieth));
    if (info.name.find("FIRST") != std::string_view::npos) { EXPECT_EQ(info.position, Position::First); }
    if (info.name.find("MIDDLE") != std::string_view::npos) { EXPECT_EQ(info.position, Position::Middle); }
    if (info.name.find("LAST") != std::string_view::npos) { EXPECT_EQ(info.position, Position::Last); }
    if (info.name.find("ONLY") != std::string_view::npos) { EXPECT_EQ(info.position, Position::Only); }
    EXPECT_EQ(info.header_length, transport_header_length(info.mask));
  }
}

TEST(Opcode, HeaderOffsetsMatchSpec) {
  // Spot values from the spec's packet format figures (offsets from the BTH).
  EXPECT_EQ(opcode_info(Opcode::RcRdmaWriteOnlyWithImmediate).offset(Hdr::Reth), 12u);
  EXPECT_EQ(opcode_info(Opcode::RcRdmaWriteOnlyWithImmediate).offset(Hdr::ImmDt), 28u);
  EXPECT_EQ(opcode_info(Opcode::RcRdmaWriteOnlyWithImmediate).offset(Hdr::Payload), 32u);
  EXPECT_EQ(opcode_info(Opcode::RcAtomicAcknowledge).offset(Hdr::AtomicAckEth), 16u);
  EXPECT_EQ(opcode_info(Opcode::UdSendOnlyWithImmediate).offset(Hdr::ImmDt), 20u);
  EXPECT_EQ(opcode_info(Opcode::Cnp).header_length, 28u);
  EXPECT_TRUE(opcode_info(Opcode::RcRdmaReadResponseMiddle).is_response());
  EXPECT_TRUE(opcode_info(Opcode::RcAcknowledge).is_response());
  EXPECT_FALSE(opcode_info(Opcode::RcRdmaReadRequest).is_response());
}

TEST(Psn, ModularArithmetic) {
  EXPECT_EQ((Psn(0xFFFFFF) + 1).value(), 0u);
  EXPECT_LT(Psn(0xFFFFF0), Psn(0x000010));
  EXPECT_GT(Psn(5), Psn(4));
  EXPECT_EQ(Psn::distance(Psn(10), Psn(7)), -3);
  EXPECT_EQ(Psn::distance(Psn(0xFFFFFF), Psn(0)), 1);
}

}  // namespace
}  // namespace rnicsim::packet
