// Priority-based flow control (IEEE 802.1Qbb, PFC): a MAC Control frame.
//
//   Ethernet: dst 01:80:c2:00:00:01, src = the sender's MAC, EtherType 0x8808
//   MAC Control opcode 0x0101 (16 bits)
//   priority-enable vector (16 bits; bit p set: the quanta of priority p count)
//   eight 16-bit pause quanta, priority 0 first; quanta 0 is XON
//   zero padding to the 60-byte Ethernet minimum (64 with the FCS)
//
// A quantum is 512 bit times at the speed of the link: 5.12 ns at 100 Gb/s.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "packet/headers.hpp"

namespace rnicsim::packet {

inline constexpr MacAddr kPfcDestination{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
inline constexpr std::uint16_t kMacControlOpcodePfc = 0x0101;
inline constexpr std::size_t kPfcFrameBytes = 60;  // without FCS; the body is 20 bytes + 26 of padding
inline constexpr std::uint32_t kPauseQuantumBits = 512;

/// The PFC body after the Ethernet header, 20 bytes: opcode, enable vector, 8 quanta.
template <typename B>
class BasicPfcBody : public HeaderView<B, 20> {
  using Base = HeaderView<B, 20>;
 public:
  using Base::Base;
  /// MAC Control opcode, 16 bits, bytes 0..1 (0x0101 for PFC).
  constexpr std::uint16_t opcode() const noexcept { return this->get16(0); }
  /// Priority-enable vector, 16 bits, bytes 2..3 (bits 0..7 used).
  constexpr std::uint16_t enable_vector() const noexcept { return this->get16(2); }
  /// Pause quanta of priority p, 16 bits, bytes 4 + 2p.
  constexpr std::uint16_t quanta(unsigned p) const noexcept { return this->get16(4 + 2 * p); }
  constexpr void set_opcode(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(0, v); }
  constexpr void set_enable_vector(std::uint16_t v) const noexcept requires Base::kMutable { this->set16(2, v); }
  constexpr void set_quanta(unsigned p, std::uint16_t v) const noexcept requires Base::kMutable {
    this->set16(4 + 2 * p, v);
  }
};
using PfcBody = BasicPfcBody<std::byte>;
using ConstPfcBody = BasicPfcBody<const std::byte>;

struct PfcFields {
  MacAddr src{};
  std::uint8_t enable = 0;                 ///< bit p: priority p's quanta apply
  std::array<std::uint16_t, 8> quanta{};   ///< per priority; 0 = XON
  bool operator==(const PfcFields&) const = default;
};

/// Writes a PFC frame (kPfcFrameBytes) into `out`, which must hold that many bytes.
void write_pfc(const PfcFields& f, std::span<std::byte> out) noexcept;
/// The PFC fields of a MAC Control PFC frame; nullopt for any other frame.
std::optional<PfcFields> parse_pfc(std::span<const std::byte> frame) noexcept;
/// Whether a frame is a MAC Control frame (EtherType 0x8808, untagged): PAUSE or PFC.
inline bool is_mac_control(std::span<const std::byte> frame) noexcept {
  return frame.size() >= 14 && load_be16(frame.data() + 12) == kEtherTypeMacControl;
}

}  // namespace rnicsim::packet
