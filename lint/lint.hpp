// rnicsim lint: a protocol checker for RoCEv2 and native InfiniBand captures, of
// the simulator or of real hardware. Malformed or inconsistent packets, bad CRCs
// and impossible opcode sequences are errors; PSN gaps, duplicates and go-back-N
// retransmissions are observations, as loss is not a protocol error. PFC frames
// are checked and counted. Every finding: kFindingKinds and lint/README.md.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iosfwd>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "packet/packet.hpp"
#include "packet/psn.hpp"

namespace rnicsim::lint {

enum class Severity : std::uint8_t { Error, Warning, Observation };
std::string_view to_string(Severity s) noexcept;

/// What a finding is about; each kind has one severity (kFindingKinds).
enum class FindingKind : std::uint8_t {
  PfcMalformed, PfcNoPriority, CutFrame, Malformed, BadIcrc, BadVcrc, BadIpv4Checksum, BadUdpChecksum,
  RnrNak, Nak, ReservedSyndrome, LengthMismatch, PsnGap, DuplicatePsn, Retransmission, OpcodeSequence,
  Capture, Count
};
struct FindingKindInfo {
  std::string_view name;  ///< as `lint --json` writes it
  Severity severity;
};
inline constexpr FindingKindInfo kFindingKinds[] = {
    {"pfc_malformed", Severity::Error},       {"pfc_no_priority", Severity::Warning},
    {"cut_frame", Severity::Warning},         {"malformed", Severity::Error},
    {"bad_icrc", Severity::Error},            {"bad_vcrc", Severity::Error},
    {"bad_ipv4_checksum", Severity::Error},   {"bad_udp_checksum", Severity::Warning},
    {"rnr_nak", Severity::Observation},       {"nak", Severity::Observation},
    {"reserved_syndrome", Severity::Error},   {"length_mismatch", Severity::Error},
    {"psn_gap", Severity::Observation},       {"duplicate_psn", Severity::Observation},
    {"retransmission", Severity::Observation}, {"opcode_sequence", Severity::Error},
    {"capture", Severity::Error},
};
static_assert(std::size(kFindingKinds) == static_cast<std::size_t>(FindingKind::Count));
inline const FindingKindInfo& info(FindingKind k) { return kFindingKinds[static_cast<std::size_t>(k)]; }

struct Finding {
  std::uint64_t frame = 0;  ///< 1-based frame number in the capture
  Severity severity = Severity::Error;
  std::string message;
  FindingKind kind = FindingKind::Malformed;
  /// The packet's destination QP and PSN, when the finding is about a parsed packet.
  std::optional<packet::Qpn> qp;
  std::optional<packet::Psn> psn;
};

enum class StreamKind : std::uint8_t { Request, Response, Cnp };

/// A stream: source and destination address, destination QPN and kind, which
/// separates requests from responses (ACK, READ RESPONSE, ATOMIC ACK: they carry
/// the requester's PSNs back in the reverse direction) and CNPs; UD streams are
/// further split by the DETH source QPN. Addresses are IP addresses for RoCEv2,
/// GIDs for IB global and LIDs for IB local packets.
struct StreamKey {
  packet::Ipv6Addr src{};  ///< IP address, GID, or LID in the last two bytes (IB local)
  packet::Ipv6Addr dst{};
  packet::Qpn dest_qp{};
  StreamKind kind = StreamKind::Request;
  packet::Qpn src_qp{};      ///< UD only (DETH SrcQP), else 0
  bool lid = false;          ///< addresses are LIDs
  auto operator<=>(const StreamKey&) const = default;
};

struct StreamStats {
  packet::Transport transport = packet::Transport::Invalid;
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;          ///< frame bytes
  std::uint64_t payload_bytes = 0;
  std::uint64_t messages = 0;       ///< completed (LAST or ONLY)
  std::uint64_t psn_gaps = 0;       ///< forward jumps
  std::uint64_t missing_psns = 0;   ///< PSNs skipped by those jumps
  std::uint64_t retransmissions = 0;  ///< backward jumps (go-back-N restarts)
  std::uint64_t duplicates = 0;     ///< same PSN as the packet before
  std::uint64_t naks = 0;           ///< NAK and RNR NAK ACKs
  std::uint64_t ecn_ce = 0;         ///< IP ECN = CE or BTH FECN set
  std::uint64_t errors = 0;
};

/// PFC (802.1Qbb) frames seen, per priority: pauses (quanta > 0) and XONs.
struct PfcStats {
  std::uint64_t frames = 0;
  std::array<std::uint64_t, 8> pauses{}, xons{};
  std::array<std::uint64_t, 8> quanta{};  ///< summed over pauses
};

struct Report {
  std::uint64_t frames = 0;
  std::uint64_t checked = 0;     ///< RoCEv2/IB transport packets
  std::uint64_t skipped = 0;     ///< other frames (not RoCEv2, raw IB, ...)
  /// Transport packets the capture holds only the headers of (a snap length, or a
  /// size-only run): headers and sequences checked, payload and ICRC not.
  std::uint64_t headers_only = 0;
  PfcStats pfc;                  ///< PFC pause frames: checked and counted, not skipped
  std::uint64_t errors = 0;
  std::uint64_t warnings = 0;
  std::uint64_t observations = 0;
  std::vector<Finding> findings;
  std::map<StreamKey, StreamStats> streams;
};

/// The checker, fed one frame at a time (usable without a pcap file).
class Linter {
 public:
  explicit Linter(packet::LinkType link_type) noexcept : link_type_(link_type) {}

