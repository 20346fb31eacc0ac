// build -> parse round trips for every valid opcode over every link variant,
// truncation at every length, and the errors build/parse report.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>

#include "packet/icrc.hpp"
#include "packet/packet.hpp"
#include "tests/packet/sample_packets.hpp"

namespace rnicsim::packet {
namespace {

using testing::all_link_variants;
using testing::all_valid_opcodes;
using testing::link_type_of;
using testing::sample_fields;
using testing::sample_frame;
using testing::sample_payload;

/// Copies bytes into a heap block of exactly that size, so that AddressSanitizer
/// catches any read past the end.
struct ExactBuffer {
  explicit ExactBuffer(std::span<const std::byte> b) : p(new std::byte[b.size() ? b.size() : 1]), n(b.size()) {
    if (n) std::memcpy(p.get(), b.data(), n);
  }
  std::span<const std::byte> span() const { return {p.get(), n}; }
  std::unique_ptr<std::byte[]> p;
  std::size_t n;
};

TEST(RoundTrip, EveryOpcodeEveryLink) {
  int checked = 0;
  for (const auto& lv : all_link_variants()) {
    for (Opcode op : all_valid_opcodes()) {
      SCOPED_TRACE(std::string(to_string(op)) + " over " + lv.name());
      const PacketFields f = sample_fields(op, lv);
      const auto frame = sample_frame(f, static_cast<std::uint8_t>(op));
      ASSERT_EQ(frame.size(), frame_length(f));
      const ExactBuffer buf(frame);
      const auto r = parse(buf.span(), link_type_of(lv.link));
      ASSERT_TRUE(r) << to_string(r.error());
      EXPECT_EQ(r->fields, f);
      EXPECT_TRUE(icrc_ok(buf.span(), *r));
      EXPECT_TRUE(vcrc_ok(buf.span(), *r));
      EXPECT_TRUE(ipv4_checksum_ok(buf.span(), *r));
      EXPECT_TRUE(udp_checksum_ok(buf.span(), *r));
      const auto payload = sample_payload(f.payload_length, static_cast<std::uint8_t>(op));
      ASSERT_EQ(r->payload.size(), payload.size());
      EXPECT_TRUE(std::equal(payload.begin(), payload.end(), r->payload.begin()));
      EXPECT_EQ(r->layout.frame_length, frame.size());
      // The pad bytes are zero.
      for (std::size_t i = 0; i < f.pad_count; ++i) EXPECT_EQ(frame[r->layout.icrc_offset - 1 - i], std::byte{0});
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6 * 38);
}

TEST(RoundTrip, WriteHeadersThenSealEqualsBuild) {
  for (const auto& lv : all_link_variants()) {
    const PacketFields f = sample_fields(Opcode::RcRdmaWriteOnlyWithImmediate, lv, 1021);
    const auto payload = sample_payload(f.payload_length);
    std::vector<std::byte> a(frame_length(f), std::byte{0xEE});
    auto l = write_headers(f, a);
    ASSERT_TRUE(l);
    EXPECT_EQ(l->payload_length, 1021u);
    EXPECT_EQ(l->pad_count, 3);
    std::memcpy(a.data() + l->payload_offset, payload.data(), payload.size());  // "DMA"
    seal(a, *l);
    std::vector<std::byte> b(frame_length(f));
    ASSERT_TRUE(build(f, payload, b));
    EXPECT_EQ(a, b) << lv.name();
    // seal by link kind finds the same layout and gives the same bytes.
    std::vector<std::byte> c = a;
    c[l->icrc_offset] ^= std::byte{0xFF};
    EXPECT_TRUE(seal(c, lv.link));
    EXPECT_EQ(a, c);
    EXPECT_FALSE(seal(c, lv.link == LinkKind::RoceV2Ipv4 ? LinkKind::RoceV2Ipv6 : LinkKind::RoceV2Ipv4));
  }
}

TEST(RoundTrip, PatchedHeadersEqualWrittenOnes) {
  // A template written for one packet, patched for another, equals the headers
  // written for that other packet, for every opcode over every link variant.
  int checked = 0;
  for (const auto& lv : all_link_variants()) {
    for (Opcode op : all_valid_opcodes()) {
      SCOPED_TRACE(std::string(to_string(op)) + " over " + lv.name());
      PacketFields a = sample_fields(op, lv);
      a.psn = packet::Psn(0x000001);
      a.ack_req = false;
      a.solicited = false;
      a.ipv4_id = 7;
      PacketFields b = a;
      b.psn = packet::Psn(0xFFFFFE);
      b.ack_req = true;
      b.solicited = true;
      b.ipv4_id = 0xBEEF;
      std::vector<std::byte> ta(frame_length(a)), tb(frame_length(b));
      const auto la = write_headers(a, ta);
      const auto lb = write_headers(b, tb);
      ASSERT_TRUE(la && lb);
      patch_headers(ta, *la, PerPacketFields{b.psn, b.ack_req, b.solicited, b.ipv4_id});
      const auto n = static_cast<std::ptrdiff_t>(lb->payload_offset);
      EXPECT_TRUE(std::equal(ta.begin(), ta.begin() + n, tb.begin(), tb.begin() + n));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6 * 38);
}

TEST(RoundTrip, EthernetMinimumFramePadding) {
  // SEND_ONLY with no payload over IPv4: 14 + 20 + 8 + 12 + 4 = 58 bytes -> padded to 60.
  PacketFields f = sample_fields(Opcode::RcSendOnly, {LinkKind::RoceV2Ipv4, false}, 0);
  EXPECT_EQ(frame_length(f), 60u);
  const auto frame = sample_frame(f);
  ASSERT_EQ(frame.size(), 60u);
  EXPECT_EQ(frame[58], std::byte{0});
  EXPECT_EQ(frame[59], std::byte{0});
  const auto r = parse(frame, LinkType::Ethernet);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->trailer_length, 2u);
  EXPECT_EQ(r->layout.icrc_offset, 54u);
  EXPECT_TRUE(icrc_ok(frame, *r));
  // A 4-byte FCS left in a capture is a trailer too.
  auto with_fcs = sample_frame(sample_fields(Opcode::RcSendOnly, {LinkKind::RoceV2Ipv6, false}));
  with_fcs.insert(with_fcs.end(), 4, std::byte{0xAA});
  const auto r2 = parse(with_fcs, LinkType::Ethernet);
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->trailer_length, 4u);
  EXPECT_TRUE(icrc_ok(with_fcs, *r2));
}

TEST(Truncation, EveryLengthOfEveryOpcodeIsRejected) {
  std::size_t rejected = 0;
  for (const auto& lv : all_link_variants()) {
    for (Opcode op : all_valid_opcodes()) {
      const PacketFields f = sample_fields(op, lv);
      const auto frame = sample_frame(f);
      const auto full = parse(frame, link_type_of(lv.link));
      ASSERT_TRUE(full);
      const std::size_t content = frame.size() - full->trailer_length;
      for (std::size_t len = 0; len < content; ++len) {
        const ExactBuffer buf(std::span<const std::byte>(frame).first(len));
        const auto r = parse(buf.span(), link_type_of(lv.link));
        EXPECT_FALSE(r) << to_string(op) << " over " << lv.name() << " truncated to " << len;
        ++rejected;
      }
    }
  }
  RecordProperty("rejected", static_cast<int>(rejected));
  EXPECT_GT(rejected, 10000u);
}

// A frame cut anywhere after its headers, told its length on the wire, parses to
// the same fields; cut inside its headers it is rejected. (Captures cut by a snap
// length and size-only frames, see fabric::Frame.)
TEST(DestQp, ReadFromTheBthOfEveryLinkWithoutParsing) {
  for (const auto& lv : all_link_variants()) {
    for (Opcode op : {Opcode::RcRdmaWriteOnly, Opcode::RcAcknowledge, Opcode::UdSendOnly}) {
      SCOPED_TRACE(std::string(to_string(op)) + " over " + lv.name());
      PacketFields f = sample_fields(op, lv);
      f.dest_qp = Qpn(0xABCDEF);
      const auto frame = sample_frame(f, 1);
      const ExactBuffer whole(frame);
      EXPECT_EQ(dest_qp_of(whole.span(), link_type_of(lv.link)), Qpn(0xABCDEF));
      const auto r = parse(whole.span(), link_type_of(lv.link));
      ASSERT_TRUE(r);
      // Cut inside the BTH: no QP to read.
      const ExactBuffer cut(std::span<const std::byte>(frame).first(r->layout.bth_offset + 7));
      EXPECT_EQ(dest_qp_of(cut.span(), link_type_of(lv.link)), std::nullopt);
    }
  }
  const std::byte arp[14] = {std::byte{0xFF}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, std::byte{0x08}, std::byte{0x06}};
  EXPECT_EQ(dest_qp_of(arp, LinkType::Ethernet), std::nullopt) << "not IP";
}

TEST(Truncation, CutAfterTheHeadersParsesWithTheWireLength) {
  std::size_t parsed = 0;
  for (const auto& lv : all_link_variants()) {
    for (Opcode op : all_valid_opcodes()) {
      SCOPED_TRACE(std::string(to_string(op)) + " over " + lv.name());
      const PacketFields f = sample_fields(op, lv);
      const auto frame = sample_frame(f, static_cast<std::uint8_t>(op));
      const auto full = parse(frame, link_type_of(lv.link));
      ASSERT_TRUE(full);
      for (std::size_t len = 0; len < frame.size(); ++len) {
        const ExactBuffer buf(std::span<const std::byte>(frame).first(len));
        const auto r = parse(buf.span(), link_type_of(lv.link), frame.size());
        if (len < full->layout.payload_offset) {
          EXPECT_FALSE(r) << "cut to " << len;
          continue;
        }
        ASSERT_TRUE(r) << "cut to " << len << ": " << to_string(r.error());
        EXPECT_EQ(r->fields, f);
        EXPECT_EQ(r->missing, frame.size() - len);
        EXPECT_EQ(r->layout.payload_offset, full->layout.payload_offset);
        EXPECT_EQ(r->layout.frame_length, full->layout.frame_length);
        EXPECT_EQ(r->payload.size(), std::min<std::size_t>(f.payload_length, len - full->layout.payload_offset));
        if (len < full->layout.icrc_offset + 4) {
          EXPECT_FALSE(icrc_ok(buf.span(), *r));
        }
        ++parsed;
      }
    }
  }
  EXPECT_GT(parsed, 10000u);
}

TEST(Truncation, ErrorNamesTheHeader) {
  const PacketFields f = sample_fields(Opcode::RcRdmaWriteOnlyWithImmediate, {LinkKind::RoceV2Ipv4, true}, 0);
  const auto frame = sample_frame(f);
  const std::span<const std::byte> s(frame);
  EXPECT_EQ(parse(s.first(10), LinkType::Ethernet).error(), ParseError::TruncatedEthernet);
  EXPECT_EQ(parse(s.first(16), LinkType::Ethernet).error(), ParseError::TruncatedVlan);
  EXPECT_EQ(parse(s.first(30), LinkType::Ethernet).error(), ParseError::TruncatedIpv4);
  // Past the UDP header the IP length no longer fits the frame.
  EXPECT_EQ(parse(s.first(50), LinkType::Ethernet).error(), ParseError::IpLengthMismatch);

  const PacketFields g = sample_fields(Opcode::RcRdmaWriteOnlyWithImmediate, {LinkKind::IbGlobal, false}, 0);
  const auto ib = sample_frame(g);
  const std::span<const std::byte> t(ib);
  EXPECT_EQ(parse(t.first(7), LinkType::Infiniband).error(), ParseError::TruncatedLrh);
  EXPECT_EQ(parse(t.first(20), LinkType::Infiniband).error(), ParseError::TruncatedGrh);
  EXPECT_EQ(parse(t.first(ib.size() - 1), LinkType::Infiniband).error(), ParseError::TruncatedVcrc);
}

/// Builds a valid frame, lets `edit` damage it, reseals nothing, parses.
ParseError parse_error_after(Opcode op, LinkKind link, std::uint32_t payload,
                             const std::function<void(std::vector<std::byte>&, const FrameLayout&)>& edit) {
  const PacketFields f = sample_fields(op, {link, false}, payload);
  auto frame = sample_frame(f);
  auto ok = parse(frame, link_type_of(link));
  if (!ok) return ParseError::NotIp;  // unexpected; makes the caller's check fail
  edit(frame, ok->layout);
  auto r = parse(frame, link_type_of(link));
  return r ? static_cast<ParseError>(0xFF) : r.error();
}

TEST(ParseErrors, Typed) {
  using L = LinkKind;
  const auto set_byte = [](std::size_t off, std::uint8_t v) {
    return [=](std::vector<std::byte>& b, const FrameLayout&) { b[off] = std::byte{v}; };
  };
  const auto set_bth = [](std::size_t off, std::uint8_t v) {
    return [=](std::vector<std::byte>& b, const FrameLayout& l) { b[l.bth_offset + off] = std::byte{v}; };
  };
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv4, 8, set_byte(12, 0x88)), ParseError::NotIp);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv4, 8, set_byte(14, 0x65)), ParseError::BadIpVersion);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv4, 8, set_byte(14, 0x44)), ParseError::BadIhl);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv4, 8, set_byte(14 + 9, 6)), ParseError::NotUdp);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv4, 8, set_byte(14 + 6, 0x20)), ParseError::IpFragment);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv4, 8, set_byte(34 + 3, 0xB8)), ParseError::NotRoceV2Port);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv4, 8, set_byte(14 + 3, 0xFF)), ParseError::IpLengthMismatch);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv4, 8, set_byte(34 + 5, 0x01)), ParseError::UdpLengthMismatch);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv6, 8, set_byte(14, 0x45)), ParseError::BadIpVersion);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv6, 8, set_byte(14 + 6, 0x3A)), ParseError::NotUdp);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv6, 8, set_byte(14 + 5, 0xFF)), ParseError::IpLengthMismatch);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv4, 8, set_bth(0, 0x15)), ParseError::InvalidOpcode);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv4, 8, set_bth(0, 0x40)), ParseError::InvalidOpcode);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv4, 8, set_bth(1, 0x01)), ParseError::BadTver);
  // PadCnt 3 on a packet with no payload bytes at all.
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv4, 0, set_bth(1, 0x30)), ParseError::PadExceedsPayload);
  // An 8-byte SEND_ONLY relabelled ACK: the AETH takes 4 bytes, 4 payload bytes remain.
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv4, 8, set_bth(0, 0x11)), ParseError::UnexpectedPayload);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::RoceV2Ipv4, 8, set_bth(0, 0x00)), ParseError::BadMtuPayload);
  EXPECT_EQ(parse_error_after(Opcode::RcSendFirst, L::RoceV2Ipv4, 256, set_bth(1, 0x10)), ParseError::BadMtuPayload);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::IbLocal, 8, set_byte(0, 0x11)), ParseError::BadLver);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::IbLocal, 8, set_byte(1, 0x01)), ParseError::NotIbaTransport);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::IbLocal, 8, set_byte(5, 0xFF)), ParseError::LrhLengthMismatch);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::IbGlobal, 8, set_byte(8 + 6, 0x11)), ParseError::BadGrh);
  EXPECT_EQ(parse_error_after(Opcode::RcSendOnly, L::IbGlobal, 8, set_byte(8 + 5, 0x00)), ParseError::GrhLengthMismatch);
  for (unsigned e = 0; e <= static_cast<unsigned>(ParseError::PayloadTooLong); ++e)
    EXPECT_FALSE(to_string(static_cast<ParseError>(e)).empty());
}

