// The AETH syndrome: its kinds and values as IBTA table 43 lays them out, the
// NAK codes' names from their one table, and the byte through build and parse.
#include <gtest/gtest.h>

#include "packet/packet.hpp"
#include "packet/syndrome.hpp"
#include "sample_packets.hpp"

namespace rnicsim::packet {
namespace {

TEST(Syndrome, KindsAndValuesFollowTable43) {
  EXPECT_EQ(Syndrome::ack(5).raw(), 0x05);
  EXPECT_EQ(Syndrome::ack().kind(), AckKind::Ack);
  EXPECT_EQ(Syndrome::rnr_nak(14).raw(), 0x2E);
  EXPECT_EQ(Syndrome::rnr_nak(14).value(), 14);
  EXPECT_EQ(Syndrome::nak(NakCode::RemoteAccessError).raw(), 0x62);
  EXPECT_EQ(Syndrome(0x40).kind(), AckKind::Reserved);
  EXPECT_TRUE(Syndrome(0x40).is_nak()) << "a reserved syndrome is no ACK";
  EXPECT_FALSE(Syndrome::ack(0).is_nak());
}

TEST(Syndrome, NakCodesAreNamedFromOneTable) {
  EXPECT_EQ(Syndrome::nak(NakCode::PsnSequenceError).nak_name(), "PSN sequence error");
  EXPECT_EQ(Syndrome::nak(NakCode::InvalidRdRequest).nak_name(), "invalid RD request");
  EXPECT_EQ(Syndrome(0x65).nak_name(), "reserved NAK code");
  for (const NakCodeRow& row : kNakCodes) EXPECT_EQ(Syndrome::nak(row.code).nak_code(), row.code);
}

TEST(Syndrome, SurvivesBuildAndParse) {
  for (const auto& lv : testing::all_link_variants()) {
    PacketFields f = testing::sample_fields(Opcode::RcAcknowledge, lv);
    f.aeth = AethFields{Syndrome::rnr_nak(9), 0x000102};
    std::vector<std::byte> frame(frame_length(f));
    ASSERT_TRUE(build(f, testing::sample_payload(f.payload_length), frame));
    const auto parsed = parse(frame, testing::link_type_of(lv.link));
    ASSERT_TRUE(parsed) << lv.name();
    ASSERT_TRUE(parsed->fields.aeth.has_value());
    EXPECT_EQ(parsed->fields.aeth->syndrome, Syndrome::rnr_nak(9)) << lv.name();
  }
}

}  // namespace
}  // namespace rnicsim::packet
