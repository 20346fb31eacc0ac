// The AETH syndrome (IBTA 9.7.5.1.1, table 43): what an acknowledgement says,
// in one byte. Bits 5-6 are its kind; bits 0-4 are the credit count of an ACK,
// the timer of an RNR NAK or the code of a NAK. The NAK codes' names are one
// table, read by the NIC's timeline and by lint.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace rnicsim::packet {

enum class AckKind : std::uint8_t { Ack = 0, RnrNak = 1, Reserved = 2, Nak = 3 };
// The kinds' names as scenarios write them (a fault rule's `aeth:`), word
// first as the scenario reader's choice() takes its rows.
struct AckKindRow {
  std::string_view name;
  AckKind kind;
};
inline constexpr std::array<AckKindRow, 3> kAckKinds{{
    {"ack", AckKind::Ack},
    {"rnr_nak", AckKind::RnrNak},
    {"nak", AckKind::Nak},
}};

enum class NakCode : std::uint8_t {
  PsnSequenceError = 0,
  InvalidRequest = 1,
  RemoteAccessError = 2,
  RemoteOperationalError = 3,
  InvalidRdRequest = 4,
};

struct NakCodeRow {
  NakCode code;
  std::string_view name;
};
inline constexpr std::array<NakCodeRow, 5> kNakCodes{{
    {NakCode::PsnSequenceError, "PSN sequence error"},
    {NakCode::InvalidRequest, "invalid request"},
    {NakCode::RemoteAccessError, "remote access error"},
    {NakCode::RemoteOperationalError, "remote operational error"},
    {NakCode::InvalidRdRequest, "invalid RD request"},
}};

class Syndrome {
 public:
  constexpr Syndrome() noexcept = default;
  constexpr explicit Syndrome(std::uint8_t raw) noexcept : raw_(raw) {}
  static constexpr Syndrome ack(std::uint8_t credits = 0x1F) noexcept { return Syndrome(credits & 0x1F); }
  static constexpr Syndrome rnr_nak(std::uint8_t timer) noexcept {
    return Syndrome(static_cast<std::uint8_t>(0x20 | (timer & 0x1F)));
  }
  static constexpr Syndrome nak(NakCode c) noexcept {
    return Syndrome(static_cast<std::uint8_t>(0x60 | static_cast<std::uint8_t>(c)));
  }

  constexpr std::uint8_t raw() const noexcept { return raw_; }
  constexpr AckKind kind() const noexcept { return static_cast<AckKind>((raw_ >> 5) & 0x3); }
  constexpr bool is_nak() const noexcept { return kind() != AckKind::Ack; }
  /// Bits 0-4: credits (ACK), the RNR timer field (RNR NAK) or the NAK code.
  constexpr std::uint8_t value() const noexcept { return raw_ & 0x1F; }
  constexpr NakCode nak_code() const noexcept { return static_cast<NakCode>(value()); }
  /// A NAK's code by name from kNakCodes ("reserved NAK code" outside it).
  constexpr std::string_view nak_name() const noexcept {
    return value() < kNakCodes.size() ? kNakCodes[value()].name : std::string_view("reserved NAK code");
  }

  friend constexpr bool operator==(Syndrome, Syndrome) noexcept = default;

 private:
  std::uint8_t raw_ = 0;
};

static_assert(Syndrome::nak(NakCode::InvalidRequest).raw() == 0x61);
static_assert(Syndrome::rnr_nak(9).kind() == AckKind::RnrNak);
static_assert(Syndrome::ack().raw() == 0x1F && !Syndrome::ack().is_nak());
static_assert([] {
  for (std::size_t i = 0; i < kNakCodes.size(); ++i)
    if (static_cast<std::size_t>(kNakCodes[i].code) != i) return false;
  return true;
}(), "kNakCodes is indexed by the code");

}  // namespace rnicsim::packet
