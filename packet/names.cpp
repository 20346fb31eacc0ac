// Name tables for the packet layer's enums.
#include "packet/opcode.hpp"
#include "packet/packet.hpp"
#include "packet/result.hpp"

namespace rnicsim::packet {

std::string_view to_string(ParseError e) noexcept {
  switch (e) {
    case ParseError::TruncatedEthernet: return "truncated in the Ethernet header";
    case ParseError::TruncatedVlan: return "truncated in the 802.1Q tag";
    case ParseError::TruncatedIpv4: return "truncated in the IPv4 header";
    case ParseError::TruncatedIpv6: return "truncated in the IPv6 header";
    case ParseError::TruncatedUdp: return "truncated in the UDP header";
    case ParseError::TruncatedLrh: return "truncated in the LRH";
    case ParseError::TruncatedGrh: return "truncated in the GRH";
    case ParseError::TruncatedBth: return "truncated in the BTH";
    case ParseError::TruncatedDeth: return "truncated in the DETH";
    case ParseError::TruncatedReth: return "truncated in the RETH";
    case ParseError::TruncatedAtomicEth: return "truncated in the AtomicETH";
    case ParseError::TruncatedAeth: return "truncated in the AETH";
    case ParseError::TruncatedAtomicAckEth: return "truncated in the AtomicAckETH";
    case ParseError::TruncatedImmDt: return "truncated in the ImmDt";
    case ParseError::TruncatedIeth: return "truncated in the IETH";
    case ParseError::TruncatedCnpReserved: return "truncated in the CNP reserved bytes";
    case ParseError::TruncatedIcrc: return "truncated in the ICRC";
    case ParseError::TruncatedVcrc: return "truncated in the VCRC";
    case ParseError::NotIp: return "not IP";
    case ParseError::BadIpVersion: return "IP version disagrees with the EtherType";
    case ParseError::BadIhl: return "IPv4 IHL < 5";
    case ParseError::IpFragment: return "IPv4 fragment";
    case ParseError::NotUdp: return "not UDP";
    case ParseError::NotRoceV2Port: return "UDP destination port is not 4791";
    case ParseError::IpLengthMismatch: return "IP length inconsistent with the frame";
    case ParseError::UdpLengthMismatch: return "UDP length inconsistent with the IP length";
    case ParseError::NotIbaTransport: return "LRH LNH announces no IBA transport header";
    case ParseError::BadLver: return "LRH LVer is not 0";
    case ParseError::LrhLengthMismatch: return "LRH PktLen inconsistent with the frame";
    case ParseError::BadGrh: return "GRH IPVer is not 6 or NxtHdr is not 0x1B";
    case ParseError::GrhLengthMismatch: return "GRH PayLen inconsistent with LRH PktLen";
    case ParseError::InvalidOpcode: return "reserved or unsupported BTH opcode";
    case ParseError::BadTver: return "BTH TVer is not 0";
    case ParseError::PadExceedsPayload: return "pad count larger than the payload";
    case ParseError::PayloadNotAligned: return "payload + pad is not a multiple of 4 bytes";
    case ParseError::UnexpectedPayload: return "payload on an opcode that carries none";
    case ParseError::BadMtuPayload: return "FIRST/MIDDLE payload is not a valid PMTU (256..4096, power of 2, no pad)";
    case ParseError::PayloadTooLong: return "payload longer than the largest MTU (4096)";
  }
  return "unknown parse error";
}

std::string_view to_string(BuildError e) noexcept {
  switch (e) {
    case BuildError::BufferTooSmall: return "output buffer too small";
    case BuildError::InvalidOpcode: return "reserved or unsupported opcode";
    case BuildError::MissingHeader: return "an extension header required by the opcode is missing";
    case BuildError::UnexpectedHeader: return "an extension header the opcode does not carry is set";
    case BuildError::UnexpectedPayload: return "payload on an opcode that carries none";
    case BuildError::PadCountMismatch: return "pad_count != pad_for(payload_length)";
    case BuildError::LnhMismatch: return "lrh_lnh disagrees with the link kind";
    case BuildError::FieldOutOfRange: return "a field value does not fit its width";
    case BuildError::PacketTooLong: return "packet too long for its length fields";
    case BuildError::PayloadSizeMismatch: return "payload size != payload_length";
  }
  return "unknown build error";
}

std::string_view to_string(Transport t) noexcept {
  switch (t) {
    case Transport::Rc: return "RC";
    case Transport::Uc: return "UC";
    case Transport::Rd: return "RD";
    case Transport::Ud: return "UD";
    case Transport::Cnp: return "CNP";
    case Transport::Invalid: return "invalid";
  }
  return "?";
}

std::string_view to_string(Position p) noexcept {
  switch (p) {
    case Position::None: return "none";
    case Position::First: return "first";
    case Position::Middle: return "middle";
    case Position::Last: return "last";
    case Position::Only: return "only";
  }
  return "?";
}

std::string_view to_string(Operation o) noexcept {
  switch (o) {
    case Operation::None: return "none";
    case Operation::Send: return "SEND";
    case Operation::RdmaWrite: return "RDMA WRITE";
    case Operation::RdmaReadRequest: return "RDMA READ request";
    case Operation::RdmaReadResponse: return "RDMA READ response";
    case Operation::Acknowledge: return "ACK";
    case Operation::AtomicAcknowledge: return "ATOMIC ACK";
    case Operation::Atomic: return "ATOMIC";
    case Operation::Cnp: return "CNP";
  }
  return "?";
}

}  // namespace rnicsim::packet
