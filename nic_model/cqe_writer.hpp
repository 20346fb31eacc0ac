// The CQE writer: builds completion entries and DMA-writes them into the CQ ring
// in host memory. DMA writes are ordered, so a CQE is visible only after the data
// of its message. When the write lands, the CQ's listener (the host) is told.
#pragma once

#include <cstdint>

#include "nic_model/dma_engine.hpp"
#include "nic_model/qp_context.hpp"
#include "sim/ring_queue.hpp"

namespace rnicsim::nic {

class Nic;

class CqeWriter : public DmaClient {
public:
  explicit CqeWriter(Nic& nic) : nic_(nic) {}
  // Completes a send-queue WQE (writes a CQE if it is signaled or failed).
  void complete_send(QpContext& qp, const SendEntry& e, WcStatus status);
  // Writes `cqe` (owner bit filled in here) to completion queue `cqn`.
  // `solicited`: the completion is of a message with the solicited-event bit.
  void post(uint32_t cqn, Cqe cqe, bool solicited = false);
  // The CQ's interrupt: moderation decided it is due.
  void fire_event(uint32_t cqn);
  void dma_done(uint64_t tag, bool ok) override;
  uint64_t written() const { return written_; }
  uint64_t overflows() const { return overflows_; }

private:
  struct Written {
    uint32_t cqn;
    bool notify;  // may raise a completion event
  };
  Nic& nic_;
  sim::RingQueue<Written> in_flight_;
  uint64_t written_ = 0;
  uint64_t overflows_ = 0;
};

}  // namespace rnicsim::nic
