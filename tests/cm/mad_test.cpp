// CM MAD codec: round trips of every message, golden bytes at the spec's
// offsets (from the MAD start), refusals, the RDMA CM IP header.
#include <gtest/gtest.h>

#include <vector>

#include "cm/mad.hpp"

namespace rnicsim::cm {
namespace {

using Wire = std::array<std::byte, kMadBytes>;

template <size_t N>
std::array<uint8_t, N> pattern(uint8_t seed) {
  std::array<uint8_t, N> a{};
  for (size_t i = 0; i < N; ++i) a[i] = static_cast<uint8_t>(seed + i * 13);
  return a;
}

uint8_t at(const Wire& w, size_t off) { return std::to_integer<uint8_t>(w[off]); }
uint64_t be(const Wire& w, size_t off, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | at(w, off + i);
  return v;
}

// Every field non-zero; packed fields at their maxima.
Req sample_req() {
  Req r;
  r.local_comm_id = 0x11223344;
  r.service_id = service_id(0x0106, 7174);
  r.local_ca_guid = 0x0002C903000A0B0CULL;
  r.local_qkey = packet::Qkey(0x89ABCDEF);
  r.local_qpn = packet::Qpn(0xFFFFFF);
  r.responder_resources = 0xA5;
  r.local_eecn = 0xABCDEF;
  r.initiator_depth = 0x5A;
  r.remote_eecn = 0x123456;
  r.remote_cm_response_timeout = 31;
  r.transport = Transport::Rd;
  r.end_to_end_flow_control = true;
  r.starting_psn = packet::Psn(0xFEDCBA);
  r.local_cm_response_timeout = 31;
  r.retry_count = 7;
  r.pkey = 0x8001;
  r.path_mtu = 15;
  r.rdc_exists = true;
  r.rnr_retry_count = 7;
  r.max_cm_retries = 15;
  r.srq = true;
  r.extended_transport = 7;
  r.primary.local_lid = 0x1234;
  r.primary.remote_lid = 0x5678;
  r.primary.local_gid = pattern<16>(1);
  r.primary.remote_gid = pattern<16>(2);
  r.primary.flow_label = 0xFFFFF;
  r.primary.rate = 63;
  r.primary.traffic_class = 0xB8;
  r.primary.hop_limit = 0x40;
  r.primary.sl = 15;
  r.primary.subnet_local = true;
  r.primary.local_ack_timeout = 31;
  r.private_data = pattern<kReqPrivate>(3);
  return r;
}

Mra sample_mra() { return {0x01020304, 0x05060708, 2, 31, pattern<kMraPrivate>(4)}; }
Rej sample_rej() { return {0x0A0B0C0D, 0x0E0F1011, 3, 127, kRejConsumerReject, pattern<kRejAriBytes>(5), pattern<kRejPrivate>(6)}; }
Rep sample_rep() {
  return {0x21222324, 0x25262728, packet::Qkey(0x01234567), packet::Qpn(0xFFFFFF), 0xABCDEF, packet::Psn(0xFFFFFE), 0xC3, 0x3C, 31, 3, true, 7, true,
          0x0002C903000D0E0FULL, pattern<kRepPrivate>(7)};
}
Rtu sample_rtu() { return {0x31323334, 0x35363738, pattern<kRtuPrivate>(8)}; }
Dreq sample_dreq() { return {0x41424344, 0x45464748, packet::Qpn(0xFFFFFF), pattern<kDreqPrivate>(9)}; }
Drep sample_drep() { return {0x51525354, 0x55565758, pattern<kDrepPrivate>(10)}; }
SidrReq sample_sidr_req() { return {0x61626364, 0x7FFF, service_id(0x0111, 4791), pattern<kSidrReqPrivate>(11)}; }
SidrRep sample_sidr_rep() {
  return {0x71727374, 0xFF, 0x48, packet::Qpn(0xFFFFFF), service_id(0x0111, 4791), packet::Qkey(0x01234567), pattern<72>(12),
          pattern<kSidrRepPrivate>(13)};
}

std::vector<Message> every_message() {
  return {sample_req(), sample_mra(),  sample_rej(),      sample_rep(),     sample_rtu(),
          sample_dreq(), sample_drep(), sample_sidr_req(), sample_sidr_rep()};
}

TEST(CmMad, EveryMessageRoundTrips) {
  uint64_t tid = 0x0123456789ABCDEFULL;
  for (const Message& m : every_message()) {
    SCOPED_TRACE(m.index());
    const Mad in{tid++, 0x8001, m};
    const Wire w = encode(in);
    const auto out = decode(w);
    ASSERT_TRUE(out);
    EXPECT_TRUE(*out == in);  // every field
    EXPECT_EQ(encode(*out), w);
  }
}

// Packed fields at 1 beside booleans at false: a field that strayed onto a
// neighbour's bits would come back changed (at their maxima it might not).
TEST(CmMad, PackedFieldsAtOneRoundTrip) {
  Req r;
  r.remote_cm_response_timeout = r.local_cm_response_timeout = 1;
  r.transport = Transport::Uc;
  r.retry_count = r.path_mtu = r.rnr_retry_count = r.max_cm_retries = r.extended_transport = 1;
  r.primary.flow_label = 1;
  r.primary.rate = r.primary.sl = r.primary.local_ack_timeout = 1;
  Rep p;
  p.target_ack_delay = p.failover_accepted = p.rnr_retry_count = 1;
  const Mra m{0, 0, 1, 1, {}};
  const Rej j{0, 0, 1, 1, 0, {}, {}};
  for (const Message& msg : {Message{r}, Message{p}, Message{m}, Message{j}}) {
    const Mad in{0, 0, msg};
    const auto out = decode(encode(in));
    ASSERT_TRUE(out);
    EXPECT_TRUE(*out == in) << msg.index();
  }
}

TEST(CmMad, DecodedFieldsEqualTheEncodedOnes) {
  const auto req = std::get<Req>(decode(encode(Mad{1, 0, sample_req()}))->message);
  const Req e = sample_req();
  EXPECT_EQ(req.local_comm_id, e.local_comm_id);
  EXPECT_EQ(req.service_id, e.service_id);
  EXPECT_EQ(req.local_ca_guid, e.local_ca_guid);
  EXPECT_EQ(req.local_qkey, e.local_qkey);
  EXPECT_EQ(req.local_qpn, packet::Qpn(0xFFFFFF));
  EXPECT_EQ(req.responder_resources, 0xA5);
  EXPECT_EQ(req.local_eecn, 0xABCDEFu);
  EXPECT_EQ(req.initiator_depth, 0x5A);
  EXPECT_EQ(req.remote_eecn, 0x123456u);
  EXPECT_EQ(req.remote_cm_response_timeout, 31);
  EXPECT_EQ(req.transport, Transport::Rd);
  EXPECT_TRUE(req.end_to_end_flow_control);
  EXPECT_EQ(req.starting_psn, packet::Psn(0xFEDCBA));
  EXPECT_EQ(req.local_cm_response_timeout, 31);
  EXPECT_EQ(req.retry_count, 7);
  EXPECT_EQ(req.pkey, 0x8001);
  EXPECT_EQ(req.path_mtu, 15);
  EXPECT_TRUE(req.rdc_exists);
  EXPECT_EQ(req.rnr_retry_count, 7);
  EXPECT_EQ(req.max_cm_retries, 15);
  EXPECT_TRUE(req.srq);
  EXPECT_EQ(req.extended_transport, 7);
  EXPECT_EQ(req.primary.local_lid, 0x1234);
  EXPECT_EQ(req.primary.remote_lid, 0x5678);
  EXPECT_EQ(req.primary.local_gid, e.primary.local_gid);
  EXPECT_EQ(req.primary.remote_gid, e.primary.remote_gid);
  EXPECT_EQ(req.primary.flow_label, 0xFFFFFu);
  EXPECT_EQ(req.primary.rate, 63);
  EXPECT_EQ(req.primary.traffic_class, 0xB8);
  EXPECT_EQ(req.primary.hop_limit, 0x40);
  EXPECT_EQ(req.primary.sl, 15);
  EXPECT_TRUE(req.primary.subnet_local);
  EXPECT_EQ(req.primary.local_ack_timeout, 31);
  EXPECT_EQ(req.private_data, e.private_data);

  const auto rep = std::get<Rep>(decode(encode(Mad{1, 0, sample_rep()}))->message);
  EXPECT_EQ(rep.local_qpn, packet::Qpn(0xFFFFFF));
  EXPECT_EQ(rep.starting_psn, packet::Psn(0xFFFFFE));
  EXPECT_EQ(rep.target_ack_delay, 31);
  EXPECT_EQ(rep.failover_accepted, 3);
  EXPECT_TRUE(rep.end_to_end_flow_control);
  EXPECT_EQ(rep.rnr_retry_count, 7);
  EXPECT_TRUE(rep.srq);
  EXPECT_EQ(rep.local_ca_guid, 0x0002C903000D0E0FULL);

  const auto rej = std::get<Rej>(decode(encode(Mad{1, 0, sample_rej()}))->message);
  EXPECT_EQ(rej.message_rejected, 3);
  EXPECT_EQ(rej.ari_length, 127);
  EXPECT_EQ(rej.reason, kRejConsumerReject);
  EXPECT_EQ(rej.ari, sample_rej().ari);

  const auto mra = std::get<Mra>(decode(encode(Mad{1, 0, sample_mra()}))->message);
  EXPECT_EQ(mra.message_mraed, 2);
  EXPECT_EQ(mra.service_timeout, 31);

  const auto sr = std::get<SidrRep>(decode(encode(Mad{1, 0, sample_sidr_rep()}))->message);
  EXPECT_EQ(sr.status, 0xFF);
  EXPECT_EQ(sr.add_info_length, 0x48);
  EXPECT_EQ(sr.qpn, packet::Qpn(0xFFFFFF));
  EXPECT_EQ(sr.qkey, packet::Qkey(0x01234567));
  EXPECT_EQ(sr.class_port_info, sample_sidr_rep().class_port_info);
}

TEST(CmMad, CommonHeader) {
  const Wire w = encode(Mad{0x0102030405060708ULL, 0xBEEF, sample_rtu()});
  EXPECT_EQ(at(w, 0), 1);     // base version
  EXPECT_EQ(at(w, 1), 0x07);  // management class CM
  EXPECT_EQ(at(w, 2), 2);     // class version
  EXPECT_EQ(at(w, 3), 0x03);  // method Send
  EXPECT_EQ(be(w, 4, 2), 0xBEEFu);
  EXPECT_EQ(be(w, 6, 2), 0u);  // class specific
  EXPECT_EQ(be(w, 8, 8), 0x0102030405060708ULL);
  EXPECT_EQ(be(w, 16, 2), 0x14u);  // RTU
  EXPECT_EQ(be(w, 18, 2), 0u);
  EXPECT_EQ(be(w, 20, 4), 0u);  // attribute modifier
}

TEST(CmMad, AttributeIds) {
  const uint16_t expected[] = {0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18};
  const auto all = every_message();
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(static_cast<uint16_t>(attribute_of(all[i])), expected[i]);
    EXPECT_EQ(be(encode(Mad{0, 0, all[i]}), 16, 2), expected[i]);
  }
}

TEST(CmMad, ReqBytesAtTheSpecOffsets) {
  const Wire w = encode(Mad{0, 0, sample_req()});
  EXPECT_EQ(be(w, 24, 4), 0x11223344u);
  EXPECT_EQ(be(w, 32, 8), 0x0000000001061C06ULL);  // RDMA_PS_TCP, port 7174
  EXPECT_EQ(be(w, 40, 8), 0x0002C903000A0B0CULL);
  EXPECT_EQ(be(w, 48, 4), 0u);  // reserved
  EXPECT_EQ(be(w, 52, 4), 0x89ABCDEFu);
  EXPECT_EQ(be(w, 56, 3), 0xFFFFFFu);  // local QPN, 24 bits
  EXPECT_EQ(at(w, 59), 0xA5);          // then responder resources
  EXPECT_EQ(be(w, 60, 3), 0xABCDEFu);
  EXPECT_EQ(at(w, 63), 0x5A);
  EXPECT_EQ(be(w, 64, 3), 0x123456u);
  EXPECT_EQ(at(w, 67), 0xFD);  // timeout 31 <<3 | RD (2) <<1 | e2e 1
  EXPECT_EQ(be(w, 68, 3), 0xFEDCBAu);
  EXPECT_EQ(at(w, 71), 0xFF);  // timeout 31 <<3 | retry 7
  EXPECT_EQ(be(w, 72, 2), 0x8001u);
  EXPECT_EQ(at(w, 74), 0xFF);  // MTU 15 | RDC | RNR 7
  EXPECT_EQ(at(w, 75), 0xFF);  // max retries 15 | SRQ | ext transport 7
  EXPECT_EQ(be(w, 76, 2), 0x1234u);
  EXPECT_EQ(be(w, 78, 2), 0x5678u);
  EXPECT_EQ(at(w, 80), pattern<16>(1)[0]);
  EXPECT_EQ(at(w, 96), pattern<16>(2)[0]);
  EXPECT_EQ(be(w, 112, 4), 0xFFFFF03Fu);  // flow label 20 bits, 6 reserved, rate 6 bits
  EXPECT_EQ(at(w, 116), 0xB8);
  EXPECT_EQ(at(w, 117), 0x40);
  EXPECT_EQ(at(w, 118), 0xF8);  // SL 15, subnet local, 3 reserved
  EXPECT_EQ(at(w, 119), 0xF8);  // ACK timeout 31, 3 reserved
  for (size_t i = 120; i < 164; ++i) EXPECT_EQ(at(w, i), 0) << "alternate path byte " << i;
  EXPECT_EQ(at(w, 164), pattern<kReqPrivate>(3)[0]);
  EXPECT_EQ(at(w, 255), pattern<kReqPrivate>(3)[kReqPrivate - 1]);
}

TEST(CmMad, PackedFieldsKeepToTheirBits) {
  Req r;  // every field 0 but one at a time
  r.pkey = 0;
  r.primary.local_lid = r.primary.remote_lid = 0;
  r.transport = Transport::Uc;
  Wire w = encode(Mad{0, 0, r});
  EXPECT_EQ(at(w, 67), 0x02);
  r.transport = Transport::Rc;
  r.local_qpn = packet::Qpn(0xFF123456);  // wider than 24 bits: only the low 24 go out
  w = encode(Mad{0, 0, r});
  EXPECT_EQ(be(w, 56, 4), 0x12345600u);
  EXPECT_EQ(at(w, 55), 0);
  r.local_qpn = packet::Qpn(0);
  r.primary.rate = 0xFF;  // 6 bits
  r.primary.flow_label = 0xFFFFFFFF;  // 20 bits
  w = encode(Mad{0, 0, r});
  EXPECT_EQ(be(w, 112, 4), 0xFFFFF03Fu);
  EXPECT_EQ(at(w, 116), 0);
}

TEST(CmMad, OtherMessagesAtTheSpecOffsets) {
  Wire w = encode(Mad{0, 0, sample_rep()});
  EXPECT_EQ(be(w, 28, 4), 0x25262728u);
  EXPECT_EQ(be(w, 32, 4), 0x01234567u);
  EXPECT_EQ(be(w, 36, 3), 0xFFFFFFu);
  EXPECT_EQ(at(w, 39), 0);
  EXPECT_EQ(be(w, 44, 3), 0xFFFFFEu);
  EXPECT_EQ(at(w, 48), 0xC3);
  EXPECT_EQ(at(w, 49), 0x3C);
  EXPECT_EQ(at(w, 50), 0xFF);  // ACK delay 31 | failover 3 | e2e
  EXPECT_EQ(at(w, 51), 0xF0);  // RNR 7 | SRQ | 4 reserved
  EXPECT_EQ(be(w, 52, 8), 0x0002C903000D0E0FULL);
  EXPECT_EQ(at(w, 60), pattern<kRepPrivate>(7)[0]);

  w = encode(Mad{0, 0, sample_rej()});
  EXPECT_EQ(at(w, 32), 0xC0);  // message rejected 3, 6 reserved
  EXPECT_EQ(at(w, 33), 0xFE);  // ARI length 127, 1 reserved
  EXPECT_EQ(be(w, 34, 2), 28u);
  EXPECT_EQ(at(w, 36), pattern<kRejAriBytes>(5)[0]);
  EXPECT_EQ(at(w, 108), pattern<kRejPrivate>(6)[0]);

  w = encode(Mad{0, 0, sample_mra()});
  EXPECT_EQ(at(w, 32), 0x80);  // REP MRAed (2) in the top two bits
  EXPECT_EQ(at(w, 33), 0xF8);
  EXPECT_EQ(at(w, 34), pattern<kMraPrivate>(4)[0]);

  w = encode(Mad{0, 0, sample_dreq()});
  EXPECT_EQ(be(w, 32, 4), 0xFFFFFF00u);
  EXPECT_EQ(at(w, 36), pattern<kDreqPrivate>(9)[0]);

  w = encode(Mad{0, 0, sample_rtu()});
  EXPECT_EQ(at(w, 32), pattern<kRtuPrivate>(8)[0]);
  w = encode(Mad{0, 0, sample_drep()});
  EXPECT_EQ(at(w, 32), pattern<kDrepPrivate>(10)[0]);

  w = encode(Mad{0, 0, sample_sidr_req()});
  EXPECT_EQ(be(w, 24, 4), 0x61626364u);
  EXPECT_EQ(be(w, 28, 2), 0x7FFFu);
  EXPECT_EQ(be(w, 32, 8), 0x00000000011112B7ULL);
  EXPECT_EQ(at(w, 40), pattern<kSidrReqPrivate>(11)[0]);

  w = encode(Mad{0, 0, sample_sidr_rep()});
  EXPECT_EQ(at(w, 28), 0xFF);
  EXPECT_EQ(at(w, 29), 0x48);
  EXPECT_EQ(be(w, 32, 4), 0xFFFFFF00u);
  EXPECT_EQ(be(w, 36, 8), 0x00000000011112B7ULL);
  EXPECT_EQ(be(w, 44, 4), 0x01234567u);  // Q_Key
  EXPECT_EQ(at(w, 48), pattern<72>(12)[0]);
  EXPECT_EQ(at(w, 120), pattern<kSidrRepPrivate>(13)[0]);
}

TEST(CmMad, DecodeRefuses) {
  const Wire good = encode(Mad{7, 0, sample_req()});
  ASSERT_TRUE(decode(good));
  const struct {
    size_t off;
    uint8_t value;
  } bad[] = {{0, 2}, {1, 0x81}, {2, 1}, {3, 0x83}, {16, 1}, {17, 0x19}, {17, 0x01}, {17, 0x1A}, {17, 0x0F}};
  for (const auto& b : bad) {
    Wire w = good;
    w[b.off] = std::byte(b.value);
    EXPECT_FALSE(decode(w)) << "byte " << b.off << " = " << int(b.value);
  }
  EXPECT_FALSE(decode(std::span(good).first(kMadBytes - 1)));
  EXPECT_FALSE(decode({}));
  std::vector<std::byte> longer(good.begin(), good.end());
  longer.resize(300, std::byte{0xEE});  // bytes after the MAD are not its business
  EXPECT_TRUE(decode(longer));
}

TEST(CmMad, ShortInputIsNeverRead) {
  // A 255-byte heap buffer: any read past it is a sanitizer error.
  const Wire good = encode(Mad{7, 0, sample_sidr_rep()});
  std::vector<std::byte> shortv(good.begin(), good.end() - 1);
  EXPECT_FALSE(decode(shortv));
}

TEST(CmMad, ServiceId) {
  EXPECT_EQ(service_id(0x0106, 7174), 0x0000000001061C06ULL);
  EXPECT_EQ(service_id(0x0111, 0xFFFF), 0x000000000111FFFFULL);
}

TEST(CmIpHeader, Ipv4RoundTripAndBytes) {
  IpHeader h;
  h.ip_version = 4;
  h.src_port = 0xC0DE;
  h.src_addr[12] = 10, h.src_addr[15] = 1;
  h.dst_addr[12] = 192, h.dst_addr[13] = 168, h.dst_addr[14] = 7, h.dst_addr[15] = 254;
  std::array<uint8_t, kIpHeaderBytes> b{};
  b.fill(0xEE);
  encode_ip_header(h, b);
  EXPECT_EQ(b[0], 0);     // CMA version
  EXPECT_EQ(b[1], 0x40);  // IP version in the high nibble
  EXPECT_EQ(b[2], 0xC0);
  EXPECT_EQ(b[3], 0xDE);
  for (size_t i = 4; i < 16; ++i) EXPECT_EQ(b[i], 0) << i;
  EXPECT_EQ(b[16], 10);
  EXPECT_EQ(b[19], 1);
  for (size_t i = 20; i < 32; ++i) EXPECT_EQ(b[i], 0) << i;
  EXPECT_EQ(b[32], 192);
  EXPECT_EQ(b[35], 254);
  const auto d = decode_ip_header(b);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->ip_version, 4);
  EXPECT_EQ(d->src_port, 0xC0DE);
  EXPECT_EQ(d->src_addr, h.src_addr);
  EXPECT_EQ(d->dst_addr, h.dst_addr);
}

