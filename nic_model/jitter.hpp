// Jitter: a NIC's latencies vary from packet to packet (arbitration between its
// units, clock-domain crossings, memory behind caches), so measured latencies
// show a spread (t_min < t_typical < t_max). The model draws a seeded delay for
// each packet's pass through the transmit and the receive pipeline, exponential
// with the preset's mean (`jitter_mean`); a frame never passes one queued ahead
// of it. Mean 0 (the default) draws nothing: the model is exact, as without it.
// Each NIC draws from a stream of its own (the scenario seed and its name), in
// the order of its own events, so a seed gives the same draws on any partition.
#pragma once

#include <cmath>

#include "sim/random.hpp"
#include "sim/time.hpp"

namespace rnicsim::nic {

class Jitter {
public:
  Jitter(sim::Duration mean, sim::RandomStream stream) : mean_ps_(static_cast<double>(mean.picoseconds())), stream_(stream) {}
  bool on() const { return mean_ps_ > 0; }
  // One packet's extra delay (zero when off).
  sim::Duration draw() {
    if (!on()) return sim::Duration::zero();
    return sim::Duration::ps(static_cast<int64_t>(std::llround(stream_.exponential(mean_ps_))));
  }

private:
  double mean_ps_;
  sim::RandomStream stream_;
};

}  // namespace rnicsim::nic
