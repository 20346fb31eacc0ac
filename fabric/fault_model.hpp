// What can go wrong on a wire, all driven by the scenario's seed: Gilbert-Elliott
// burst loss, deterministic rules (drop, corrupt or delay the Nth packet that
// matches a filter on opcode, PSN and destination QP), and the link going down and
// up at given times. A port applies its fault model to each frame as the frame
// leaves the serializer; the port's own Bernoulli loss comes first.
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

// Two-state Markov loss: each frame first moves the chain (good -> bad with
// p_good_to_bad, bad -> good with p_bad_to_good), then is lost with the loss
// probability of the state it is in.
struct GilbertElliott {
  double p_good_to_bad = 0.0;
  double p_bad_to_good = 1.0;
  double loss_good = 0.0;
  double loss_bad = 1.0;
};

enum class FaultAction : uint8_t { Drop, Corrupt, Delay };

// Which packets a rule looks at; an absent field matches everything.
struct FaultMatch {
  std::optional<packet::Opcode> opcode;
  std::optional<uint32_t> psn;
  std::optional<uint32_t> dest_qp;
};

// Acts on the `nth` (1-based) matching packet and the `count - 1` matching
// packets after it.
struct FaultRule {
  FaultMatch match;
  uint64_t nth = 1;
  uint64_t count = 1;
  FaultAction action = FaultAction::Drop;
  sim::Duration delay;  // Delay: added to the propagation delay
  uint64_t seen = 0;    // matching packets so far
};

// The link is down from `at` for `length`: frames leaving then are lost.
struct LinkOutage {
  sim::Time at;
  sim::Duration length;
};

struct FaultCounters {
  uint64_t burst_losses = 0, rule_drops = 0, corrupted = 0, delayed = 0, link_down_drops = 0;
  uint64_t total_drops() const { return burst_losses + rule_drops + link_down_drops; }
};

class FaultModel {
public:
  FaultModel(sim::RandomStream rng, packet::LinkType link_type) : rng_(rng), link_type_(link_type) {}

  void set_gilbert_elliott(const GilbertElliott& g) { ge_ = g; }
  void add_rule(const FaultRule& r) { rules_.push_back(r); }
  void add_outage(const LinkOutage& o) { outages_.push_back(o); }

  struct Verdict {
    bool drop = false;
    sim::Duration extra_delay;  // zero unless a delay rule fired
  };
  // Decides the fate of `frame` leaving at `now`; corrupts it in place if a rule says so.
  Verdict apply(Frame& frame, sim::Time now);

  bool link_down(sim::Time now) const;
  const FaultCounters& counters() const { return counters_; }

private:
  bool burst_loss();
  void corrupt(Frame& frame, const packet::ParsedPacket& p);

  sim::RandomStream rng_;
  packet::LinkType link_type_;
  std::optional<GilbertElliott> ge_;
  bool ge_bad_ = false;
  std::vector<FaultRule> rules_;
  std::vector<LinkOutage> outages_;
  FaultCounters counters_;
};

}  // namespace rnicsim::fabric
