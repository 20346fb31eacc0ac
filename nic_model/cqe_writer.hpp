// The CQE writer: builds completion entries and DMA-writes them into the CQ ring
// in host memory. DMA writes are ordered, so a CQE is visible only after the data
// of its message. When the write lands, the CQ's listener (the host) is told.
//
// A CQE never overwrites one the host has not consumed: when the ring looks full
// the writer reads the consumer index the host published again, and if the ring
// is full the CQ overruns (IBTA's CQ overrun): it goes into error and writes
// nothing more (IBV_EVENT_CQ_ERR), and the QP whose completion had no room goes
// to ERR (IBV_EVENT_QP_FATAL).
#pragma once

#include <cstdint>
#include <optional>

#include "nic_model/nic_context.hpp"
#include "nic_model/ports.hpp"
#include "nic_model/dma_engine.hpp"
#include "nic_model/qp_context.hpp"
#include "sim/ring_queue.hpp"

namespace rnicsim::nic {

class CqeWriter final : public CompletionPort, public DmaClient {
public:
  explicit CqeWriter(NicContext& ctx) : ctx_(ctx) {}
  // The ports it sends into.
  struct Ports {
    QpErrorPort* errors = nullptr;
  };
  void connect(const Ports& ports) { ports_ = ports; }
  // Completes a send-queue WQE (writes a CQE if it is signaled or failed).
  void complete_send(QpContext& qp, const SendEntry& e, WcStatus status) override;
  // The owner bit is filled in here.
  void post(QpContext& qp, Cqn cqn, Cqe cqe, bool solicited) override;
  // Writes an event queue entry for `event` on object `id`: the event reaches
  // the host after every CQE written before it.
  void raise(AsyncEvent event, AsyncObject about);
  // The CQ's interrupt: moderation decided it is due.
  void fire_event(Cqn cqn);
  void dma_done(uint64_t tag, bool ok) override;
  uint64_t written() const { return written_; }
  uint64_t overruns() const { return overruns_; }        // CQs that overran
  uint64_t lost() const { return lost_; }                // CQEs not written: CQ in error, or the write failed

private:
  struct Written {
    AsyncObject about;  // a CQE's CQ, or an event's object
    bool notify;   // a CQE that may raise a completion event
    std::optional<AsyncEvent> event;  // an event queue entry, not a CQE
    Cqe cqe{};                        // what it writes, and when it was posted (for the timeline)
    sim::Time posted;
  };
  bool full(CqContext& cq) const;
  NicContext& ctx_;
  Ports ports_;
  sim::RingQueue<Written> in_flight_;
  uint64_t written_ = 0;
  uint64_t overruns_ = 0;
  uint64_t lost_ = 0;
};

}  // namespace rnicsim::nic