// A WRITE ONLY whose RETH asks for another length than it carries is well
// formed: answering it (an Invalid Request NAK) is the responder's business,
// and the parse gives it both lengths.
TEST(ParseErrors, WriteOnlyWithAnotherDmaLengthParses) {
  PacketFields f = sample_fields(Opcode::RcRdmaWriteOnly, {LinkKind::RoceV2Ipv4, false}, 8);
  f.reth->dma_length = 9;
  const auto frame = sample_frame(f);
  const auto r = parse(frame, LinkType::Ethernet);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->fields.reth->dma_length, 9u);
  EXPECT_EQ(r->fields.payload_length, 8u);
}

TEST(ParseErrors, PayloadNotAlignedAndTooLong) {
  // A 12-byte SEND_ONLY with one payload byte removed and the IP/UDP lengths
  // fixed up: 11 bytes with PadCnt 0. (IB lengths are in words: RoCE only.)
  PacketFields g = sample_fields(Opcode::RcSendOnly, {LinkKind::RoceV2Ipv4, false}, 12);
  auto r = sample_frame(g);
  r.erase(r.begin() + 14 + 20 + 8 + 12);  // drop one payload byte
  store_be16(r.data() + 14 + 2, static_cast<std::uint16_t>(load_be16(r.data() + 14 + 2) - 1));
  store_be16(r.data() + 34 + 4, static_cast<std::uint16_t>(load_be16(r.data() + 34 + 4) - 1));
  EXPECT_EQ(parse(r, LinkType::Ethernet).error(), ParseError::PayloadNotAligned);

  PacketFields big = sample_fields(Opcode::RcSendOnly, {LinkKind::RoceV2Ipv4, false}, 4100);
  auto bf = sample_frame(big);
  ASSERT_FALSE(bf.empty());
  EXPECT_EQ(parse(bf, LinkType::Ethernet).error(), ParseError::PayloadTooLong);
}

