#include "lint/lint.hpp"

#include <arpa/inet.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <ostream>
#include <sstream>

#include "packet/erf.hpp"
#include "packet/icrc.hpp"
#include "packet/pfc.hpp"
#include "packet/syndrome.hpp"
#include "sim/output.hpp"

namespace rnicsim::lint {

using packet::Hdr;
using packet::LinkKind;
using packet::OpcodeInfo;
using packet::Operation;
using packet::ParseError;
using packet::Position;
using packet::Psn;

namespace {

constexpr int kLinktypeInfiniband = 247;
constexpr int kLinktypeErf = 197;  // ERF records; rnicsim's IB captures are of type InfiniBand

std::string hex(std::uint64_t v, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llx", width, static_cast<unsigned long long>(v));
  return buf;
}

std::string address(const packet::Ipv6Addr& a, bool lid) {
  if (lid) return "LID " + hex((a[14] << 8) | a[15], 4);
  char buf[INET6_ADDRSTRLEN] = {};
  if (packet::is_ipv4_mapped(a)) {
    inet_ntop(AF_INET, a.data() + 12, buf, sizeof buf);
  } else {
    inet_ntop(AF_INET6, a.data(), buf, sizeof buf);
  }
  return buf;
}

/// Frames that are simply not RoCEv2/IB transport packets: counted and skipped.
bool is_foreign(ParseError e) {
  return e == ParseError::NotIp || e == ParseError::NotUdp || e == ParseError::NotRoceV2Port ||
         e == ParseError::NotIbaTransport;
}

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

/// The stream a packet belongs to (see StreamKey).
StreamKey stream_key(const packet::PacketFields& f, const OpcodeInfo& info) {
  StreamKey key;
  if (packet::is_roce(f.link)) {
    key.src = f.ip_src;
    key.dst = f.ip_dst;
  } else if (f.link == LinkKind::IbGlobal) {
    key.src = f.sgid;
    key.dst = f.dgid;
  } else {
    key.lid = true;
    key.src[14] = static_cast<std::uint8_t>(f.slid >> 8);
    key.src[15] = static_cast<std::uint8_t>(f.slid);
    key.dst[14] = static_cast<std::uint8_t>(f.dlid >> 8);
    key.dst[15] = static_cast<std::uint8_t>(f.dlid);
  }
  key.dest_qp = f.dest_qp;
  key.kind = info.operation == Operation::Cnp ? StreamKind::Cnp
             : info.is_response()             ? StreamKind::Response
                                              : StreamKind::Request;
  if (f.deth) key.src_qp = f.deth->src_qp;
  return key;
}

void count_packet(StreamStats& st, const OpcodeInfo& info, const packet::PacketFields& f, std::size_t wire_bytes) {
  st.transport = info.transport;
  ++st.packets;
  st.bytes += wire_bytes;
  st.payload_bytes += f.payload_length;
  if (f.ecn == 3 || f.fecn) ++st.ecn_ce;
}

}  // namespace

std::string_view to_string(Severity s) noexcept {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Observation: return "observation";
  }
  return "?";
}

std::string describe(const StreamKey& k) {
  std::string s = address(k.src, k.lid) + " -> " + address(k.dst, k.lid) + " QPN " + hex(k.dest_qp.value(), 6);
  if (k.src_qp != packet::Qpn()) s += " from QPN " + hex(k.src_qp.value(), 6);
  switch (k.kind) {
    case StreamKind::Request: s += " requests"; break;
    case StreamKind::Response: s += " responses"; break;
    case StreamKind::Cnp: s += " CNPs"; break;
  }
  return s;
}

void Linter::add(std::uint64_t frame, FindingKind kind, std::string message, StreamStats* st) {
  const Severity s = info(kind).severity;
  switch (s) {
    case Severity::Error:
      ++report_.errors;
      if (st) ++st->errors;
      break;
    case Severity::Warning: ++report_.warnings; break;
    case Severity::Observation: ++report_.observations; break;
  }
  Finding f{frame, s, std::move(message), kind, std::nullopt, std::nullopt};
  if (packet_) f.qp = packet_->qp, f.psn = packet_->psn;
  report_.findings.push_back(std::move(f));
}

