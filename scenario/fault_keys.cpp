#include "scenario/fault_keys.hpp"

#include <charconv>
#include <stdexcept>

#include "packet/opcode.hpp"
#include "scenario/units.hpp"
#include "scenario/yaml_reader.hpp"

namespace rnicsim::scenario {
namespace {

const KeyInfo kFaultKeys[] = {
    {"link", "", "[host, host]", "", "the rule acts on both directions of this link (or host:)"},
    {"host", "", "host name", "", "the rule acts on what this host sends or receives (or link:)"},
    {"direction", "both", "tx | rx | both", "", "host: what it sends, receives, or both"},
    {"action", "", "drop | corrupt | delay", "", "what the rule does to the packets it matches (required)"},
    {"delay", "", "time (10us)", "", "action: delay: added to the propagation delay (required with it)"},
    {"opcode", "any", "IBTA name | number", "", "match packets of this opcode (RC_RDMA_WRITE_MIDDLE)"},
    {"psn", "any", "24-bit number (decimal or 0x hex)", "", "match packets with this PSN"},
    {"qpn", "any", "24-bit number (decimal or 0x hex)", "", "match packets to this destination QP"},
    {"aeth", "any", "ack | rnr_nak | nak", "", "match acknowledgements of this kind (nak: a lost NAK)"},
    {"nth", "1", "count", ">= 1", "act from the nth matching packet"},
    {"count", "1; with every, no end", "count", ">= 1", "act on this many matching packets from there"},
    {"every", "", "count", ">= 1", "act on every Nth matching packet from there, not on those in a row"},
};

packet::Opcode read_opcode(const Reader& r, const YAML::Node& n) {
  const std::string s = r.scalar(n, "opcode");
  unsigned v = 0;
  const int base = s.rfind("0x", 0) == 0 ? 16 : 10;
  const char* begin = s.data() + (base == 16 ? 2 : 0);
  auto [p, ec] = std::from_chars(begin, s.data() + s.size(), v, base);
  if (ec == std::errc() && p == s.data() + s.size() && v < 256 && packet::is_valid_opcode(static_cast<uint8_t>(v)))
    return static_cast<packet::Opcode>(v);
  for (unsigned i = 0; i < 256; ++i) {
    const auto op = static_cast<uint8_t>(i);
    if (packet::is_valid_opcode(op) && packet::opcode_info(static_cast<packet::Opcode>(op)).name == s)
      return static_cast<packet::Opcode>(op);
  }
  r.fail(n, "expected an opcode (an IBTA name like RC_RDMA_WRITE_MIDDLE, or its number), got '" + s + "'");
}

uint32_t read_u24(const Reader& r, const YAML::Node& n, const std::string& what) {
  const std::string s = r.scalar(n, what);
  uint32_t v = 0;
  const bool hex = s.rfind("0x", 0) == 0;
  auto [p, ec] = std::from_chars(s.data() + (hex ? 2 : 0), s.data() + s.size(), v, hex ? 16 : 10);
  if (ec != std::errc() || p != s.data() + s.size() || v > 0xFFFFFF)
    r.fail(n, "expected " + what + " (a 24-bit number, decimal or 0x hex), got '" + s + "'");
  return v;
}

}  // namespace

std::vector<FaultSpec> read_faults(const Reader& r, const YAML::Node& n, const KnownHost& known_host) {
  if (!n.IsSequence()) r.fail(n, "expected 'faults' to be a list");
  std::vector<FaultSpec> out;
  for (const YAML::Node& e : n) {
    r.expect_keys(e, "a fault", kFaultKeys);
    FaultSpec f;
    if (e["link"] && e["host"]) r.fail(e["host"], "a fault names either a 'link' or a 'host', not both");
    if (e["link"]) {
      const YAML::Node l = e["link"];
      if (!l.IsSequence() || l.size() != 2) r.fail(l, "expected 'link' to list exactly two hosts");
      f.link_a = known_host(l[0], "fault link end");
      f.link_b = known_host(l[1], "fault link end");
      if (e["direction"]) r.fail(e["direction"], "'direction' goes with 'host'; a 'link' fault acts both ways");
    } else if (e["host"]) {
      f.host = known_host(e["host"], "fault host");
      const std::string d = e["direction"] ? r.scalar(e["direction"], "direction") : "both";
      if (d != "tx" && d != "rx" && d != "both")
        r.fail(e["direction"], "direction must be tx (what the host sends), rx (what it receives) or both");
      f.tx = d != "rx";
      f.rx = d != "tx";
    } else {
      r.fail(e, "a fault needs 'link: [host, host]' or 'host: NAME'");
    }
    if (!e["action"]) r.fail(e, "a fault needs 'action: drop|corrupt|delay' (random loss and outages go in links:)");
    fabric::FaultRule& rule = f.rule;
    const std::string a = r.scalar(e["action"], "action");
    if (a == "drop") rule.action = fabric::FaultAction::Drop;
    else if (a == "corrupt") rule.action = fabric::FaultAction::Corrupt;
    else if (a == "delay") rule.action = fabric::FaultAction::Delay;
    else r.fail(e["action"], "action must be drop, corrupt or delay, not '" + a + "'");
    if (rule.action == fabric::FaultAction::Delay) {
      if (!e["delay"]) r.fail(e["action"], "action: delay needs 'delay' (a time like 10us)");
      rule.delay = r.parsed<sim::Duration>(e["delay"], "delay (a time like 10us)", parse_duration);
    } else if (e["delay"]) {
      r.fail(e["delay"], "'delay' goes with action: delay");
    }
    if (e["opcode"]) rule.match.opcode = read_opcode(r, e["opcode"]);
    if (e["psn"]) rule.match.psn = packet::Psn(read_u24(r, e["psn"], "psn"));
    if (e["qpn"]) rule.match.dest_qp = packet::Qpn(read_u24(r, e["qpn"], "qpn"));
    if (e["aeth"]) rule.match.ack_kind = r.choice(e["aeth"], "aeth", packet::kAckKinds);
    if (e["nth"]) rule.nth = r.integer(e["nth"], "nth", 1, UINT64_MAX);
    if (e["every"]) {
      rule.every = r.integer(e["every"], "every", 1, UINT64_MAX);
      rule.count = 0;
    }
    if (e["count"]) rule.count = r.integer(e["count"], "count", 1, UINT64_MAX);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<KeySection> fault_key_sections() { return {{"faults[]", "", kFaultKeys}}; }

}  // namespace rnicsim::scenario