TEST(BuildErrors, Typed) {
  const testing::LinkVariant v4{LinkKind::RoceV2Ipv4, false};
  std::vector<std::byte> out(9000);
  PacketFields f = sample_fields(Opcode::RcRdmaWriteOnly, v4);
  f.reth.reset();
  EXPECT_EQ(write_headers(f, out).error(), BuildError::MissingHeader);
  f = sample_fields(Opcode::RcSendOnly, v4);
  f.imm = 1;
  EXPECT_EQ(write_headers(f, out).error(), BuildError::UnexpectedHeader);
  f = sample_fields(Opcode::RcAcknowledge, v4);
  f.payload_length = 4;
  EXPECT_EQ(write_headers(f, out).error(), BuildError::UnexpectedPayload);
  f = sample_fields(Opcode::RcSendOnly, v4, 13);
  f.pad_count = 0;
  EXPECT_EQ(write_headers(f, out).error(), BuildError::PadCountMismatch);
  f = sample_fields(Opcode::RcSendOnly, v4);
  f.tver = 16;  // 4 bits
  EXPECT_EQ(write_headers(f, out).error(), BuildError::FieldOutOfRange);
  f = sample_fields(Opcode::RcSendOnly, {LinkKind::IbGlobal, false});
  f.lrh_lnh = 2;
  EXPECT_EQ(write_headers(f, out).error(), BuildError::LnhMismatch);
  f = sample_fields(Opcode::RcSendOnly, {LinkKind::IbLocal, false}, 8200);
  EXPECT_EQ(write_headers(f, out).error(), BuildError::PacketTooLong);
  f = sample_fields(Opcode::RcSendOnly, v4);
  EXPECT_EQ(write_headers(f, std::span<std::byte>(out).first(frame_length(f) - 1)).error(), BuildError::BufferTooSmall);
  EXPECT_EQ(build(f, {}, out).error(), BuildError::PayloadSizeMismatch);
  f.opcode = static_cast<Opcode>(0x15);
  EXPECT_EQ(write_headers(f, out).error(), BuildError::InvalidOpcode);
}


