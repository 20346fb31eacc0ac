#include "nic_model/egress.hpp"

#include <cstring>

namespace rnicsim::nic {

Egress::Egress(NicContext& ctx) : ctx_(ctx), loopback_event_([this] { deliver_loopback(); }, "nic.loopback", ctx.actor()) {}

bool Egress::has_room(size_t bytes) const {
  return port_ != nullptr && port_->queued_total() + bytes <= ctx_.params().tx_buffer_bytes &&
         port_->has_room_total(bytes);
}

bool Egress::addressed_to_self(const fabric::Frame& frame) const {
  const auto b = frame.bytes_as_built();  // headers only: no need for the CRCs
  if (packet::is_roce(ctx_.config.link))
    return b.size() >= 6 && std::memcmp(b.data(), ctx_.config.mac.data(), 6) == 0;
  // IB: the LRH's DLID (bytes 2..3, big-endian).
  return b.size() >= 4 && ((static_cast<uint16_t>(b[2]) << 8) | static_cast<uint16_t>(b[3])) == ctx_.config.lid;
}

void Egress::deliver_loopback() {
  fabric::Frame f = loopback_.pop_front();
  if (!loopback_.empty()) ctx_.scheduler().schedule(loopback_event_, ctx_.now());
  loop_to_->receive(std::move(f));
}

void Egress::transmit(fabric::Frame&& frame) {
  if (addressed_to_self(frame)) {
    ++ctx_.stats.loopback;
    loopback_.push_back(std::move(frame));
    if (!loopback_event_.scheduled()) ctx_.scheduler().schedule(loopback_event_, ctx_.now());
    return;
  }
  if (port_ == nullptr) return;
  ++ctx_.stats.tx_packets;
  ctx_.stats.tx_bytes += frame.size();
  if (!port_->send(std::move(frame))) ++ctx_.stats.tx_drops;
}

uint32_t Egress::withdraw(Qpn qpn, uint8_t priority, Psn from) {
  if (port_ == nullptr) return 0;
  uint64_t bytes = 0;
  const size_t n = port_->withdraw(priority, [&](const fabric::Frame& f) {
    const fabric::FrameMeta& m = f.meta();
    const bool match = m.request && m.flow_id == qpn.value() && Psn::distance(from, m.psn) >= 0;
    if (match) bytes += f.size();
    return match;
  });
  ctx_.stats.tx_packets -= n;  // they never left
  ctx_.stats.tx_bytes -= bytes;
  return static_cast<uint32_t>(n);
}

}  // namespace rnicsim::nic