  /// Checks one captured frame. `frame_number` is 1-based; `original_length`
  /// is the length on the wire (pcap len), larger than data.size() when the
  /// capture cut the frame (snaplen).
  void add_frame(std::uint64_t frame_number, std::span<const std::byte> data, std::size_t original_length);
  void add_frame(std::uint64_t frame_number, std::span<const std::byte> data) {
    add_frame(frame_number, data, data.size());
  }
  /// A finding about the capture file, not a packet (e.g. a truncated file).
  void note(std::uint64_t frame_number, std::string message);

  const Report& report() const noexcept { return report_; }

 private:
  struct SeqState {
    enum class Msg : std::uint8_t { Idle, Open, Unknown } msg = Msg::Idle;
    packet::Operation open_op = packet::Operation::None;
    bool started = false;
    packet::Psn last;        ///< PSN of the previous packet
    packet::Psn expect_lo;   ///< next in-order PSN range (requests)
    packet::Psn expect_hi;
    std::uint32_t pmtu = 0;  ///< path MTU learnt from this QP's full FIRST/MIDDLE payloads
  };
  /// A MAC control frame: PFC is checked and counted; other opcodes are skipped.
  void check_mac_control(std::uint64_t frame, std::span<const std::byte> data);
  /// A frame parse() refused: skipped (not RoCEv2/IB, or cut by the capture) or malformed.
  void check_unparsed(std::uint64_t frame, packet::ParseError e, std::size_t captured, std::size_t original_length);
  /// ICRC, VCRC and checksums: false when a receiver drops the packet.
  bool check_crcs(std::uint64_t frame, std::span<const std::byte> data, const packet::ParsedPacket& p,
                  const StreamKey& key, StreamStats& st);
  /// NAKs and reserved syndromes of an AETH.
  void check_ack(std::uint64_t frame, const packet::PacketFields& f, const StreamKey& key, StreamStats& st);
  void check_write_length(std::uint64_t frame, const packet::PacketFields& f, StreamStats& st);
  void check_sequence(std::uint64_t frame, const packet::ParsedPacket& p, const StreamKey& key, StreamStats& st);

  /// One packet as the steps of check_sequence() see it.
  struct SeqPacket {
    std::uint64_t frame;
    const packet::OpcodeInfo& info;
    packet::Psn psn;
    std::string where;  ///< " on " and the stream, for messages
    SeqState& s;
    StreamStats& st;
  };
  /// PSN continuity: true when a gap or a step back leaves the message state unknown.
  bool check_request_psn(const SeqPacket& q);
  bool check_read_response_psn(const SeqPacket& q);
  bool check_response_psn(const SeqPacket& q);
  /// The opcode sequence within a message, one step per position (kByPosition).
  using PositionStep = void (Linter::*)(const SeqPacket& q);
  void on_first(const SeqPacket& q);
  void on_middle(const SeqPacket& q);
  void on_last(const SeqPacket& q);
  void on_only(const SeqPacket& q);
  void on_none(const SeqPacket&) {}
  static constexpr PositionStep kByPosition[] = {&Linter::on_none, &Linter::on_first, &Linter::on_middle,
                                                 &Linter::on_last, &Linter::on_only};
  static_assert(sizeof(kByPosition) / sizeof(kByPosition[0]) == static_cast<std::size_t>(packet::Position::Only) + 1);
  void check_nothing_open(const SeqPacket& q);
  void check_continues(const SeqPacket& q);
  /// Where the next request PSN should be.
  static void expect_next(SeqState& s, const packet::OpcodeInfo& info, const packet::PacketFields& f);
  void add(std::uint64_t frame, FindingKind kind, std::string message, StreamStats* st = nullptr);

  struct PacketRef {
    packet::Qpn qp;
    packet::Psn psn;
  };
  packet::LinkType link_type_;
  std::optional<PacketRef> packet_;  ///< the parsed packet being checked, for findings
  Report report_;
  std::map<StreamKey, SeqState> seq_;
};

/// "10.0.0.1 -> 10.0.0.2 QPN 0x000123 requests".
std::string describe(const StreamKey& k);

/// Writes the per-stream summary and every finding to `out`.
void print_report(const Report& r, std::ostream& out);

/// How `rnicsim lint` writes its report: text, or one JSON object (docs/OUTPUTS.md).
enum class ReportFormat : std::uint8_t { Text, Json };
/// The report as JSON: totals, PFC counts, streams and every finding as an
/// object (frame, severity, kind, qp, psn, message).
nlohmann::ordered_json report_json(const Report& r, const std::string& capture, packet::LinkType link_type);

/// `rnicsim lint FILE.pcap`: reads a pcap (or pcapng) with nanosecond
/// timestamps, Ethernet (RoCEv2), LINKTYPE_INFINIBAND (247) or ERF records of
/// type InfiniBand (LINKTYPE_ERF, 197). Returns 0 when
/// no error was found, 1 when errors were found, 2 when the file cannot be
/// read, is not a capture, or has an unsupported link type. A capture file
/// that ends inside a record is checked up to there and reported as a warning.
int run_lint(const std::string& pcap_path, std::ostream& out, std::ostream& err,
             ReportFormat format = ReportFormat::Text);
/// The same for a capture already open as `file` (closed on return), named
/// `name` in the messages.
int run_lint(std::FILE* file, const std::string& name, std::ostream& out, std::ostream& err,
             ReportFormat format = ReportFormat::Text);

}  // namespace rnicsim::lint
