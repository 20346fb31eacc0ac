#include "packet/pfc.hpp"

#include <algorithm>

namespace rnicsim::packet {

void write_pfc(const PfcFields& f, std::span<std::byte> out) noexcept {
  std::fill(out.begin(), out.begin() + kPfcFrameBytes, std::byte{0});
  const Ethernet eth(out);
  eth.set_dst(kPfcDestination);
  eth.set_src(f.src);
  eth.set_ether_type(kEtherTypeMacControl);
  const PfcBody body(out.subspan(Ethernet::kSize));
  body.set_opcode(kMacControlOpcodePfc);
  body.set_enable_vector(f.enable);
  for (unsigned p = 0; p < 8; ++p) body.set_quanta(p, f.quanta[p]);
}

std::optional<PfcFields> parse_pfc(std::span<const std::byte> frame) noexcept {
  if (frame.size() < Ethernet::kSize + ConstPfcBody::kSize || !is_mac_control(frame)) return std::nullopt;
  const ConstEthernet eth(frame);
  const ConstPfcBody body(frame.subspan(Ethernet::kSize));
  if (eth.dst() != kPfcDestination || body.opcode() != kMacControlOpcodePfc) return std::nullopt;
  PfcFields f;
  f.src = eth.src();
  f.enable = static_cast<std::uint8_t>(body.enable_vector() & 0xFF);
  for (unsigned p = 0; p < 8; ++p) f.quanta[p] = body.quanta(p);
  return f;
}

}  // namespace rnicsim::packet
