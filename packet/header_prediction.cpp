#include "packet/header_prediction.hpp"

#include <cstring>

#include "packet/bytes.hpp"
#include "packet/headers.hpp"

namespace rnicsim::packet {
namespace {
std::uint64_t load_word(const std::byte* p, std::size_t n) noexcept {
  std::uint64_t w = 0;
  std::memcpy(&w, p, n);
  return w;
}
}  // namespace

bool HeaderPrediction::matches(const Entry& e, std::span<const std::byte> frame) const noexcept {
  const std::size_t n = e.header_bytes;
  const std::byte* p = frame.data();
  std::uint64_t diff = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) diff |= (load_word(p + i, 8) ^ e.bytes[i / 8]) & e.mask[i / 8];
  if (i < n) diff |= (load_word(p + i, n - i) ^ e.bytes[i / 8]) & e.mask[i / 8];
  return diff == 0;
}

void HeaderPrediction::keep(Entry& e, std::span<const std::byte> frame, LinkType link_type, std::size_t size,
                            bool read_crcs) noexcept {
  const ParsedPacket& p = *parsed_;
  const FrameLayout& l = p.layout;
  e.valid = false;
  if (l.payload_offset > kMaxHeaderBytes) return;
  std::array<std::byte, kMaxHeaderBytes> bytes{}, mask{};
  std::memcpy(bytes.data(), frame.data(), l.payload_offset);
  std::memset(mask.data(), 0xFF, l.payload_offset);
  const std::size_t b = l.bth_offset;
  mask[b + 1] &= std::byte{0x7F};  // SE
  for (std::size_t i = b + 8; i < b + kBthSize; ++i) mask[i] = std::byte{0};  // AckReq, reserved, PSN
  e.aeth_offset = 0;
  if (const OpcodeInfo& info = opcode_info(p.fields.opcode); info.has(Hdr::Aeth)) {
    e.aeth_offset = static_cast<std::uint16_t>(b + info.offset(Hdr::Aeth));
    for (std::size_t i = e.aeth_offset; i < e.aeth_offset + Aeth::kSize; ++i) mask[i] = std::byte{0};  // syndrome, MSN
  }
  if (is_roce(l.link)) {
    mask[b - 2] = mask[b - 1] = std::byte{0};  // UDP checksum
    if (l.link == LinkKind::RoceV2Ipv4) {
      const std::size_t ip = l.l3_offset;
      mask[ip + 4] = mask[ip + 5] = std::byte{0};    // identification
      mask[ip + 10] = mask[ip + 11] = std::byte{0};  // header checksum
    }
  }
  for (std::size_t w = 0; w < kWords; ++w) {
    std::memcpy(&e.bytes[w], bytes.data() + w * 8, 8);
    std::memcpy(&e.mask[w], mask.data() + w * 8, 8);
    e.bytes[w] &= e.mask[w];
  }
  e.link_type = link_type;
  e.read_crcs = read_crcs;
  e.frame_size = frame.size();
  e.size = size;
  e.header_bytes = l.payload_offset;
  e.packet = parsed_;
  e.valid = true;
}

const ParseResult<ParsedPacket>& HeaderPrediction::parse(std::span<const std::byte> frame, LinkType link_type,
                                                         std::size_t wire_length, bool read_crcs) noexcept {
  const std::size_t size = std::max(wire_length, frame.size());
  // The entry is picked by the destination QP where the last packet had its BTH;
  // the comparison covers the whole header, wherever this one's BTH is.
  const std::size_t guess = last_bth_offset_ + 7;
  Entry& e = entries_[guess < frame.size() ? load_u8(&frame[guess]) % kEntries : 0];
  if (e.valid && e.frame_size == frame.size() && e.size == size && e.link_type == link_type &&
      e.read_crcs == read_crcs && matches(e, frame)) {
    ParsedPacket& p = *e.packet;
    const FrameLayout& l = p.layout;
    const std::byte* bth = frame.data() + l.bth_offset;
    p.fields.solicited = (load_u8(&bth[1]) & 0x80) != 0;
    p.fields.ack_req = (load_u8(&bth[8]) & 0x80) != 0;
    p.fields.psn = Psn(load_be24(bth + 9));
    if (is_roce(l.link)) {
      p.udp_checksum = load_be16(bth - 2);
      if (l.link == LinkKind::RoceV2Ipv4) p.fields.ipv4_id = load_be16(frame.data() + l.l3_offset + 4);
    }
    if (e.aeth_offset != 0) {
      const ConstAeth aeth(frame.subspan(e.aeth_offset, Aeth::kSize));
      p.fields.aeth = AethFields{Syndrome(aeth.syndrome()), aeth.msn()};
    }
    p.payload = frame.subspan(l.payload_offset, p.payload.size());
    if (read_crcs && l.icrc_offset + kIcrcSize <= frame.size()) p.icrc = load_le32(frame.data() + l.icrc_offset);
    if (read_crcs && is_ib(l.link) && frame.size() >= l.frame_length)
      p.vcrc = load_le16(frame.data() + l.icrc_offset + kIcrcSize);
    ++predicted_;
    return e.packet;
  }
  packet::parse(frame, link_type, wire_length, read_crcs, parsed_);
  if (parsed_) {
    last_bth_offset_ = parsed_->layout.bth_offset;
    keep(entries_[parsed_->fields.dest_qp.value() % kEntries], frame, link_type, size, read_crcs);
  }
  return parsed_;
}

}  // namespace rnicsim::packet
