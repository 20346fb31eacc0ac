// BTH opcodes and the constexpr opcode table.
//
// One 256-entry table says, for every opcode byte, which extension headers
// follow the BTH, whether a payload follows, and the opcode's place in a
// message. Offsets and lengths are derived from the header mask at compile
// time and checked against the spec below; no offset is written by hand.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rnicsim::packet {

/// Every IBTA RC, UC and UD opcode (IBA Vol. 1, table 35) plus the RoCEv2 CNP.
/// RD (0x40..0x5F) and the IBTA 1.5 FLUSH / ATOMIC_WRITE opcodes are not modelled.
enum class Opcode : std::uint8_t {
  // Reliable Connection, transport bits 000.
  RcSendFirst = 0x00,
  RcSendMiddle = 0x01,
  RcSendLast = 0x02,
  RcSendLastWithImmediate = 0x03,
  RcSendOnly = 0x04,
  RcSendOnlyWithImmediate = 0x05,
  RcRdmaWriteFirst = 0x06,
  RcRdmaWriteMiddle = 0x07,
  RcRdmaWriteLast = 0x08,
  RcRdmaWriteLastWithImmediate = 0x09,
  RcRdmaWriteOnly = 0x0A,
  RcRdmaWriteOnlyWithImmediate = 0x0B,
  RcRdmaReadRequest = 0x0C,
  RcRdmaReadResponseFirst = 0x0D,
  RcRdmaReadResponseMiddle = 0x0E,
  RcRdmaReadResponseLast = 0x0F,
  RcRdmaReadResponseOnly = 0x10,
  RcAcknowledge = 0x11,
  RcAtomicAcknowledge = 0x12,
  RcCompareSwap = 0x13,
  RcFetchAdd = 0x14,
  // 0x15 is RESYNC, defined for RD only.
  RcSendLastWithInvalidate = 0x16,
  RcSendOnlyWithInvalidate = 0x17,
  // Unreliable Connection, transport bits 001.
  UcSendFirst = 0x20,
  UcSendMiddle = 0x21,
  UcSendLast = 0x22,
  UcSendLastWithImmediate = 0x23,
  UcSendOnly = 0x24,
  UcSendOnlyWithImmediate = 0x25,
  UcRdmaWriteFirst = 0x26,
  UcRdmaWriteMiddle = 0x27,
  UcRdmaWriteLast = 0x28,
  UcRdmaWriteLastWithImmediate = 0x29,
  UcRdmaWriteOnly = 0x2A,
  UcRdmaWriteOnlyWithImmediate = 0x2B,
  // Unreliable Datagram, transport bits 011.
  UdSendOnly = 0x64,
  UdSendOnlyWithImmediate = 0x65,
  // RoCEv2 Congestion Notification Packet (annex A17.9.3), the CNX transport 100.
  Cnp = 0x81,
};

enum class Transport : std::uint8_t { Rc, Uc, Rd, Ud, Cnp, Invalid };

/// Extension headers (and payload) an opcode carries after the BTH. A typed
/// flag set: `Hdr::Reth | Hdr::ImmDt`, `mask.has(Hdr::Reth)`.
enum class Hdr : std::uint16_t {
  None = 0,
  Deth = 1u << 0,
  Reth = 1u << 1,
  AtomicEth = 1u << 2,
  Aeth = 1u << 3,
  AtomicAckEth = 1u << 4,
  ImmDt = 1u << 5,
  Ieth = 1u << 6,
  /// The 16 reserved bytes after the BTH of a RoCEv2 CNP.
  CnpReserved = 1u << 7,
  Payload = 1u << 8,
};

class HdrMask {
 public:
  constexpr HdrMask() noexcept = default;
  constexpr HdrMask(Hdr h) noexcept : bits_(static_cast<std::uint16_t>(h)) {}  // NOLINT: implicit by design
  constexpr bool has(Hdr h) const noexcept { return (bits_ & static_cast<std::uint16_t>(h)) != 0; }
  constexpr std::uint16_t bits() const noexcept { return bits_; }
  constexpr HdrMask operator|(HdrMask o) const noexcept { return from_bits(bits_ | o.bits_); }
  constexpr bool operator==(const HdrMask&) const noexcept = default;
  static constexpr HdrMask from_bits(unsigned b) noexcept {
    HdrMask m;
    m.bits_ = static_cast<std::uint16_t>(b);
    return m;
  }

