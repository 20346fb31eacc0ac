#include "fabric/ecn.hpp"

#include "packet/packet.hpp"

namespace rnicsim::fabric {

double ecn_mark_probability(const EcnParams& p, uint64_t queue_bytes) {
  if (!p.enabled || queue_bytes <= p.kmin_bytes) return 0.0;
  if (queue_bytes >= p.kmax_bytes) return 1.0;
  return p.pmax * static_cast<double>(queue_bytes - p.kmin_bytes) / static_cast<double>(p.kmax_bytes - p.kmin_bytes);
}

bool ecn_maybe_mark(const EcnParams& p, uint64_t queue_bytes, Frame& frame, sim::RandomStream& rng) {
  const double prob = ecn_mark_probability(p, queue_bytes);
  if (prob <= 0.0) return false;
  if (prob < 1.0 && !rng.bernoulli(prob)) return false;
  // Looking at the bytes completes a deferred seal first: the frame carries its
  // real ICRC, which the ECN bits do not change.
  return packet::mark_congestion_experienced(frame.bytes());
}

}  // namespace rnicsim::fabric
