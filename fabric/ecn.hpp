// ECN marking at an egress queue, RED/WRED style: a packet that joins a queue of
// q bytes is marked Congestion Experienced with probability 0 below Kmin, rising
// linearly to Pmax at Kmax, and 1 above Kmax (the profile DCQCN assumes). A marked
// frame keeps a valid ICRC (the ECN bits are outside it); a frame that is not
// ECN-capable is left alone.
#pragma once

#include <cstdint>

#include "fabric/frame.hpp"
#include "sim/random.hpp"

namespace rnicsim::fabric {

struct EcnParams {
  bool enabled = false;
  uint64_t kmin_bytes = 100 * 1024;  // below: never mark
  uint64_t kmax_bytes = 400 * 1024;  // above: always mark
  double pmax = 0.2;                 // marking probability at Kmax
};

// The marking probability for a queue of `queue_bytes`.
double ecn_mark_probability(const EcnParams& p, uint64_t queue_bytes);

// Draws against the probability for `queue_bytes` and marks `frame` if the draw
// says so. Returns whether the frame was marked.
bool ecn_maybe_mark(const EcnParams& p, uint64_t queue_bytes, Frame& frame, sim::RandomStream& rng);

}  // namespace rnicsim::fabric