void Linter::note(std::uint64_t frame_number, std::string message) {
  packet_.reset();
  add(frame_number, FindingKind::Capture, std::move(message));
}

void Linter::check_mac_control(std::uint64_t frame, std::span<const std::byte> data) {
  if (data.size() < 16 || packet::load_be16(data.data() + 14) != packet::kMacControlOpcodePfc) {
    ++report_.skipped;  // PAUSE (802.3x) or another MAC control opcode
    return;
  }
  if (data.size() < packet::Ethernet::kSize + packet::ConstPfcBody::kSize) {
    add(frame, FindingKind::PfcMalformed, "PFC frame of " + std::to_string(data.size()) + " bytes, shorter than its 34-byte header");
    return;
  }
  const packet::ConstEthernet eth(data);
  const packet::ConstPfcBody body(data.subspan(packet::Ethernet::kSize));
  if (eth.dst() != packet::kPfcDestination) add(frame, FindingKind::PfcMalformed, "PFC frame not sent to 01:80:c2:00:00:01");
  if (body.enable_vector() > 0xFF)
    add(frame, FindingKind::PfcMalformed, "PFC frame with reserved bits of the priority-enable vector set (" +
                                    hex(body.enable_vector(), 4) + ")");
  if ((body.enable_vector() & 0xFF) == 0) add(frame, FindingKind::PfcNoPriority, "PFC frame that enables no priority");
  ++report_.pfc.frames;
  for (unsigned p = 0; p < 8; ++p) {
    if (!((body.enable_vector() >> p) & 1)) continue;
    if (body.quanta(p) == 0) {
      ++report_.pfc.xons[p];
    } else {
      ++report_.pfc.pauses[p];
      report_.pfc.quanta[p] += body.quanta(p);
    }
  }
}

void Linter::add_frame(std::uint64_t frame, std::span<const std::byte> data, std::size_t original_length) {
  ++report_.frames;
  packet_.reset();
  if (link_type_ == packet::LinkType::Ethernet && packet::is_mac_control(data)) {
    check_mac_control(frame, data);
    return;
  }
  auto r = packet::parse(data, link_type_, original_length);
  if (!r) {
    check_unparsed(frame, r.error(), data.size(), original_length);
    return;
  }
  ++report_.checked;
  const packet::ParsedPacket& p = *r;
  const packet::PacketFields& f = p.fields;
  packet_ = PacketRef{f.dest_qp, f.psn};
  const OpcodeInfo& info = packet::opcode_info(f.opcode);
  const StreamKey key = stream_key(f, info);
  StreamStats& st = report_.streams[key];
  count_packet(st, info, f, original_length);
  if (p.missing != 0) ++report_.headers_only;
  if (!check_crcs(frame, data, p, key, st)) return;  // a receiver drops it: its PSN and opcode say nothing
  if (f.aeth) check_ack(frame, f, key, st);
  if (info.operation == Operation::RdmaWrite && info.position == Position::Only && f.reth)
    check_write_length(frame, f, st);
  // Path MTU is per QP: learnt from the stream's own full-size FIRST/MIDDLE payloads.
  if (info.position == Position::First || info.position == Position::Middle) {
    std::uint32_t& m = seq_[key].pmtu;
    m = std::max(m, f.payload_length);
  }
  if (key.kind != StreamKind::Cnp) check_sequence(frame, p, key, st);
}

void Linter::check_unparsed(std::uint64_t frame, ParseError e, std::size_t captured, std::size_t original_length) {
  if (is_foreign(e)) {
    ++report_.skipped;
    return;
  }
  if (original_length > captured) {
    ++report_.skipped;
    add(frame, FindingKind::CutFrame,
        "frame cut by the capture (" + std::to_string(captured) + " of " + std::to_string(original_length) +
            " bytes), not checked");
    return;
  }
  ++report_.checked;
  add(frame, FindingKind::Malformed, "malformed packet: " + std::string(to_string(e)));
}