TEST(CmIpHeader, Ipv4IgnoresTheFirstTwelveBytes) {
  IpHeader h;
  h.src_addr = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 1};  // ::ffff:10.0.0.1
  std::array<uint8_t, kIpHeaderBytes> b{};
  encode_ip_header(h, b);
  EXPECT_EQ(b[14], 0);
  EXPECT_EQ(b[15], 0);
  const auto d = decode_ip_header(b);
  ASSERT_TRUE(d);
  const std::array<uint8_t, 16> v4{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1};
  EXPECT_EQ(d->src_addr, v4);
}

TEST(CmIpHeader, Ipv6RoundTrip) {
  IpHeader h;
  h.ip_version = 6;
  h.src_port = 1;
  h.src_addr = pattern<16>(0xF0);
  h.dst_addr = pattern<16>(0x0F);
  std::array<uint8_t, kIpHeaderBytes> b{};
  encode_ip_header(h, b);
  EXPECT_EQ(b[1], 0x60);
  EXPECT_EQ(b[4], 0xF0);
  const auto d = decode_ip_header(b);
  ASSERT_TRUE(d);
  EXPECT_TRUE(*d == h);
}

TEST(CmIpHeader, InsideReqPrivateData) {
  Req r = sample_req();
  IpHeader h;
  h.src_port = 4242;
  h.src_addr[15] = 1;
  h.dst_addr[15] = 2;
  encode_ip_header(h, std::span(r.private_data).first<kIpHeaderBytes>());
  const Wire w = encode(Mad{0, 0, r});
  EXPECT_EQ(at(w, 164), 0);
  EXPECT_EQ(at(w, 165), 0x40);
  EXPECT_EQ(be(w, 166, 2), 4242u);
  EXPECT_EQ(at(w, 164 + 19), 1);
  EXPECT_EQ(at(w, 164 + 35), 2);
  const auto back = std::get<Req>(decode(w)->message);
  const auto d = decode_ip_header(std::span<const uint8_t>(back.private_data).first<kIpHeaderBytes>());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->src_port, 4242);
}

TEST(CmIpHeader, Refuses) {
  std::array<uint8_t, kIpHeaderBytes> b{};
  encode_ip_header(IpHeader{}, b);
  ASSERT_TRUE(decode_ip_header(b));
  auto v = b;
  v[0] = 1;  // CMA version
  EXPECT_FALSE(decode_ip_header(v));
  v = b;
  v[1] = 0x50;
  EXPECT_FALSE(decode_ip_header(v));
  v[1] = 0x00;
  EXPECT_FALSE(decode_ip_header(v));
}

}  // namespace
}  // namespace rnicsim::cm
