// Writes a RoCEv2 capture of one of each CM MAD between 10.0.0.1 and 10.0.0.2,
// each a UD SEND-only to QP1 built and sealed by the packet layer, for
// cm_tshark_check.sh (which knows the values below: keep the two in step).
//   usage: cm_pcap FILE.pcap
#include <pcap/pcap.h>

#include <cstdio>
#include <vector>

#include "cm/mad.hpp"
#include "packet/packet.hpp"

using namespace rnicsim;

namespace {

constexpr uint32_t kHostA = 0x0A000001, kHostB = 0x0A000002;  // 10.0.0.1, 10.0.0.2
constexpr uint16_t kPortSpaceTcp = 0x0106, kPortSpaceUdp = 0x0111, kPort = 7174;
constexpr uint32_t kReqQpn = 0x3F2A1B;  // the script checks this and the service ID
constexpr uint32_t kCommA = 0x1000A001, kCommB = 0x2000B002;

struct Sender {
  uint32_t ip;
  uint32_t psn = 0;
};

std::array<uint8_t, 16> v4_in_16(uint32_t ip) {
  std::array<uint8_t, 16> a{};
  for (int i = 0; i < 4; ++i) a[12 + i] = static_cast<uint8_t>(ip >> (24 - 8 * i));
  return a;
}

std::vector<std::byte> frame_of(Sender& from, uint32_t to, const cm::Mad& mad) {
  packet::PacketFields f;
  f.link = packet::LinkKind::RoceV2Ipv4;
  f.eth_src = {0x02, 0, 0, 0, 0, static_cast<uint8_t>(from.ip)};
  f.eth_dst = {0x02, 0, 0, 0, 0, static_cast<uint8_t>(to)};
  f.ip_src = packet::ipv4_mapped(from.ip);
  f.ip_dst = packet::ipv4_mapped(to);
  f.udp_src_port = 0xC001;
  f.opcode = packet::Opcode::UdSendOnly;
  f.pkey = cm::kDefaultPkey;
  f.dest_qp = cm::kGsiQpn;
  f.psn = packet::Psn(from.psn++);
  f.deth = packet::DethFields{cm::kGsiQkey, cm::kGsiQpn};
  f.payload_length = cm::kMadBytes;
  packet::derive_fields(f);
  const auto payload = cm::encode(mad);
  std::vector<std::byte> out(packet::frame_length(f));
  const auto n = packet::build(f, payload, out);
  if (!n) return {};
  out.resize(*n);
  return out;
}

cm::Req req() {
  cm::Req r;
  r.local_comm_id = kCommA;
  r.service_id = cm::service_id(kPortSpaceTcp, kPort);
  r.local_ca_guid = 0x0200000000000001ULL;
  r.local_qkey = packet::Qkey(0);
  r.local_qpn = packet::Qpn(kReqQpn);
  r.responder_resources = 16;
  r.initiator_depth = 16;
  r.remote_cm_response_timeout = 20;
  r.starting_psn = packet::Psn(0x5A5A5A);
  r.local_cm_response_timeout = 20;
  r.retry_count = 7;
  r.path_mtu = 5;  // 4096
  r.rnr_retry_count = 7;
  r.max_cm_retries = 15;
  r.primary.local_gid = packet::ipv4_mapped(kHostA);
  r.primary.remote_gid = packet::ipv4_mapped(kHostB);
  r.primary.flow_label = (0xC001 * 31 + 4791) & 0xFFFFF;
  r.primary.hop_limit = 64;
  r.primary.local_ack_timeout = 18;
  cm::IpHeader ip;
  ip.src_port = 0xC123;
  ip.src_addr = v4_in_16(kHostA);
  ip.dst_addr = v4_in_16(kHostB);
  cm::encode_ip_header(ip, std::span(r.private_data).first<cm::kIpHeaderBytes>());
  r.private_data[cm::kIpHeaderBytes] = 0x42;  // the user's first byte
  return r;
}

cm::Rep rep() {
  cm::Rep r;
  r.local_comm_id = kCommB;
  r.remote_comm_id = kCommA;
  r.local_qpn = packet::Qpn(0x000777);
  r.starting_psn = packet::Psn(0x123456);
  r.responder_resources = 16;
  r.initiator_depth = 16;
  r.target_ack_delay = 15;
  r.rnr_retry_count = 7;
  r.local_ca_guid = 0x0200000000000002ULL;
  return r;
}

cm::SidrReq sidr_req() {
  cm::SidrReq s;
  s.request_id = 0x0000C0DE;
  s.service_id = cm::service_id(kPortSpaceUdp, kPort);
  return s;
}

cm::SidrRep sidr_rep() {
  cm::SidrRep s;
  s.request_id = 0x0000C0DE;
  s.qpn = packet::Qpn(0x000888);
  s.service_id = cm::service_id(kPortSpaceUdp, kPort);
  s.qkey = packet::Qkey(0x01234567);  // RDMA_UDP_QKEY
  return s;
}

int write(const char* path, const std::vector<std::vector<std::byte>>& frames) {
  pcap_t* dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
  if (!dead) return 1;
  pcap_dumper_t* d = pcap_dump_open(dead, path);
  if (!d) {
    std::fprintf(stderr, "%s: %s\n", path, pcap_geterr(dead));
    pcap_close(dead);
    return 1;
  }
  unsigned n = 0;
  for (const auto& fr : frames) {
    pcap_pkthdr h{};
    h.ts.tv_sec = 1;
    h.ts.tv_usec = n++ * 1000;  // nanoseconds
    h.caplen = h.len = static_cast<bpf_u_int32>(fr.size());
    pcap_dump(reinterpret_cast<u_char*>(d), &h, reinterpret_cast<const u_char*>(fr.data()));
  }
  pcap_dump_close(d);
  pcap_close(dead);
  std::printf("%s: %u CM MADs\n", path, n);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FILE.pcap\n", argv[0]);
    return 2;
  }
  Sender a{kHostA}, b{kHostB};
  auto tid = [](uint32_t comm) { return (uint64_t{0x00000001} << 32) | comm; };
  const cm::Rej rej{kCommB, kCommA + 1, 0, 0, cm::kRejConsumerReject, {}, {}};
  const cm::Mra mra{kCommB, kCommA, 0, 18, {}};
  const std::vector<std::vector<std::byte>> frames = {
      frame_of(a, kHostB, {tid(kCommA), 0, req()}),
      frame_of(b, kHostA, {tid(kCommB), 0, mra}),
      frame_of(b, kHostA, {tid(kCommB), 0, rep()}),
      frame_of(a, kHostB, {tid(kCommA), 0, cm::Rtu{kCommA, kCommB, {}}}),
      frame_of(a, kHostB, {tid(kCommA), 0, cm::Dreq{kCommA, kCommB, packet::Qpn(0x000777), {}}}),
      frame_of(b, kHostA, {tid(kCommB), 0, cm::Drep{kCommB, kCommA, {}}}),
      frame_of(b, kHostA, {tid(kCommB), 0, rej}),
      frame_of(a, kHostB, {tid(0xC0DE), 0, sidr_req()}),
      frame_of(b, kHostA, {tid(0xC0DE), 0, sidr_rep()}),
  };
  for (const auto& fr : frames)
    if (fr.empty()) return 1;
  return write(argv[1], frames);
}
