#include "fabric/pfc.hpp"

#include <algorithm>

namespace rnicsim::fabric {

uint64_t default_headroom(const PortParams& link, uint32_t eth_mtu) {
  // Integer steps as the driver takes them, so the figures agree to the byte.
  const uint64_t metres = static_cast<uint64_t>((link.delay.picoseconds() + 2500) / 5000);
  const uint64_t speed_mbps = link.rate_bps / 1'000'000;
  const auto response = static_cast<uint64_t>(
      static_cast<unsigned __int128>(std::max<int64_t>(0, link.pfc_response_delay.picoseconds())) * link.rate_bps /
      8'000'000'000'000ULL);
  return response + (216 * metres / 100) * speed_mbps / 1000 + 272 * uint64_t{eth_mtu} / 100;
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
      refresh_([this] { on_refresh(); }, "pfc.refresh", port.actor()) {}

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
