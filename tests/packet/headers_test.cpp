// Golden-byte tests: every header's bytes written out by hand from its spec,
// then read through the view's getters and rebuilt through its setters.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "packet/bytes.hpp"
#include "packet/headers.hpp"

namespace rnicsim::packet {
namespace {

std::vector<std::byte> B(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int x : v) out.push_back(static_cast<std::byte>(x));
  return out;
}

TEST(Bytes, BigAndLittleEndian) {
  std::array<std::byte, 8> b{};
  store_be64(b.data(), 0x0102030405060708ull);
  EXPECT_EQ(b[0], std::byte{0x01});
  EXPECT_EQ(b[7], std::byte{0x08});
  EXPECT_EQ(load_be64(b.data()), 0x0102030405060708ull);
  EXPECT_EQ(load_be32(b.data() + 4), 0x05060708u);
  EXPECT_EQ(load_be24(b.data() + 1), 0x020304u);
  EXPECT_EQ(load_be16(b.data() + 6), 0x0708u);
  store_le32(b.data(), 0xAABBCCDD);
  EXPECT_EQ(b[0], std::byte{0xDD});
  EXPECT_EQ(load_le32(b.data()), 0xAABBCCDDu);
  const std::array<std::uint8_t, 3> u{0x12, 0x34, 0x56};
  EXPECT_EQ(load_be24(u.data()), 0x123456u);
}

TEST(Headers, TryViewChecksBounds) {
  std::vector<std::byte> buf(11);
  EXPECT_FALSE(try_view<ConstBth>(std::span<const std::byte>(buf)).has_value());
  buf.resize(12);
  EXPECT_TRUE(try_view<ConstBth>(std::span<const std::byte>(buf)).has_value());
  EXPECT_FALSE(try_view<ConstBth>(std::span<const std::byte>(buf), 1).has_value());
  EXPECT_FALSE(try_view<ConstBth>(std::span<const std::byte>(buf), 13).has_value());
}

TEST(Headers, EthernetGolden) {
  // dst 00:11:22:33:44:55, src 66:77:88:99:aa:bb, EtherType IPv4
  const auto g = B({0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0x08, 0x00});
  const ConstEthernet v{std::span<const std::byte>(g)};
  EXPECT_EQ(v.dst(), (MacAddr{0x00, 0x11, 0x22, 0x33, 0x44, 0x55}));
  EXPECT_EQ(v.src(), (MacAddr{0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB}));
  EXPECT_EQ(v.ether_type(), kEtherTypeIpv4);
  std::vector<std::byte> out(Ethernet::kSize);
  Ethernet w{std::span<std::byte>(out)};
  w.set_dst(v.dst());
  w.set_src(v.src());
  w.set_ether_type(0x0800);
  EXPECT_EQ(out, g);
}

TEST(Headers, VlanTagGolden) {
  // PCP 5, DEI 1, VID 0x123 -> TCI 101 1 000100100011 = 0xB123; inner EtherType IPv6
  const auto g = B({0xB1, 0x23, 0x86, 0xDD});
  const ConstVlanTag v{std::span<const std::byte>(g)};
  EXPECT_EQ(v.pcp(), 5);
  EXPECT_TRUE(v.dei());
  EXPECT_EQ(v.vid(), 0x123);
  EXPECT_EQ(v.ether_type(), kEtherTypeIpv6);
  std::vector<std::byte> out(VlanTag::kSize);
  VlanTag w{std::span<std::byte>(out)};
  w.set_pcp(5);
  w.set_dei(true);
  w.set_vid(0x123);
  w.set_ether_type(0x86DD);
  EXPECT_EQ(out, g);
  w.set_vid(0xFFF);  // must not touch PCP/DEI
  EXPECT_EQ(w.pcp(), 5);
  EXPECT_TRUE(w.dei());
}

TEST(Headers, Ipv4Golden) {
  // 0x45: version 4, IHL 5; TOS 0xB9 = DSCP 46 (EF) << 2 | ECN 1; total length 84;
  // id 0xABCD; flags DF, offset 0; TTL 64; UDP; checksum 0xBEEF;
  // 192.168.1.10 -> 10.0.0.1
  const auto g = B({0x45, 0xB9, 0x00, 0x54, 0xAB, 0xCD, 0x40, 0x00, 0x40, 0x11, 0xBE, 0xEF,
                    0xC0, 0xA8, 0x01, 0x0A, 0x0A, 0x00, 0x00, 0x01});
  const ConstIpv4 v{std::span<const std::byte>(g)};
  EXPECT_EQ(v.version(), 4);
  EXPECT_EQ(v.ihl(), 5);
  EXPECT_EQ(v.dscp(), 46);
  EXPECT_EQ(v.ecn(), 1);
  EXPECT_EQ(v.tos(), 0xB9);
  EXPECT_EQ(v.total_length(), 84);
  EXPECT_EQ(v.identification(), 0xABCD);
  EXPECT_EQ(v.flags(), 0x2);
  EXPECT_TRUE(v.dont_fragment());
  EXPECT_FALSE(v.more_fragments());
  EXPECT_EQ(v.fragment_offset(), 0);
  EXPECT_EQ(v.ttl(), 64);
  EXPECT_EQ(v.protocol(), 17);
  EXPECT_EQ(v.header_checksum(), 0xBEEF);
  EXPECT_EQ(v.src(), 0xC0A8010Au);
  EXPECT_EQ(v.dst(), 0x0A000001u);
  std::vector<std::byte> out(Ipv4::kSize);
  Ipv4 w{std::span<std::byte>(out)};
  w.set_version(4);
  w.set_ihl(5);
  w.set_dscp(46);
  w.set_ecn(1);
  w.set_total_length(84);
  w.set_identification(0xABCD);
  w.set_flags(0x2);
  w.set_fragment_offset(0);
  w.set_ttl(64);
  w.set_protocol(17);
  w.set_header_checksum(0xBEEF);
  w.set_src(0xC0A8010A);
  w.set_dst(0x0A000001);
  EXPECT_EQ(out, g);
  // MF + fragment offset 0x123: bytes 6..7 = 001 0000100100011 = 0x2123
  w.set_flags(0x1);
  w.set_fragment_offset(0x123);
  EXPECT_EQ(out[6], std::byte{0x21});
  EXPECT_EQ(out[7], std::byte{0x23});
  EXPECT_TRUE(w.more_fragments());
}

TEST(Headers, Ipv6Golden) {
  // version 6, traffic class 0xB9, flow label 0xABCDE -> 0x6B9ABCDE; payload 256;
  // next header UDP; hop limit 64; 2001:db8::1 -> 2001:db8::2
  const auto g = B({0x6B, 0x9A, 0xBC, 0xDE, 0x01, 0x00, 0x11, 0x40,
                    0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
                    0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02});
  const Ipv6Addr a1{0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  const Ipv6Addr a2{0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  const ConstIpv6 v{std::span<const std::byte>(g)};
  EXPECT_EQ(v.version(), 6);
  EXPECT_EQ(v.traffic_class(), 0xB9);
  EXPECT_EQ(v.dscp(), 46);
  EXPECT_EQ(v.ecn(), 1);
  EXPECT_EQ(v.flow_label(), 0xABCDEu);
  EXPECT_EQ(v.payload_length(), 256);
  EXPECT_EQ(v.next_header(), 17);
  EXPECT_EQ(v.hop_limit(), 64);
  EXPECT_EQ(v.src(), a1);
  EXPECT_EQ(v.dst(), a2);
  std::vector<std::byte> out(Ipv6::kSize);
  Ipv6 w{std::span<std::byte>(out)};
  w.set_version(6);
  w.set_dscp(46);
  w.set_ecn(1);
  w.set_flow_label(0xABCDE);
  w.set_payload_length(256);
  w.set_next_header(17);
  w.set_hop_limit(64);
  w.set_src(a1);
  w.set_dst(a2);
  EXPECT_EQ(out, g);
  w.set_traffic_class(0x00);
  EXPECT_EQ(w.version(), 6);
  EXPECT_EQ(w.flow_label(), 0xABCDEu);
}

TEST(Headers, UdpGolden) {
  const auto g = B({0xC0, 0x00, 0x12, 0xB7, 0x00, 0x20, 0x12, 0x34});
  const ConstUdp v{std::span<const std::byte>(g)};
  EXPECT_EQ(v.src_port(), 0xC000);
  EXPECT_EQ(v.dst_port(), kRoceV2Port);
  EXPECT_EQ(v.length(), 32);
  EXPECT_EQ(v.checksum(), 0x1234);
  std::vector<std::byte> out(Udp::kSize);
  Udp w{std::span<std::byte>(out)};
  w.set_src_port(0xC000);
  w.set_dst_port(4791);
  w.set_length(32);
  w.set_checksum(0x1234);
  EXPECT_EQ(out, g);
}

TEST(Headers, LrhGolden) {
  // VL 0xA, LVer 0 | SL 5, resv 0, LNH 3 | DLID 0x1234 | resv5 0, PktLen 0x123 | SLID 0xABCD
  const auto g = B({0xA0, 0x53, 0x12, 0x34, 0x01, 0x23, 0xAB, 0xCD});
  const ConstLrh v{std::span<const std::byte>(g)};
  EXPECT_EQ(v.vl(), 0xA);
  EXPECT_EQ(v.lver(), 0);
  EXPECT_EQ(v.sl(), 5);
  EXPECT_EQ(v.resv2(), 0);
  EXPECT_EQ(v.lnh(), 3);
  EXPECT_EQ(v.dlid(), 0x1234);
  EXPECT_EQ(v.resv5(), 0);
  EXPECT_EQ(v.pkt_len(), 0x123);
  EXPECT_EQ(v.slid(), 0xABCD);
  std::vector<std::byte> out(Lrh::kSize);
  Lrh w{std::span<std::byte>(out)};
  w.set_vl(0xA);
  w.set_lver(0);
  w.set_sl(5);
  w.set_lnh(3);
  w.set_dlid(0x1234);
  w.set_pkt_len(0x123);
  w.set_slid(0xABCD);
  EXPECT_EQ(out, g);
  w.set_resv5(0x1F);  // reserved bits sit above PktLen
  EXPECT_EQ(out[4], std::byte{0xF9});
  EXPECT_EQ(w.pkt_len(), 0x123);
}

TEST(Headers, GrhGolden) {
  // IPVer 6, TClass 0x12, FlowLabel 0x34567 -> 0x61234567; PayLen 0x100; NxtHdr 0x1B;
  // HopLmt 0xFF; SGID fe80::1; DGID fe80::2
  const auto g = B({0x61, 0x23, 0x45, 0x67, 0x01, 0x00, 0x1B, 0xFF,
                    0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
                    0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02});
  const Gid s{0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  const Gid d{0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  const ConstGrh v{std::span<const std::byte>(g)};
  EXPECT_EQ(v.ipver(), 6);
  EXPECT_EQ(v.tclass(), 0x12);
  EXPECT_EQ(v.flow_label(), 0x34567u);
  EXPECT_EQ(v.paylen(), 0x100);
  EXPECT_EQ(v.nxthdr(), kGrhNextHeaderIba);
  EXPECT_EQ(v.hoplmt(), 0xFF);
  EXPECT_EQ(v.sgid(), s);
  EXPECT_EQ(v.dgid(), d);
  std::vector<std::byte> out(Grh::kSize);
  Grh w{std::span<std::byte>(out)};
  w.set_ipver(6);
  w.set_tclass(0x12);
  w.set_flow_label(0x34567);
  w.set_paylen(0x100);
  w.set_nxthdr(0x1B);
  w.set_hoplmt(0xFF);
  w.set_sgid(s);
  w.set_dgid(d);
  EXPECT_EQ(out, g);
}

TEST(Headers, BthGolden) {
  // OpCode 0x0B | SE 1, M 0, PadCnt 2, TVer 0 = 1010 0000 | P_Key 0xFFFF |
  // FECN 1, BECN 0, resv6 0 = 0x80 | DestQP 0x123456 | A 1, resv7 0 = 0x80 | PSN 0xABCDEF
  const auto g = B({0x0B, 0xA0, 0xFF, 0xFF, 0x80, 0x12, 0x34, 0x56, 0x80, 0xAB, 0xCD, 0xEF});
  const ConstBth v{std::span<const std::byte>(g)};
  EXPECT_EQ(v.opcode(), 0x0B);
  EXPECT_TRUE(v.se());
  EXPECT_FALSE(v.mig_req());
  EXPECT_EQ(v.pad_count(), 2);
  EXPECT_EQ(v.tver(), 0);
  EXPECT_EQ(v.pkey(), 0xFFFF);
  EXPECT_EQ(v.resv8a(), 0x80);
  EXPECT_TRUE(v.fecn());
  EXPECT_FALSE(v.becn());
  EXPECT_EQ(v.dest_qp().value(), 0x123456u);
  EXPECT_TRUE(v.ack_req());
  EXPECT_EQ(v.resv7(), 0);
  EXPECT_EQ(v.psn().value(), 0xABCDEFu);
  std::vector<std::byte> out(Bth::kSize);
  Bth w{std::span<std::byte>(out)};
  w.set_opcode(0x0B);
  w.set_se(true);
  w.set_mig_req(false);
  w.set_pad_count(2);
  w.set_tver(0);
  w.set_pkey(0xFFFF);
  w.set_fecn(true);
  w.set_becn(false);
  w.set_dest_qp(packet::Qpn(0x123456));
  w.set_ack_req(true);
  w.set_psn(packet::Psn(0xABCDEF));
  EXPECT_EQ(out, g);
  // M and BECN are the next bits down.
  w.set_mig_req(true);
  w.set_becn(true);
  EXPECT_EQ(out[1], std::byte{0xE0});
  EXPECT_EQ(out[4], std::byte{0xC0});
  w.set_dest_qp(packet::Qpn(0xFFFFFFFF));  // 24 bits only: the resv8a byte is untouched
  EXPECT_EQ(out[4], std::byte{0xC0});
  EXPECT_EQ(w.dest_qp().value(), 0xFFFFFFu);
}

TEST(Headers, RethGolden) {
  const auto g = B({0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x00, 0x10, 0x00});
  const ConstReth v{std::span<const std::byte>(g)};
  EXPECT_EQ(v.va(), 0x0123456789ABCDEFull);
  EXPECT_EQ(v.rkey().value(), 0xDEADBEEFu);
  EXPECT_EQ(v.dma_length(), 4096u);
  std::vector<std::byte> out(Reth::kSize);
  Reth w{std::span<std::byte>(out)};
  w.set_va(0x0123456789ABCDEFull);
  w.set_rkey(packet::Rkey(0xDEADBEEF));
  w.set_dma_length(4096);
  EXPECT_EQ(out, g);
}

TEST(Headers, AethGolden) {
  // Syndrome 0x60 (NAK, code 0: PSN sequence error), MSN 0x0A0B0C
  const auto g = B({0x60, 0x0A, 0x0B, 0x0C});
  const ConstAeth v{std::span<const std::byte>(g)};
  EXPECT_EQ(v.syndrome(), 0x60);
  EXPECT_EQ(v.msn(), 0x0A0B0Cu);
  std::vector<std::byte> out(Aeth::kSize);
  Aeth w{std::span<std::byte>(out)};
  w.set_syndrome(0x60);
  w.set_msn(0x0A0B0C);
  EXPECT_EQ(out, g);
}

TEST(Headers, AtomicEthGolden) {
  const auto g = B({0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC,
                    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                    0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18});
  const ConstAtomicEth v{std::span<const std::byte>(g)};
  EXPECT_EQ(v.va(), 0x1122334455667788ull);
  EXPECT_EQ(v.rkey().value(), 0x99AABBCCu);
  EXPECT_EQ(v.swap_add(), 0x0102030405060708ull);
  EXPECT_EQ(v.compare(), 0x1112131415161718ull);
  std::vector<std::byte> out(AtomicEth::kSize);
  AtomicEth w{std::span<std::byte>(out)};
  w.set_va(0x1122334455667788ull);
  w.set_rkey(packet::Rkey(0x99AABBCC));
  w.set_swap_add(0x0102030405060708ull);
  w.set_compare(0x1112131415161718ull);
  EXPECT_EQ(out, g);
}

TEST(Headers, AtomicAckEthGolden) {
  const auto g = B({0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10});
  const ConstAtomicAckEth v{std::span<const std::byte>(g)};
  EXPECT_EQ(v.orig_remote_data(), 0xFEDCBA9876543210ull);
  std::vector<std::byte> out(AtomicAckEth::kSize);
  AtomicAckEth{std::span<std::byte>(out)}.set_orig_remote_data(0xFEDCBA9876543210ull);
  EXPECT_EQ(out, g);
}

TEST(Headers, ImmDtGolden) {
  const auto g = B({0x01, 0x02, 0x03, 0x04});
  EXPECT_EQ(ConstImmDt{std::span<const std::byte>(g)}.imm(), 0x01020304u);
  std::vector<std::byte> out(ImmDt::kSize);
  ImmDt{std::span<std::byte>(out)}.set_imm(0x01020304);
  EXPECT_EQ(out, g);
}

TEST(Headers, IethGolden) {
  const auto g = B({0xCA, 0xFE, 0xBA, 0xBE});
  EXPECT_EQ(ConstIeth{std::span<const std::byte>(g)}.rkey().value(), 0xCAFEBABEu);
  std::vector<std::byte> out(Ieth::kSize);
  Ieth{std::span<std::byte>(out)}.set_rkey(packet::Rkey(0xCAFEBABE));
  EXPECT_EQ(out, g);
}

TEST(Headers, DethGolden) {
  // Q_Key 0x80010000 | reserved 0 | SrcQP 0x000ABC
  const auto g = B({0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x0A, 0xBC});
  const ConstDeth v{std::span<const std::byte>(g)};
  EXPECT_EQ(v.qkey().value(), 0x80010000u);
  EXPECT_EQ(v.resv8(), 0);
  EXPECT_EQ(v.src_qp().value(), 0xABCu);
  std::vector<std::byte> out(Deth::kSize);
  Deth w{std::span<std::byte>(out)};
  w.set_qkey(packet::Qkey(0x80010000));
  w.set_src_qp(packet::Qpn(0xABC));
  EXPECT_EQ(out, g);
}

TEST(Headers, Ipv4Mapped) {
  const Ipv6Addr a = ipv4_mapped(0x0A000102);
  EXPECT_TRUE(is_ipv4_mapped(a));
  EXPECT_EQ(ipv4_of(a), 0x0A000102u);
  EXPECT_EQ(a[10], 0xFF);
  EXPECT_EQ(a[15], 0x02);
}

}  // namespace
}  // namespace rnicsim::packet