bool Linter::check_crcs(std::uint64_t frame, std::span<const std::byte> data, const packet::ParsedPacket& p,
                        const StreamKey& key, StreamStats& st) {
  bool trusted = true;
  const bool whole = p.missing == 0;  // else the CRCs and what the UDP checksum covers are not there
  if (whole && !packet::icrc_ok(data, p)) {
    add(frame, FindingKind::BadIcrc,
        "bad ICRC: received " + hex(p.icrc, 8) + ", computed " + hex(packet::compute_icrc(data, p.layout), 8) + " (" +
            std::string(packet::opcode_info(p.fields.opcode).name) + " on " + describe(key) + ")",
        &st);
    trusted = false;
  }
  if (whole && !packet::vcrc_ok(data, p)) {
    add(frame, FindingKind::BadVcrc,
        "bad VCRC: received " + hex(p.vcrc, 4) + ", computed " + hex(packet::compute_vcrc(data, p.layout), 4), &st);
    trusted = false;
  }
  if (!packet::ipv4_checksum_ok(data, p)) {
    add(frame, FindingKind::BadIpv4Checksum, "bad IPv4 header checksum", &st);
    trusted = false;
  }
  if (whole && !packet::udp_checksum_ok(data, p))
    add(frame, FindingKind::BadUdpChecksum, "bad UDP checksum (ignored by RoCEv2 receivers)", &st);
  return trusted;
}

void Linter::check_ack(std::uint64_t frame, const packet::PacketFields& f, const StreamKey& key, StreamStats& st) {
  const packet::Syndrome s = f.aeth->syndrome;
  if (s.kind() == packet::AckKind::RnrNak) {
    ++st.naks;
    add(frame, FindingKind::RnrNak, "RNR NAK, PSN " + hex(f.psn.value(), 6) + " on " + describe(key), &st);
  } else if (s.kind() == packet::AckKind::Nak) {
    ++st.naks;
    add(frame, FindingKind::Nak,
        "NAK (" + std::string(s.nak_name()) + "), PSN " + hex(f.psn.value(), 6) + " on " + describe(key), &st);
  } else if (s.kind() == packet::AckKind::Reserved) {
    add(frame, FindingKind::ReservedSyndrome, "reserved AETH syndrome " + hex(s.raw(), 2), &st);
  }
}

// An RDMA WRITE ONLY carries all the bytes its RETH asks for.
void Linter::check_write_length(std::uint64_t frame, const packet::PacketFields& f, StreamStats& st) {
  if (f.reth->dma_length != f.payload_length)
    add(frame, FindingKind::LengthMismatch,
        "RDMA WRITE ONLY whose RETH asks for " + std::to_string(f.reth->dma_length) + " bytes carries " +
            std::to_string(f.payload_length) + " (an invalid request)",
        &st);
}

void Linter::check_sequence(std::uint64_t frame, const packet::ParsedPacket& pp, const StreamKey& key,
                            StreamStats& st) {
  const packet::PacketFields& f = pp.fields;
  const OpcodeInfo& info = packet::opcode_info(f.opcode);
  SeqState& s = seq_[key];
  const SeqPacket q{frame, info, f.psn, " on " + describe(key), s, st};
  bool disrupted = false;
  if (!s.started) {
    s.started = true;
    s.msg = SeqState::Msg::Unknown;  // the capture may start inside a message
  } else if (key.kind == StreamKind::Request) {
    disrupted = check_request_psn(q);
  } else if (s.msg == SeqState::Msg::Open) {
    disrupted = check_read_response_psn(q);
  } else {
    disrupted = check_response_psn(q);
  }
  if (disrupted) s.msg = SeqState::Msg::Unknown;
  (this->*kByPosition[static_cast<std::size_t>(info.position)])(q);
  expect_next(s, info, f);
}