 private:
  std::uint16_t bits_ = 0;
};
constexpr HdrMask operator|(Hdr a, Hdr b) noexcept { return HdrMask(a) | HdrMask(b); }

/// Size in bytes of one extension header (Payload and None: 0).
constexpr std::size_t header_size(Hdr h) noexcept {
  switch (h) {
    case Hdr::Deth: return 8;
    case Hdr::Reth: return 16;
    case Hdr::AtomicEth: return 28;
    case Hdr::Aeth: return 4;
    case Hdr::AtomicAckEth: return 8;
    case Hdr::ImmDt: return 4;
    case Hdr::Ieth: return 4;
    case Hdr::CnpReserved: return 16;
    default: return 0;
  }
}

/// The order in which extension headers follow the BTH (IBA 9.2: RDETH, DETH,
/// RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH; RD's RDETH not modelled).
inline constexpr std::array<Hdr, 8> kHeaderOrder = {Hdr::Deth,         Hdr::Reth,  Hdr::AtomicEth,
                                                    Hdr::Aeth,         Hdr::AtomicAckEth, Hdr::ImmDt,
                                                    Hdr::Ieth,         Hdr::CnpReserved};

inline constexpr std::size_t kBthSize = 12;

/// Offset of header `h` from the first byte of the BTH, for an opcode carrying
/// `mask`. Only meaningful when mask.has(h).
constexpr std::size_t header_offset(HdrMask mask, Hdr h) noexcept {
  std::size_t off = kBthSize;
  for (Hdr x : kHeaderOrder) {
    if (x == h) return off;
    if (mask.has(x)) off += header_size(x);
  }
  return off;  // Hdr::Payload: after every header
}

/// BTH + extension headers: the offset of the payload from the BTH.
constexpr std::size_t transport_header_length(HdrMask mask) noexcept { return header_offset(mask, Hdr::Payload); }

/// Place of a packet in its message.
enum class Position : std::uint8_t { None, First, Middle, Last, Only };

/// What the packet does; FIRST/MIDDLE/LAST of one message share the operation.
enum class Operation : std::uint8_t {
  None,
  Send,
  RdmaWrite,
  RdmaReadRequest,
  RdmaReadResponse,
  Acknowledge,
  AtomicAcknowledge,
  Atomic,
  Cnp,
};

struct OpcodeInfo {
  std::string_view name;  ///< IBTA spelling, e.g. "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE"
  Transport transport = Transport::Invalid;
  HdrMask mask;
  Position position = Position::None;
  Operation operation = Operation::None;
  bool valid = false;
  std::uint8_t header_length = 0;  ///< BTH + extension headers, derived from mask

  /// A response (travels from responder to requester: read responses, ACKs).
  constexpr bool is_response() const noexcept {
    return operation == Operation::RdmaReadResponse || operation == Operation::Acknowledge ||
           operation == Operation::AtomicAcknowledge;
  }
  constexpr bool has(Hdr h) const noexcept { return mask.has(h); }
  constexpr std::size_t offset(Hdr h) const noexcept { return header_offset(mask, h); }
};

