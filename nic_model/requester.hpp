// The requester: turns send WQEs into packets. It segments each message at the
// path MTU, assigns PSNs, DMA-reads the payload straight into the frame, has the
// packet layer seal it (ICRC) and queues it at the port. It serves the QPs that
// have work round-robin, one packet per `requester_cycles_per_packet`, and stops
// when the port's queue or its own DMA pipeline is full.
#pragma once

#include <cstdint>

#include "fabric/frame.hpp"
#include "nic_model/dma_engine.hpp"
#include "nic_model/qp_context.hpp"
#include "packet/packet.hpp"
#include "sim/ring_queue.hpp"
#include "sim/scheduler.hpp"

namespace rnicsim::nic {

class Nic;

class Requester : public DmaClient {
public:
  explicit Requester(Nic& nic);
  // A fetched WQE joins its QP's send queue.
  void accept_wqe(QpContext& qp, const SendWqe& wqe);
  // The QP may have packets to send (new WQEs, an ACK that opened the window, a rewind).
  void kick(QpContext& qp);
  // Go-back-N: send again from `psn` (an unacknowledged PSN) on.
  void rewind(QpContext& qp, Psn psn);
  // The port has room again.
  void port_ready();
  void dma_done(uint64_t tag, bool ok) override;

  uint64_t packets_sent() const { return packets_; }

private:
  struct PendingTx {
    fabric::Frame frame;
    packet::FrameLayout layout;
    uint32_t reads_left = 0;
    bool failed = false;
    uint32_t qpn = 0;
    bool completes_entry = false;  // UC/UD: the WQE completes when this last packet leaves
  };
  bool can_send(const QpContext& qp) const;
  void step();
  void build_packet(QpContext& qp);
  void drain();

  Nic& nic_;
  sim::RingQueue<uint32_t> ready_;
  sim::RingQueue<PendingTx> pending_;
  uint64_t pipeline_bytes_ = 0;
  sim::Event step_;
  sim::Time next_free_;
  uint64_t packets_ = 0;
};

}  // namespace rnicsim::nic