// A request PSN is the one expected, or in the range a READ of unknown PMTU leaves.
bool Linter::check_request_psn(const SeqPacket& q) {
  const SeqState& s = q.s;
  const Psn p = q.psn;
  const std::int32_t lo = Psn::distance(s.expect_lo, p);
  const std::int32_t hi = Psn::distance(s.expect_hi, p);
  if (hi > 0) {
    ++q.st.psn_gaps;
    q.st.missing_psns += static_cast<std::uint64_t>(hi);
    add(q.frame, FindingKind::PsnGap,
        "PSN gap: expected " + hex(s.expect_hi.value(), 6) + ", got " + hex(p.value(), 6) + " (" +
            std::to_string(hi) + " missing)" + q.where);
    return true;
  }
  if (lo >= 0) return false;
  if (p == s.last) {
    ++q.st.duplicates;
    add(q.frame, FindingKind::DuplicatePsn, "duplicate PSN " + hex(p.value(), 6) + q.where);
  } else {
    ++q.st.retransmissions;
    add(q.frame, FindingKind::Retransmission,
        "retransmission: PSN back from " + hex(s.expect_lo.value(), 6) + " to " + hex(p.value(), 6) + q.where);
  }
  return true;
}

// Inside an RDMA READ response every PSN follows the one before.
bool Linter::check_read_response_psn(const SeqPacket& q) {
  const SeqState& s = q.s;
  const Psn p = q.psn;
  const std::int32_t d = Psn::distance(s.last + 1, p);
  if (d > 0) {
    ++q.st.psn_gaps;
    q.st.missing_psns += static_cast<std::uint64_t>(d);
    add(q.frame, FindingKind::PsnGap,
        "PSN gap in RDMA READ response: expected " + hex((s.last + 1).value(), 6) + ", got " + hex(p.value(), 6) +
            q.where);
    return true;
  }
  if (d == 0) return false;
  (p == s.last ? q.st.duplicates : q.st.retransmissions)++;
  add(q.frame, p == s.last ? FindingKind::DuplicatePsn : FindingKind::Retransmission,
      "response PSN back from " + hex(s.last.value(), 6) + " to " + hex(p.value(), 6) + q.where);
  return true;
}

// Between messages ACKs coalesce: forward jumps are normal.
bool Linter::check_response_psn(const SeqPacket& q) {
  const SeqState& s = q.s;
  const Psn p = q.psn;
  const std::int32_t d = Psn::distance(s.last, p);
  const bool continues = q.info.position == Position::Middle || q.info.position == Position::Last;
  const bool read_response = q.info.operation == Operation::RdmaReadResponse;
  if (d > 1 && continues && read_response) {
    // ...but a READ response does not start in its middle: its FIRST (at a PSN
    // in between) was lost before the capture point.
    ++q.st.psn_gaps;
    add(q.frame, FindingKind::PsnGap,
        "PSN gap: " + std::string(q.info.name) + " " + hex(p.value(), 6) + " after " + hex(s.last.value(), 6) +
            ", its FIRST not seen" + q.where);
    return true;
  }
  if (d == 0 && !read_response) {
    ++q.st.duplicates;
    add(q.frame, FindingKind::DuplicatePsn, "duplicate response PSN " + hex(p.value(), 6) + q.where);
    return false;
  }
  if (d >= 0) return false;
  ++q.st.retransmissions;
  add(q.frame, FindingKind::Retransmission,
      "response PSN back from " + hex(s.last.value(), 6) + " to " + hex(p.value(), 6) + q.where);
  return true;
}

// FIRST and ONLY begin a message: one still open has lost its LAST.
void Linter::check_nothing_open(const SeqPacket& q) {
  if (q.s.msg == SeqState::Msg::Open)
    add(q.frame, FindingKind::OpcodeSequence,
        std::string(q.info.name) + " while a " + std::string(packet::to_string(q.s.open_op)) +
            " message is open (its LAST is missing)" + q.where,
        &q.st);
}