namespace detail {
constexpr OpcodeInfo make_info(std::string_view name, Transport t, HdrMask m, Position p, Operation op) {
  return OpcodeInfo{name, t, m, p, op, true, static_cast<std::uint8_t>(transport_header_length(m))};
}

/// The connected-service operations shared by RC and UC (low 5 bits 0x00..0x0B).
constexpr void add_send_write(std::array<OpcodeInfo, 256>& t, std::uint8_t base, Transport tr,
                              const std::array<std::string_view, 12>& names) {
  using enum Hdr;
  const HdrMask pl = Hdr::Payload;
  t[base + 0x00] = make_info(names[0], tr, pl, Position::First, Operation::Send);
  t[base + 0x01] = make_info(names[1], tr, pl, Position::Middle, Operation::Send);
  t[base + 0x02] = make_info(names[2], tr, pl, Position::Last, Operation::Send);
  t[base + 0x03] = make_info(names[3], tr, ImmDt | Payload, Position::Last, Operation::Send);
  t[base + 0x04] = make_info(names[4], tr, pl, Position::Only, Operation::Send);
  t[base + 0x05] = make_info(names[5], tr, ImmDt | Payload, Position::Only, Operation::Send);
  t[base + 0x06] = make_info(names[6], tr, Reth | Payload, Position::First, Operation::RdmaWrite);
  t[base + 0x07] = make_info(names[7], tr, pl, Position::Middle, Operation::RdmaWrite);
  t[base + 0x08] = make_info(names[8], tr, pl, Position::Last, Operation::RdmaWrite);
  t[base + 0x09] = make_info(names[9], tr, ImmDt | Payload, Position::Last, Operation::RdmaWrite);
  t[base + 0x0A] = make_info(names[10], tr, Reth | Payload, Position::Only, Operation::RdmaWrite);
  t[base + 0x0B] = make_info(names[11], tr, Reth | ImmDt | Payload, Position::Only, Operation::RdmaWrite);
}

constexpr std::array<OpcodeInfo, 256> make_opcode_table() {
  std::array<OpcodeInfo, 256> t{};
  for (std::size_t i = 0; i < t.size(); ++i) t[i].name = "RESERVED";
  using enum Hdr;
  add_send_write(t, 0x00, Transport::Rc,
                 {"RC_SEND_FIRST", "RC_SEND_MIDDLE", "RC_SEND_LAST", "RC_SEND_LAST_WITH_IMMEDIATE", "RC_SEND_ONLY",
                  "RC_SEND_ONLY_WITH_IMMEDIATE", "RC_RDMA_WRITE_FIRST", "RC_RDMA_WRITE_MIDDLE", "RC_RDMA_WRITE_LAST",
                  "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", "RC_RDMA_WRITE_ONLY", "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE"});
  t[0x0C] = make_info("RC_RDMA_READ_REQUEST", Transport::Rc, Reth, Position::Only, Operation::RdmaReadRequest);
  t[0x0D] = make_info("RC_RDMA_READ_RESPONSE_FIRST", Transport::Rc, Aeth | Payload, Position::First, Operation::RdmaReadResponse);
  t[0x0E] = make_info("RC_RDMA_READ_RESPONSE_MIDDLE", Transport::Rc, Payload, Position::Middle, Operation::RdmaReadResponse);
  t[0x0F] = make_info("RC_RDMA_READ_RESPONSE_LAST", Transport::Rc, Aeth | Payload, Position::Last, Operation::RdmaReadResponse);
  t[0x10] = make_info("RC_RDMA_READ_RESPONSE_ONLY", Transport::Rc, Aeth | Payload, Position::Only, Operation::RdmaReadResponse);
  t[0x11] = make_info("RC_ACKNOWLEDGE", Transport::Rc, Aeth, Position::None, Operation::Acknowledge);
  t[0x12] = make_info("RC_ATOMIC_ACKNOWLEDGE", Transport::Rc, Aeth | AtomicAckEth, Position::Only, Operation::AtomicAcknowledge);
  t[0x13] = make_info("RC_COMPARE_SWAP", Transport::Rc, AtomicEth, Position::Only, Operation::Atomic);
  t[0x14] = make_info("RC_FETCH_ADD", Transport::Rc, AtomicEth, Position::Only, Operation::Atomic);
  t[0x16] = make_info("RC_SEND_LAST_WITH_INVALIDATE", Transport::Rc, Ieth | Payload, Position::Last, Operation::Send);
  t[0x17] = make_info("RC_SEND_ONLY_WITH_INVALIDATE", Transport::Rc, Ieth | Payload, Position::Only, Operation::Send);
  add_send_write(t, 0x20, Transport::Uc,
                 {"UC_SEND_FIRST", "UC_SEND_MIDDLE", "UC_SEND_LAST", "UC_SEND_LAST_WITH_IMMEDIATE", "UC_SEND_ONLY",
                  "UC_SEND_ONLY_WITH_IMMEDIATE", "UC_RDMA_WRITE_FIRST", "UC_RDMA_WRITE_MIDDLE", "UC_RDMA_WRITE_LAST",
                  "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", "UC_RDMA_WRITE_ONLY", "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE"});
  t[0x64] = make_info("UD_SEND_ONLY", Transport::Ud, Deth | Payload, Position::Only, Operation::Send);
  t[0x65] = make_info("UD_SEND_ONLY_WITH_IMMEDIATE", Transport::Ud, Deth | ImmDt | Payload, Position::Only, Operation::Send);
  t[0x81] = make_info("CNP", Transport::Cnp, CnpReserved, Position::None, Operation::Cnp);
  return t;
}
}  // namespace detail

/// The opcode table, indexed by the BTH opcode byte. Invalid entries have
/// valid == false and the name "RESERVED".
inline constexpr std::array<OpcodeInfo, 256> kOpcodeTable = detail::make_opcode_table();

