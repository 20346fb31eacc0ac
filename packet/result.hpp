// Result<T, E>: a value or an error code, until std::expected (C++23) is usable.
#pragma once

#include <cassert>
#include <cstdint>
#include <string_view>
#include <utility>
#include <variant>

namespace rnicsim::packet {

/// Why parse() refused a frame. Values are stable (they appear in reports).
enum class ParseError : std::uint8_t {
  TruncatedEthernet,
  TruncatedVlan,
  TruncatedIpv4,
  TruncatedIpv6,
  TruncatedUdp,
  TruncatedLrh,
  TruncatedGrh,
  TruncatedBth,
  TruncatedDeth,
  TruncatedReth,
  TruncatedAtomicEth,
  TruncatedAeth,
  TruncatedAtomicAckEth,
  TruncatedImmDt,
  TruncatedIeth,
  TruncatedCnpReserved,
  TruncatedIcrc,
  TruncatedVcrc,
  NotIp,                  ///< EtherType is neither IPv4 nor IPv6 (nor a VLAN tag over them)
  BadIpVersion,           ///< IP version nibble disagrees with the EtherType
  BadIhl,                 ///< IPv4 IHL < 5
  IpFragment,             ///< IPv4 MF set or fragment offset != 0
  NotUdp,                 ///< IP protocol / next header is not UDP
  NotRoceV2Port,          ///< UDP destination port is not 4791
  IpLengthMismatch,       ///< IP total/payload length disagrees with the frame
  UdpLengthMismatch,      ///< UDP length disagrees with the IP length
  NotIbaTransport,        ///< LRH LNH is raw or IP (no BTH follows)
  BadLver,                ///< LRH LVer != 0
  LrhLengthMismatch,      ///< LRH PktLen disagrees with the frame
  BadGrh,                 ///< GRH IPVer != 6 or NxtHdr != 0x1B
  GrhLengthMismatch,      ///< GRH PayLen disagrees with LRH PktLen
  InvalidOpcode,          ///< reserved or unsupported BTH opcode
  BadTver,                ///< BTH TVer != 0
  PadExceedsPayload,      ///< PadCnt larger than the payload bytes present
  PayloadNotAligned,      ///< payload + pad not a multiple of 4 bytes
  UnexpectedPayload,      ///< payload on an opcode that carries none (ACK, READ REQUEST, ...)
  BadMtuPayload,          ///< FIRST/MIDDLE payload is not a power of two in [256, 4096] or has pad
  PayloadTooLong,         ///< payload larger than the largest IB MTU (4096)
};

/// Why write_headers()/build() refused a PacketFields.
enum class BuildError : std::uint8_t {
  BufferTooSmall,
  InvalidOpcode,
  MissingHeader,       ///< the opcode needs an extension header the fields lack
  UnexpectedHeader,    ///< the fields carry an extension header the opcode does not have
  UnexpectedPayload,   ///< payload_length > 0 on an opcode without payload
  PadCountMismatch,    ///< pad_count != (4 - payload_length % 4) % 4
  LnhMismatch,         ///< lrh_lnh disagrees with the link kind
  FieldOutOfRange,     ///< a value wider than its field (QPN/PSN > 24 bits, VID > 4095, ...)
  PacketTooLong,       ///< IP length > 65535 or LRH PktLen > 2047 words
  PayloadSizeMismatch, ///< build(): payload span size != payload_length
};

std::string_view to_string(ParseError e) noexcept;
std::string_view to_string(BuildError e) noexcept;

/// A value of type T or an error of type E. No allocation, no exceptions.
template <typename T, typename E>
class [[nodiscard]] Result {
 public:
  constexpr Result(T v) noexcept(std::is_nothrow_move_constructible_v<T>)  // NOLINT: implicit by design
      : v_(std::in_place_index<0>, std::move(v)) {}
  constexpr Result(E e) noexcept : v_(std::in_place_index<1>, e) {}  // NOLINT: implicit by design
  /// A default-constructed value, to be filled in place (no copy of a large T).
  constexpr explicit Result(std::in_place_t) noexcept(std::is_nothrow_default_constructible_v<T>)
      : v_(std::in_place_index<0>) {}

  /// Makes this a default-constructed value again, to be filled in place.
  constexpr T& emplace() noexcept(std::is_nothrow_default_constructible_v<T>) { return v_.template emplace<0>(); }

  constexpr bool has_value() const noexcept { return v_.index() == 0; }
  constexpr explicit operator bool() const noexcept { return has_value(); }

  constexpr T& value() & noexcept { assert(has_value()); return *std::get_if<0>(&v_); }
  constexpr const T& value() const& noexcept { assert(has_value()); return *std::get_if<0>(&v_); }
  constexpr T&& value() && noexcept { assert(has_value()); return std::move(*std::get_if<0>(&v_)); }
  constexpr E error() const noexcept { assert(!has_value()); return *std::get_if<1>(&v_); }

  constexpr T& operator*() & noexcept { return value(); }
  constexpr const T& operator*() const& noexcept { return value(); }
  constexpr T* operator->() noexcept { return &value(); }
  constexpr const T* operator->() const noexcept { return &value(); }

 private:
  std::variant<T, E> v_;
};

template <typename T>
using ParseResult = Result<T, ParseError>;
template <typename T>
using BuildResult = Result<T, BuildError>;

}  // namespace rnicsim::packet
