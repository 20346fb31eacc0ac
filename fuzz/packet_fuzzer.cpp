// Fuzzes what a receiving NIC runs on an arriving frame: packet::parse() of
// RoCEv2 (Ethernet) and InfiniBand frames, the ICRC, VCRC and checksum checks,
// PFC parsing, and what a switch does to a frame (ECN marking, re-sealing).
// The first byte of the input picks the link type, the rest is the frame.
//
// Besides "no crash, no read outside the frame", it checks that the codec agrees
// with itself: a frame that parses can be built again from its fields and parses
// back to the same fields; a frame sealed anew passes every check; ECN marking
// keeps the ICRC valid.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "packet/packet.hpp"
#include "packet/pfc.hpp"

namespace {

using namespace rnicsim::packet;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "packet fuzzer: check failed: %s\n", what);
  std::abort();
}

bool all_checks_pass(std::span<const std::byte> frame, const ParsedPacket& p) {
  return icrc_ok(frame, p) && vcrc_ok(frame, p) && ipv4_checksum_ok(frame, p) && udp_checksum_ok(frame, p);
}

void check_rebuild(const ParsedPacket& p) {
  std::array<std::byte, 8192> out{};
  auto built = build(p.fields, p.payload, out);
  require(built.has_value(), "a parsed packet's fields build");
  const std::span<const std::byte> frame(out.data(), *built);
  auto again = parse(frame, link_type(p.fields.link));
  require(again.has_value(), "a built frame parses");
  require(again->fields == p.fields, "parse(build(fields)) == fields");
  require(all_checks_pass(frame, *again), "a built frame passes its checks");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const LinkType link = (data[0] & 1) != 0 ? LinkType::Infiniband : LinkType::Ethernet;
  const std::vector<std::byte> frame(reinterpret_cast<const std::byte*>(data) + 1,
                                     reinterpret_cast<const std::byte*>(data) + size);

  // The receive path: parse, then the CRCs and checksums.
  auto parsed = parse(frame, link);
  bool checks = false;
  if (parsed) {
    const ParsedPacket& p = *parsed;
    require(p.payload.empty() || (p.payload.data() >= frame.data() &&
                                  p.payload.data() + p.payload.size() <= frame.data() + frame.size()),
            "the payload lies inside the frame");
    require(p.payload.size() == p.fields.payload_length, "payload span matches payload_length");
    checks = all_checks_pass(frame, p);
    check_rebuild(p);
    // The BTH a NIC reads before parsing (to steer the packet) is the parsed one.
    const auto bth = bth_of(frame, link);
    require(bth && bth->dest_qp() == p.fields.dest_qp && bth->opcode() == static_cast<std::uint8_t>(p.fields.opcode),
            "bth_of finds the BTH parse() found");
  } else {
    (void)bth_of(frame, link);  // never reads outside the frame, whatever it holds
    require(!to_string(parsed.error()).empty(), "every parse error has a name");
  }
  if (link == LinkType::Ethernet) {
    if (is_mac_control(frame)) (void)parse_pfc(frame);

    // A switch marking the frame: the ICRC does not cover the ECN bits.
    std::vector<std::byte> marked = frame;
    if (mark_congestion_experienced(marked) && parsed) {
      auto again = parse(marked, link);
      require(again.has_value(), "an ECN-marked frame still parses");
      require(all_checks_pass(marked, *again) == checks, "ECN marking keeps the frame's checks as they were");
    }
  }

  // Sealing the frame anew (what a fault model does after corrupting a frame).
  std::vector<std::byte> sealed = frame;
  if (complete_seal(sealed, link)) {
    auto again = parse(sealed, link);
    require(again.has_value(), "a sealed frame parses");
    require(all_checks_pass(sealed, *again), "a sealed frame passes its checks");
  }
  return 0;
}