// MIDDLE and LAST continue the open message, of their own operation.
void Linter::check_continues(const SeqPacket& q) {
  if (q.s.msg == SeqState::Msg::Idle) {
    add(q.frame, FindingKind::OpcodeSequence, std::string(q.info.name) + " without a FIRST" + q.where, &q.st);
  } else if (q.s.msg == SeqState::Msg::Open && q.s.open_op != q.info.operation) {
    add(q.frame, FindingKind::OpcodeSequence,
        std::string(q.info.name) + " inside a " + std::string(packet::to_string(q.s.open_op)) + " message" + q.where,
        &q.st);
  }
}

void Linter::on_first(const SeqPacket& q) {
  check_nothing_open(q);
  q.s.msg = SeqState::Msg::Open;
  q.s.open_op = q.info.operation;
}

void Linter::on_middle(const SeqPacket& q) {
  check_continues(q);
  q.s.msg = SeqState::Msg::Open;
  q.s.open_op = q.info.operation;
}

void Linter::on_last(const SeqPacket& q) {
  check_continues(q);
  q.s.msg = SeqState::Msg::Idle;
  ++q.st.messages;
}

void Linter::on_only(const SeqPacket& q) {
  check_nothing_open(q);
  q.s.msg = SeqState::Msg::Idle;
  ++q.st.messages;
}

// One PSN per packet, except an RDMA READ request, which reserves one PSN per
// response packet: a range while the stream's path MTU is not known.
void Linter::expect_next(SeqState& s, const OpcodeInfo& info, const packet::PacketFields& f) {
  std::uint32_t span_lo = 1, span_hi = 1;
  if (info.operation == Operation::RdmaReadRequest && f.reth && f.reth->dma_length > 0) {
    if (s.pmtu >= 256) {
      span_lo = span_hi = ceil_div(f.reth->dma_length, s.pmtu);
    } else {
      span_lo = ceil_div(f.reth->dma_length, 4096);
      span_hi = ceil_div(f.reth->dma_length, 256);
    }
  }
  s.last = f.psn;
  s.expect_lo = f.psn + span_lo;
  s.expect_hi = f.psn + span_hi;
}

void print_report(const Report& r, std::ostream& out) {
  out << "frames: " << r.frames << ", RoCEv2/IB transport packets: " << r.checked << ", skipped (other): " << r.skipped
      << "\n";
  if (r.headers_only > 0)
    out << "headers only (cut by the capture's snap length, or a size-only run): " << r.headers_only
        << " packets, their payload and ICRC not checked\n";
  if (r.pfc.frames > 0) {
    out << "PFC frames: " << r.pfc.frames;
    for (std::size_t p = 0; p < 8; ++p)
      if (r.pfc.pauses[p] + r.pfc.xons[p] > 0)
        out << "; priority " << p << ": " << r.pfc.pauses[p] << " pauses (" << r.pfc.quanta[p] << " quanta), "
            << r.pfc.xons[p] << " XON";
    out << "\n";
  }
  out << "streams: " << r.streams.size() << "\n";
  for (const auto& [k, s] : r.streams) {
    out << "  " << describe(k) << " [" << packet::to_string(s.transport) << "]: " << s.packets << " packets, "
        << s.bytes << " bytes, " << s.payload_bytes << " payload bytes, " << s.messages << " messages, " << s.psn_gaps
        << " PSN gaps (" << s.missing_psns << " PSNs missing), " << s.retransmissions << " retransmissions, "
        << s.duplicates << " duplicates, " << s.naks << " NAKs, " << s.ecn_ce << " CE/FECN marked, " << s.errors
        << " errors\n";
  }
  constexpr std::size_t kMaxPerSeverity = 10000;
  std::size_t shown[3] = {0, 0, 0}, hidden[3] = {0, 0, 0};
  if (!r.findings.empty()) out << "findings:\n";
  for (const Finding& f : r.findings) {
    const auto i = static_cast<std::size_t>(f.severity);
    if (shown[i] >= kMaxPerSeverity) {
      ++hidden[i];
      continue;
    }
    ++shown[i];
    out << "  frame " << f.frame << ": " << to_string(f.severity) << ": " << f.message << "\n";
  }
  for (std::size_t i = 0; i < 3; ++i)
    if (hidden[i]) out << "  ... " << hidden[i] << " more " << to_string(static_cast<Severity>(i)) << "s not shown\n";
  out << "result: " << r.errors << " errors, " << r.warnings << " warnings, " << r.observations << " observations\n";
}

