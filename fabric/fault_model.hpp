// Deterministic faults on a wire: rules that drop, corrupt or delay the Nth packet
// that matches a filter on opcode, PSN, destination QP and, for an
// acknowledgement, its kind (ACK, RNR NAK, NAK). A port applies its
// fault model to each frame as the frame leaves the serializer, after the link's
// own losses (Bernoulli and Gilbert-Elliott, a link that is down: see port.hpp).
//
// Corruption flips one bit, chosen by the random stream, in a part of the packet
// the ICRC covers (after the first 5 bytes of the BTH, before the ICRC), so the
// receiver's check catches it; on InfiniBand the VCRC does too.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fabric/frame.hpp"
#include "packet/packet.hpp"
#include "sim/random.hpp"
#include "sim/time.hpp"

namespace rnicsim::fabric {

enum class FaultAction : uint8_t { Drop, Corrupt, Delay };

// Which packets a rule looks at; an absent field matches everything.
struct FaultMatch {
  std::optional<packet::Opcode> opcode;
  std::optional<packet::Psn> psn;
  std::optional<packet::Qpn> dest_qp;
  std::optional<packet::AckKind> ack_kind;  // an acknowledgement's AETH kind; no AETH never matches
};

// Acts on the `nth` (1-based) matching packet and then on the next `count - 1`
// matching packets, or with `every`, on every `every`th matching packet after
// it ("drop every 256th packet of a QP"); count 0: no end.
struct FaultRule {
  FaultMatch match;
  uint64_t nth = 1;
  uint64_t count = 1;
  uint64_t every = 0;  // 0: the matching packets in a row
  FaultAction action = FaultAction::Drop;
  sim::Duration delay;  // Delay: added to the propagation delay
  uint64_t seen = 0;    // matching packets so far
};

struct FaultCounters {
  uint64_t rule_drops = 0, corrupted = 0, delayed = 0;
};

class FaultModel {
public:
  FaultModel(sim::RandomStream rng, packet::LinkType link_type) : rng_(rng), link_type_(link_type) {}

  void add_rule(const FaultRule& r) { rules_.push_back(r); }

  struct Verdict {
    bool drop = false;
    sim::Duration extra_delay;  // zero unless a delay rule fired
  };
  // Decides the fate of `frame` as it leaves; corrupts it in place if a rule says so.
  Verdict apply(Frame& frame);
  // Whether the rule acts on its `n`th matching packet (1-based).
  static bool acts_on(const FaultRule& r, uint64_t n);

  const FaultCounters& counters() const { return counters_; }

private:
  void corrupt(Frame& frame, const packet::ParsedPacket& p);

  sim::RandomStream rng_;
  packet::LinkType link_type_;
  std::vector<FaultRule> rules_;
  FaultCounters counters_;
};

}  // namespace rnicsim::fabric
