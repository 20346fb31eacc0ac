// The NIC's egress: frames ready to leave go to its fabric port, within the
// NIC's transmit buffer. Frames addressed to the NIC itself (between two QPs of
// one host) turn around here, as hardware loopback does, and never reach the port.
#pragma once

#include <cstddef>

#include "fabric/port.hpp"
#include "nic_model/nic_context.hpp"
#include "nic_model/ports.hpp"
#include "sim/ring_queue.hpp"
#include "sim/scheduler.hpp"

namespace rnicsim::nic {

class Egress final : public WirePort {
public:
  explicit Egress(NicContext& ctx);
  // `loop_to`: where frames to the NIC itself arrive (the NIC's receive side).
  void connect(fabric::FrameSink& loop_to) { loop_to_ = &loop_to; }
  void attach(fabric::Port& port) { port_ = &port; }
  fabric::Port* port() const { return port_; }
  bool has_room(size_t bytes) const override;
  void transmit(fabric::Frame&& frame) override;
  uint32_t withdraw(Qpn qpn, uint8_t priority, Psn from) override;

private:
  bool addressed_to_self(const fabric::Frame& frame) const;
  void deliver_loopback();
  NicContext& ctx_;
  fabric::Port* port_ = nullptr;
  fabric::FrameSink* loop_to_ = nullptr;
  sim::RingQueue<fabric::Frame> loopback_;
  sim::Event loopback_event_;
};

}  // namespace rnicsim::nic