namespace {

const char* link_name(packet::LinkType lt) { return lt == packet::LinkType::Ethernet ? "Ethernet" : "InfiniBand"; }

sim::Json stream_json(const StreamKey& k, const StreamStats& s) {
  static constexpr const char* kKinds[] = {"requests", "responses", "cnps"};
  return {{"src", address(k.src, k.lid)},
          {"dst", address(k.dst, k.lid)},
          {"dest_qp", k.dest_qp.value()},
          {"src_qp", k.src_qp != packet::Qpn() ? sim::Json(k.src_qp.value()) : sim::Json()},
          {"kind", kKinds[static_cast<std::size_t>(k.kind)]},
          {"transport", packet::to_string(s.transport)},
          {"packets", s.packets},
          {"bytes", s.bytes},
          {"payload_bytes", s.payload_bytes},
          {"messages", s.messages},
          {"psn_gaps", s.psn_gaps},
          {"missing_psns", s.missing_psns},
          {"retransmissions", s.retransmissions},
          {"duplicates", s.duplicates},
          {"naks", s.naks},
          {"ecn_ce", s.ecn_ce},
          {"errors", s.errors}};
}

sim::Json finding_json(const Finding& f) {
  const auto optional = [](const auto& v) { return v ? sim::Json(v->value()) : sim::Json(); };
  return {{"frame", f.frame},         {"severity", to_string(f.severity)}, {"kind", info(f.kind).name},
          {"qp", optional(f.qp)},     {"psn", optional(f.psn)},            {"message", f.message}};
}

}  // namespace

sim::Json report_json(const Report& r, const std::string& capture, packet::LinkType link_type) {
  sim::Json j = sim::output_document("rnicsim.lint");
  const sim::Json pfc = {{"frames", r.pfc.frames}, {"pauses", r.pfc.pauses}, {"xons", r.pfc.xons}, {"quanta", r.pfc.quanta}};
  j.update({{"capture", capture},           {"link_type", link_name(link_type)}, {"frames", r.frames},
            {"checked", r.checked},         {"skipped", r.skipped},             {"headers_only", r.headers_only},
            {"errors", r.errors},           {"warnings", r.warnings},           {"observations", r.observations},
            {"pfc", pfc}});
  sim::Json streams = sim::Json::array(), findings = sim::Json::array();
  for (const auto& [k, s] : r.streams) streams.push_back(stream_json(k, s));
  for (const Finding& f : r.findings) findings.push_back(finding_json(f));
  j["streams"] = std::move(streams);
  j["findings"] = std::move(findings);
  return j;
}

namespace {

// libpcap keeps the first snaplen bytes of a longer record and says nothing of
// the rest. In a pcap file (not pcapng, nor the modified format with longer
// record headers) a record is a 16-byte header and its bytes, so the file's
// position after each record says how many bytes it really held.
class RecordSizes {
 public:
  explicit RecordSizes(pcap_t* pc) : file_(pcap_file(pc)), pos_(file_ ? std::ftell(file_) : -1) {
    if (pos_ != 24 || !plain_pcap()) file_ = nullptr;  // or a stream without positions
  }
  // The bytes the record just read held, when the file tells.
  std::optional<std::uint64_t> held() {
    if (file_ == nullptr) return std::nullopt;
    const long now = std::ftell(file_);
    const long bytes = now - pos_ - 16;
    pos_ = now;
    if (now < 0 || bytes < 0) return std::nullopt;
    return static_cast<std::uint64_t>(bytes);
  }

