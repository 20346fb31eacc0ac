#include "fabric/pfc.hpp"

#include <algorithm>

namespace rnicsim::fabric {

uint64_t default_headroom(const PortParams& link, uint32_t max_frame_bytes) {
  const uint64_t cable_bytes =
      static_cast<uint64_t>(static_cast<double>(link.delay.picoseconds()) * 1e-12 * static_cast<double>(link.rate_bps) / 8);
  const uint64_t frame = max_frame_bytes + link.wire_overhead_bytes;
  const uint64_t pause = packet::kPfcFrameBytes + link.wire_overhead_bytes;
  return 2 * (frame + cable_bytes) + pause + frame;
}

PfcGenerator::PfcGenerator(sim::Simulator& sim, FramePool& pool, Port& port, const packet::MacAddr& mac,
                           const PfcParams& params)
    : sim_(sim),
      pool_(pool),
      port_(port),
      mac_(mac),
      params_(params),
      refresh_after_(port.pause_quantum() *
                     std::max<int64_t>(1, static_cast<int64_t>(params.quanta * params.refresh))),
      refresh_([this] { on_refresh(); }, "pfc.refresh") {}

void PfcGenerator::set_congested(uint8_t priority, bool congested) {
  if (!params_.lossless(priority) || congested == xoff(priority)) return;
  const auto bit = static_cast<uint8_t>(1u << priority);
  if (congested) {
    xoff_mask_ |= bit;
    ++counters_.xoff[priority];
    send(bit, 0);
    if (!refresh_.scheduled()) sim_.scheduler().schedule_in(refresh_, refresh_after_);
  } else {
    xoff_mask_ &= static_cast<uint8_t>(~bit);
    ++counters_.xon[priority];
    send(bit, bit);
    if (xoff_mask_ == 0) sim_.scheduler().cancel(refresh_);
  }
}

void PfcGenerator::on_refresh() {
  if (xoff_mask_ == 0) return;
  for (uint8_t p = 0; p < 8; ++p)
    if ((xoff_mask_ >> p) & 1) ++counters_.refresh[p];
  send(xoff_mask_, 0);
  sim_.scheduler().schedule_in(refresh_, refresh_after_);
}

void PfcGenerator::send(uint8_t enable, uint8_t xon_mask) {
  packet::PfcFields f;
  f.src = mac_;
  f.enable = enable;
  for (size_t p = 0; p < 8; ++p)
    if ((enable >> p) & 1) f.quanta[p] = (xon_mask >> p) & 1 ? 0 : params_.quanta;
  Frame frame = pool_.acquire(packet::kPfcFrameBytes);
  packet::write_pfc(f, frame.bytes());
  frame.meta().created = sim_.now();
  ++counters_.frames;
  port_.send_control(std::move(frame));
}

}  // namespace rnicsim::fabric