TEST(DeferredSeal, SealWithoutCrcThenCompleteEqualsSeal) {
  // For every opcode over every link: write_headers + payload + seal_without_crc +
  // complete_seal gives the bytes build() gives, whatever the buffer held before.
  int checked = 0;
  for (const auto& lv : all_link_variants()) {
    for (Opcode op : all_valid_opcodes()) {
      SCOPED_TRACE(std::string(to_string(op)) + " over " + lv.name());
      const PacketFields f = sample_fields(op, lv);
      const auto expected = sample_frame(f, static_cast<std::uint8_t>(op));
      const auto payload = sample_payload(f.payload_length, static_cast<std::uint8_t>(op));
      std::vector<std::byte> out(expected.size(), std::byte{0xA5});  // stale bytes, as in a reused buffer
      const auto l = write_headers(f, out);
      ASSERT_TRUE(l);
      if (!payload.empty()) std::memcpy(out.data() + l->payload_offset, payload.data(), payload.size());
      seal_without_crc(out, *l);
      // Everything but the CRC fields (and the IPv6 UDP checksum) is final already.
      const auto r = parse(out, link_type_of(lv.link));
      ASSERT_TRUE(r) << to_string(r.error());
      EXPECT_EQ(r->fields, f);
      EXPECT_TRUE(ipv4_checksum_ok(out, *r));
      for (std::size_t i = 0; i < l->icrc_offset; ++i) {
        const bool udp_checksum = f.link == LinkKind::RoceV2Ipv6 && i >= std::size_t{l->l3_offset} + 40 + 6 &&
                                  i < std::size_t{l->l3_offset} + 40 + 8;
        if (!udp_checksum) {
          ASSERT_EQ(out[i], expected[i]) << "byte " << i;
        }
      }
      ASSERT_TRUE(complete_seal(out, link_type_of(lv.link)));
      EXPECT_EQ(out, expected);
      // Completing twice changes nothing.
      ASSERT_TRUE(complete_seal(out, link_type_of(lv.link)));
      EXPECT_EQ(out, expected);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6 * 38);
}

TEST(DeferredSeal, SealerFunctionsMatchTheLinkType) {
  for (const auto& lv : all_link_variants()) {
    SCOPED_TRACE(lv.name());
    const PacketFields f = sample_fields(Opcode::RcRdmaWriteMiddle, lv);
    auto frame = sample_frame(f, 7);
    const auto expected = frame;
    const auto r = parse(frame, link_type_of(lv.link));
    ASSERT_TRUE(r);
    std::memset(frame.data() + r->layout.icrc_offset, 0, frame.size() - r->layout.icrc_offset);  // CRCs gone
    (is_roce(lv.link) ? complete_seal_ethernet : complete_seal_infiniband)(frame);
    EXPECT_EQ(frame, expected);
  }
  // A frame that does not parse is left as it is.
  std::vector<std::byte> junk(20, std::byte{0x11});
  const auto before = junk;
  EXPECT_FALSE(complete_seal(junk, LinkType::Ethernet));
  EXPECT_EQ(junk, before);
}

}  // namespace
}  // namespace rnicsim::packet
