#include "nic_model/wqe_fetcher.hpp"

#include <algorithm>


namespace rnicsim::nic {

WqeFetcher::WqeFetcher(NicContext& ctx) : ctx_(ctx) {
  slots_.resize(ctx.params().wqe_fetch_outstanding);
  for (Slot& s : slots_) s.buffer.resize(static_cast<size_t>(ctx.params().wqe_fetch_batch) * kMaxWqeStride);
}

void WqeFetcher::kick(WorkQueue queue) {
  pending_.push_back(queue);
  issue();
}

bool WqeFetcher::recv_fetch_pending(WorkQueue queue) const {
  for (const Slot& s : slots_)
    if (s.busy && s.queue == queue) return true;
  return false;
}

void WqeFetcher::issue() {
  while (!pending_.empty() && busy_slots_ < slots_.size()) {
    const WorkQueue p = pending_.pop_front();
    if (!p.is_srq()) {
      // A QP in ERR still has its WQEs fetched: they complete with WR_FLUSH_ERR.
      QpContext* qp = ctx_.qp(p.qpn());
      if (qp == nullptr || qp->state == QpState::Reset) continue;
    }
    WorkRing* ring_ptr = ctx_.tables.work_ring(p);
    if (ring_ptr == nullptr) continue;
    WorkRing& ring = *ring_ptr;
    if (ring.fetched >= ring.producer || ring.entries == 0) continue;
    // One contiguous read: up to the batch size, not across the end of the ring.
    const uint64_t to_wrap = ring.entries - ring.fetched % ring.entries;
    const uint32_t n = static_cast<uint32_t>(
        std::min<uint64_t>({ring.producer - ring.fetched, to_wrap, ctx_.params().wqe_fetch_batch}));
    auto it = std::find_if(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.busy; });
    Slot& slot = *it;
    slot.busy = true;
    slot.queue = p;
    slot.count = n;
    slot.first = ring.fetched;
    slot.stride = ring.stride;
    slot.issued = ctx_.now();
    ++busy_slots_;
    ctx_.dma.read(ring.slot_addr(ring.fetched), std::span(slot.buffer.data(), size_t{n} * ring.stride), this,
                    static_cast<uint64_t>(it - slots_.begin()));
    ring.fetched += n;
    if (ring.fetched < ring.producer) pending_.push_back(p);
  }
}

void WqeFetcher::dma_done(uint64_t tag, bool ok) {
  Slot& slot = slots_[tag];
  slot.busy = false;
  --busy_slots_;
  if (auto* t = ctx_.timeline) t->record({.kind = TimelineKind::WqeFetch, .qpn = slot.queue.qpn(), .count = slot.count,
                                            .index = slot.first, .queue = slot.queue.kind(), .start = slot.issued,
                                            .end = ctx_.now()});
  if (slot.queue.is_srq()) {
    SrqContext* srq = ctx_.tables.srq(slot.queue.srqn());
    if (srq != nullptr && ok)
      for (uint32_t i = 0; i < slot.count; ++i)
        srq->wqes.push_back(load_wqe<RecvWqe>(slot.wqe(i)));
    fetched_ += slot.count;
    ports_.requests->recv_wqes_arrived(std::nullopt);
    issue();
    return;
  }
  QpContext* qp = ctx_.qp(slot.queue.qpn());
  if (qp != nullptr && ok) {
    for (uint32_t i = 0; i < slot.count; ++i) {
      const auto bytes = slot.wqe(i);
      if (slot.queue.kind() == QueueKind::Send) {
        ports_.send_queue->accept_wqe(*qp, load_wqe<SendWqe>(bytes));
      } else if (qp->state == QpState::Err) {
        ports_.errors->flush_recv(*qp, load_wqe<RecvWqe>(bytes));
      } else {
        qp->recv_wqes.push_back(load_wqe<RecvWqe>(bytes));
      }
      ++fetched_;
    }
    if (slot.queue.kind() == QueueKind::Recv) ports_.requests->recv_wqes_arrived(slot.queue.qpn());
  } else if (qp != nullptr) {
    ports_.errors->qp_fatal(*qp, WcStatus::LocQpOpErr);
  }
  issue();
}

}  // namespace rnicsim::nic
