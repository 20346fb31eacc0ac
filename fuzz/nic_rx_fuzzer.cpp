// Fuzzes what a NIC does with packets that arrive for its QPs, past parsing:
// the rx pipeline, the responder and the completer of a live RC QP pair, with
// work in flight both ways. Each input record becomes a well-formed frame (so
// it reaches the transport), perhaps with a byte changed (frame_of). Checked:
// no crash, no sanitizer report, no endless loop (libFuzzer's -timeout) while
// the simulation runs a second past the last packet.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "nic_model/host_queues.hpp"
#include "packet/packet.hpp"
#include "tests/nic_model/nic_fixture.hpp"

namespace {

using namespace rnicsim;
using namespace rnicsim::nictest;

constexpr std::size_t kRecord = 24;
constexpr std::size_t kMaxRecords = 32;

std::uint32_t le(const std::uint8_t* p, int n) {
  std::uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

// The frame record `r` describes, or an empty vector when the opcode cannot be built.
// A 24-byte record as a frame aimed at the pair's QPs (x on host a, y on
// host b; y has receive WQEs posted, x a WRITE, a READ and a SEND in flight),
// perhaps with a byte changed afterwards, sealed again or not:
//   0      BTH opcode
//   1      bit 0: to x (else to y); bit 1: AckReq; bit 2: solicited; bit 3: change
//          a byte; bit 4: seal again after the change; bit 5: FECN; bits 6-7: ECN
//   2..4   PSN (24 bits)
//   5..6   payload length (at most 4096)
//   7      bit 0: RKey from bytes 8..11, else the peer region's; bit 1: QPN
//          from bytes 8..10, else the pair's
//   8..11  RKey (or QPN, or ImmDt, or the atomic operands)
//   12..15 remote address, as an offset from the peer region's start (signed)
//   16..19 RETH DMA length
//   20..21 the byte to change; 22 what to XOR it with
//   23     AETH syndrome
std::vector<std::byte> frame_of(const std::uint8_t* r, Endpoint& to, Endpoint& from) {
  using packet::Hdr;
  packet::PacketFields f;
  f.opcode = static_cast<packet::Opcode>(r[0]);
  const packet::OpcodeInfo& info = packet::opcode_info(f.opcode);
  if (!info.valid) return {};
  f.ack_req = (r[1] & 2) != 0;
  f.solicited = (r[1] & 4) != 0;
  f.fecn = (r[1] & 32) != 0;
  f.ecn = r[1] >> 6;
  f.psn = packet::Psn(le(r + 2, 3));
  f.payload_length = info.has(Hdr::Payload) ? le(r + 5, 2) % 4097 : 0;
  const std::uint32_t raw = le(r + 8, 4);
  f.dest_qp = (r[7] & 2) != 0 ? packet::Qpn(raw) : to.qpn;
  const packet::Rkey rkey = (r[7] & 1) != 0 ? packet::Rkey(raw) : to.mr.rkey;
  const std::uint64_t va = to.buffer + static_cast<std::int64_t>(static_cast<std::int32_t>(le(r + 12, 4)));
  if (info.has(Hdr::Reth)) f.reth = packet::RethFields{va, rkey, le(r + 16, 4)};
  if (info.has(Hdr::AtomicEth)) f.atomic_eth = packet::AtomicEthFields{va & ~7ull, rkey, raw, le(r + 16, 4)};
  if (info.has(Hdr::Aeth)) f.aeth = packet::AethFields{packet::Syndrome(r[23]), f.psn.value()};
  if (info.has(Hdr::AtomicAckEth)) f.atomic_ack_eth = packet::AtomicAckEthFields{raw};
  if (info.has(Hdr::ImmDt)) f.imm = raw;
  if (info.has(Hdr::Ieth)) f.ieth = packet::IethFields{rkey};
  if (info.has(Hdr::Deth)) f.deth = packet::DethFields{packet::Qkey(raw), from.qpn};
  f.ip_src = from.host().address.ip;
  f.ip_dst = to.host().address.ip;
  f.eth_src = from.host().address.mac;
  f.eth_dst = to.host().address.mac;
  packet::derive_fields(f);
  std::vector<std::byte> payload(f.payload_length, std::byte{0xA5});
  std::vector<std::byte> frame(packet::frame_length(f));
  if (!packet::build(f, payload, frame)) return {};
  if ((r[1] & 8) != 0) {
    frame[le(r + 20, 2) % frame.size()] ^= static_cast<std::byte>(r[22]);
    if ((r[1] & 16) != 0) (void)packet::complete_seal(frame, packet::LinkType::Ethernet);
  }
  return frame;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  TestBed bed;
  QpOptions options;
  options.buffer_size = 128 * 1024;  // (the default 2 MiB, zeroed for every input, would cost most of the time)
  auto [x, y] = bed.pair(options);
  for (int i = 0; i < 8; ++i) y->post_recv(y->recv_wqe(100 + i, 65536 + 4096 * i, 4096));
  x->post_send(x->write_wqe(1, 0, 8192, *y, 0));
  x->post_send(x->send_wqe(2, 0, 100));
  SendWqe read = x->write_wqe(3, 16384, 4096, *y, 4096);
  read.opcode = WrOpcode::RdmaRead;
  x->post_send(read);

  for (std::size_t n = 0; n < kMaxRecords && (n + 1) * kRecord <= size; ++n) {
    const std::uint8_t* r = data + n * kRecord;
    const bool to_x = (r[1] & 1) != 0;
    const std::vector<std::byte> bytes = frame_of(r, to_x ? *x : *y, to_x ? *y : *x);
    if (bytes.empty()) continue;
    fabric::Frame frame = bed.pool.acquire(bytes.size());
    std::memcpy(frame.bytes().data(), bytes.data(), bytes.size());
    (to_x ? bed.a() : bed.b()).nic->receive(std::move(frame));
    bed.run(sim::Duration::us(2));
  }
  bed.run(sim::Duration::s(1));
  return 0;
}