constexpr const OpcodeInfo& opcode_info(std::uint8_t op) noexcept { return kOpcodeTable[op]; }
constexpr const OpcodeInfo& opcode_info(Opcode op) noexcept { return kOpcodeTable[static_cast<std::uint8_t>(op)]; }
constexpr bool is_valid_opcode(std::uint8_t op) noexcept { return kOpcodeTable[op].valid; }
constexpr std::string_view to_string(Opcode op) noexcept { return opcode_info(op).name; }

/// Number of valid opcodes (RC 23, UC 12, UD 2, CNP 1).
inline constexpr std::size_t kValidOpcodeCount = [] {
  std::size_t n = 0;
  for (const auto& i : kOpcodeTable) n += i.valid ? 1 : 0;
  return n;
}();
static_assert(kValidOpcodeCount == 38);

// Spec cross-checks (IBA Vol. 1 9.2-9.3; RoCEv2 annex A17.9.3 for the CNP).
static_assert(opcode_info(Opcode::RcSendFirst).header_length == 12);
static_assert(opcode_info(Opcode::RcSendLastWithImmediate).offset(Hdr::ImmDt) == 12);
static_assert(opcode_info(Opcode::RcSendLastWithImmediate).header_length == 16);
static_assert(opcode_info(Opcode::RcRdmaWriteFirst).offset(Hdr::Reth) == 12);
static_assert(opcode_info(Opcode::RcRdmaWriteFirst).header_length == 28);
static_assert(opcode_info(Opcode::RcRdmaWriteOnlyWithImmediate).offset(Hdr::Reth) == 12);
static_assert(opcode_info(Opcode::RcRdmaWriteOnlyWithImmediate).offset(Hdr::ImmDt) == 28);
static_assert(opcode_info(Opcode::RcRdmaWriteOnlyWithImmediate).header_length == 32);
static_assert(opcode_info(Opcode::RcRdmaReadRequest).header_length == 28);
static_assert(opcode_info(Opcode::RcRdmaReadResponseFirst).offset(Hdr::Aeth) == 12);
static_assert(opcode_info(Opcode::RcRdmaReadResponseFirst).header_length == 16);
static_assert(opcode_info(Opcode::RcRdmaReadResponseMiddle).header_length == 12);
static_assert(opcode_info(Opcode::RcAcknowledge).header_length == 16);
static_assert(opcode_info(Opcode::RcAtomicAcknowledge).offset(Hdr::Aeth) == 12);
static_assert(opcode_info(Opcode::RcAtomicAcknowledge).offset(Hdr::AtomicAckEth) == 16);
static_assert(opcode_info(Opcode::RcAtomicAcknowledge).header_length == 24);
static_assert(opcode_info(Opcode::RcCompareSwap).offset(Hdr::AtomicEth) == 12);
static_assert(opcode_info(Opcode::RcCompareSwap).header_length == 40);
static_assert(opcode_info(Opcode::RcFetchAdd).header_length == 40);
static_assert(opcode_info(Opcode::RcSendOnlyWithInvalidate).offset(Hdr::Ieth) == 12);
static_assert(opcode_info(Opcode::RcSendOnlyWithInvalidate).header_length == 16);
static_assert(opcode_info(Opcode::UcRdmaWriteOnlyWithImmediate).header_length == 32);
static_assert(opcode_info(Opcode::UdSendOnly).offset(Hdr::Deth) == 12);
static_assert(opcode_info(Opcode::UdSendOnly).header_length == 20);
static_assert(opcode_info(Opcode::UdSendOnlyWithImmediate).offset(Hdr::ImmDt) == 20);
static_assert(opcode_info(Opcode::UdSendOnlyWithImmediate).header_length == 24);
static_assert(opcode_info(Opcode::Cnp).header_length == 28);
static_assert(!is_valid_opcode(0x15) && !is_valid_opcode(0x18) && !is_valid_opcode(0x2C) && !is_valid_opcode(0x80));
static_assert(transport_header_length(Hdr::Deth | Hdr::Reth | Hdr::AtomicEth | Hdr::Aeth | Hdr::AtomicAckEth |
                                      Hdr::ImmDt | Hdr::Ieth) == 12 + 8 + 16 + 28 + 4 + 8 + 4 + 4);

std::string_view to_string(Transport t) noexcept;
std::string_view to_string(Position p) noexcept;
std::string_view to_string(Operation o) noexcept;

}  // namespace rnicsim::packet
