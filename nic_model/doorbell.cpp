#include "nic_model/doorbell.hpp"

namespace rnicsim::nic {

Doorbell::Doorbell(NicContext& ctx) : ctx_(ctx), arrive_([this] { on_arrival(); }, "doorbell.arrive", ctx.actor()) {}

void Doorbell::ring(WorkQueue queue, uint64_t producer) {
  // An 8-byte MMIO write, then the unit's own processing.
  const sim::Time at = ctx_.pcie.mmio_write(ctx_.now(), 8) + ctx_.cycles(ctx_.params().doorbell_cycles);
  if (auto* t = ctx_.timeline) t->record({.kind = TimelineKind::Doorbell, .qpn = queue.qpn(), .index = producer,
                                            .queue = queue.kind(), .start = ctx_.now(), .end = at});
  in_flight_.push_back(Write{at, queue, producer});
  ++rung_;
  if (!arrive_.scheduled()) ctx_.scheduler().schedule(arrive_, in_flight_.front().arrival);
}

void Doorbell::ring_with_wqe(Qpn qpn, uint64_t producer, const SendWqe& wqe, uint32_t bytes) {
  // The WQE's lines as the host wrote them, in one write-combined MMIO burst;
  // its control segment says what a doorbell would (mlx5's BlueFlame).
  const sim::Time at = ctx_.pcie.mmio_write(ctx_.now(), bytes) + ctx_.cycles(ctx_.params().doorbell_cycles);
  if (auto* t = ctx_.timeline) t->record({.kind = TimelineKind::Doorbell, .qpn = qpn, .index = producer,
                                            .start = ctx_.now(), .end = at});
  Write w{at, WorkQueue::send(qpn), producer};
  w.has_wqe = true;
  w.wqe = wqe;
  in_flight_.push_back(w);
  ++rung_;
  if (!arrive_.scheduled()) ctx_.scheduler().schedule(arrive_, in_flight_.front().arrival);
}

void Doorbell::on_arrival() {
  const Write w = in_flight_.pop_front();
  if (!in_flight_.empty()) ctx_.scheduler().schedule(arrive_, std::max(in_flight_.front().arrival, ctx_.now()));
  WorkRing* ring = ctx_.tables.work_ring(w.queue);
  if (ring == nullptr) return;  // destroyed meanwhile
  if (w.producer > ring->producer) ring->producer = w.producer;
  QpContext* qp = w.has_wqe ? ctx_.qp(w.queue.qpn()) : nullptr;
  if (qp != nullptr && ring->fetched + 1 == w.producer && qp->state != QpState::Reset) {
    // The WQE came with the doorbell and nothing older is unfetched: no DMA read.
    ring->fetched = w.producer;
    ++with_wqe_;
    ports_.send_queue->accept_wqe(*qp, w.wqe);
    return;
  }
  ports_.fetch->kick(w.queue);
}

}  // namespace rnicsim::nic