 private:
  // The file's magic, read again: micro- or nanosecond pcap, in either byte order.
  bool plain_pcap() {
    std::uint8_t m[4] = {};
    const bool read = std::fseek(file_, 0, SEEK_SET) == 0 && std::fread(m, 1, 4, file_) == 4;
    if (std::fseek(file_, pos_, SEEK_SET) != 0) return false;
    const std::uint32_t le = m[0] | m[1] << 8 | m[2] << 16 | static_cast<std::uint32_t>(m[3]) << 24;
    const std::uint32_t be = m[3] | m[2] << 8 | m[1] << 16 | static_cast<std::uint32_t>(m[0]) << 24;
    return read && (le == 0xA1B2C3D4 || le == 0xA1B23C4D || be == 0xA1B2C3D4 || be == 0xA1B23C4D);
  }

  std::FILE* file_;
  long pos_;
};

// Checks the capture `pc` (closed on return).
int lint_capture(pcap_t* pc, const std::string& pcap_path, std::ostream& out, std::ostream& err, ReportFormat format) {
  const int dlt = pcap_datalink(pc);
  packet::LinkType lt;
  if (dlt == DLT_EN10MB) {
    lt = packet::LinkType::Ethernet;
  } else if (dlt == kLinktypeInfiniband || dlt == kLinktypeErf) {
    lt = packet::LinkType::Infiniband;
  } else {
    err << "rnicsim lint: " << pcap_path << ": unsupported link type " << dlt
        << " (expected Ethernet (1), InfiniBand (247) or ERF (197))\n";
    pcap_close(pc);
    return 2;
  }
  Linter linter(lt);
  RecordSizes sizes(pc);
  std::uint64_t n = 0;
  for (;;) {
    pcap_pkthdr* h = nullptr;
    const u_char* data = nullptr;
    const int rc = pcap_next_ex(pc, &h, &data);
    if (rc == 1) {
      ++n;
      const std::span bytes(reinterpret_cast<const std::byte*>(data), h->caplen);
      if (dlt != kLinktypeErf) {
        linter.add_frame(n, bytes, std::max<std::size_t>(h->len, h->caplen));
      } else if (const auto ib = packet::erf_infiniband_packet(bytes)) {
        linter.add_frame(n, ib->bytes, std::max(ib->wire_length, ib->bytes.size()));
      } else {
        linter.note(n, "an ERF record that is not an InfiniBand packet (type 21)");
      }
      if (const auto held = sizes.held(); held && *held > h->caplen)
        linter.note(n,
                    "the record holds " + std::to_string(*held) + " bytes, more than the capture's snaplen of " +
                        std::to_string(pcap_snapshot(pc)) + " (only those were checked)");
      continue;
    }
    // The frames before were checked; a capture that cannot be read to its end is
    // broken, not merely suspect.
    if (rc == -1) {
      linter.note(n + 1,
                  std::string("capture file damaged or truncated, stopped reading: ") + pcap_geterr(pc));
    }
    break;
  }
  pcap_close(pc);
  if (format == ReportFormat::Json) {
    sim::write_json(out, report_json(linter.report(), pcap_path, lt));
  } else {
    out << "rnicsim lint: " << pcap_path << " (" << link_name(lt) << ")\n";
    print_report(linter.report(), out);
  }
  return linter.report().errors > 0 ? 1 : 0;
}

}  // namespace

int run_lint(const std::string& pcap_path, std::ostream& out, std::ostream& err, ReportFormat format) {
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_t* pc = pcap_open_offline_with_tstamp_precision(pcap_path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (!pc) {
    err << "rnicsim lint: " << pcap_path << ": " << errbuf << "\n";
    return 2;
  }
  return lint_capture(pc, pcap_path, out, err, format);
}

int run_lint(std::FILE* file, const std::string& name, std::ostream& out, std::ostream& err, ReportFormat format) {
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_t* pc = pcap_fopen_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (!pc) {
    std::fclose(file);
    err << "rnicsim lint: " << name << ": " << errbuf << "\n";
    return 2;
  }
  return lint_capture(pc, name, out, err, format);
}

}  // namespace rnicsim::lint
