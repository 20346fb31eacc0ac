#include "nic_model/cqe_writer.hpp"

#include <algorithm>

namespace rnicsim::nic {
namespace {
WcOpcode wc_opcode_of(WrOpcode op) {
  switch (op) {
    case WrOpcode::RdmaWrite:
    case WrOpcode::RdmaWriteWithImm: return WcOpcode::RdmaWrite;
    case WrOpcode::RdmaRead: return WcOpcode::RdmaRead;
    case WrOpcode::AtomicCmpSwap: return WcOpcode::CompSwap;
    case WrOpcode::AtomicFetchAdd: return WcOpcode::FetchAdd;
    case WrOpcode::LocalInv: return WcOpcode::LocalInv;
    case WrOpcode::BindMw: return WcOpcode::BindMw;
    default: return WcOpcode::Send;
  }
}
}  // namespace

void CqeWriter::complete_send(QpContext& qp, const SendEntry& e, WcStatus status) {
  if (auto* t = ctx_.timeline) t->record({.kind = TimelineKind::WrDone, .qpn = qp.qpn, .psn = e.first_psn,
                                            .wr_id = e.wqe.wr_id, .code = static_cast<uint8_t>(status),
                                            .start = ctx_.now()});
  if (status == WcStatus::Success && !e.signaled) return;
  // This completes the work before it, unsignaled work included.
  ctx_.dma.memory().work_completed(qp.qpn, e.last_psn());
  Cqe c{};
  c.wr_id = e.wqe.wr_id;
  c.status = status;
  c.opcode = wc_opcode_of(e.wqe.opcode);
  c.byte_len = status == WcStatus::Success ? e.length : 0;
  c.qp_num = qp.qpn;
  post(qp, qp.send_cq, c, false);
}

bool CqeWriter::full(CqContext& cq) const {
  if (cq.producer - cq.consumer_seen < cq.capacity) return false;
  if (cq.listener == nullptr) return false;
  const std::optional<uint64_t> consumer = cq.listener->consumer_index(cq.cqn);
  if (!consumer) return false;
  cq.consumer_seen = *consumer;
  // A consumer index ahead of what was produced is no index: the ring counts as full.
  return cq.producer - cq.consumer_seen >= cq.capacity;
}

void CqeWriter::post(QpContext& qp, Cqn cqn, Cqe c, bool solicited) {
  CqContext* cq = ctx_.tables.cq(cqn);
  if (cq == nullptr || cq->entries == 0) return;
  if (!cq->overrun && full(*cq)) {
    cq->overrun = true;
    ++overruns_;
    raise(AsyncEvent::CqErr, cqn);
  }
  if (cq->overrun) {
    ++lost_;
    if (qp.state != QpState::Err) {
      raise(AsyncEvent::QpFatal, qp.qpn);
      ports_.errors->qp_fatal(qp, WcStatus::WrFlushErr);  // its flushed WQEs find the CQ in error too
    }
    return;
  }
  c.owner = cqe_owner_for(cq->producer, cq->entries);
  const uint64_t addr = cq->base + (cq->producer % cq->entries) * sizeof(Cqe);
  ++cq->producer;
  // Solicited-only notification wakes for solicited messages and for errors.
  in_flight_.push_back(Written{cqn, solicited || c.status != WcStatus::Success, std::nullopt, c, ctx_.now()});
  ctx_.dma.write_small(addr, bytes_of(c), this, cqn.value());
}

void CqeWriter::raise(AsyncEvent event, AsyncObject about) {
  in_flight_.push_back(Written{about, false, event, {}, ctx_.now()});
  ctx_.dma.write_event_entry(this, number_of(about));
}

void CqeWriter::dma_done(uint64_t tag, bool ok) {
  const Written w = in_flight_.pop_front();  // CQE writes complete in order
  if (w.event) {
    ports_.errors->async_event(*w.event, w.about);
    return;
  }
  if (auto* t = ctx_.timeline) t->record({.kind = TimelineKind::CqeWritten, .qpn = Qpn(w.cqe.qp_num), .index = number_of(w.about),
                                            .wr_id = w.cqe.wr_id, .code = static_cast<uint8_t>(w.cqe.status),
                                            .flag = w.cqe.opcode < WcOpcode::Recv, .start = w.posted,
                                            .end = ctx_.now()});
  CqContext* cq = ctx_.tables.cq(Cqn(static_cast<uint32_t>(tag)));
  if (cq == nullptr) return;
  if (!ok) {
    ++lost_;
    return;
  }
  ++written_;
  ++cq->written;
  if (w.notify) cq->written_notify = cq->written;
  if (cq->listener != nullptr) cq->listener->on_completion(cq->cqn);
  if (!cq->armed || (cq->solicited_only && !w.notify)) return;
  // Interrupt moderation: an event per `count` CQEs, or `period` after the first.
  const NicParams& p = ctx_.params();
  if (++cq->pending_events >= std::max<uint32_t>(p.cq_moderation_count, 1)) {
    ctx_.scheduler().cancel(*cq->event_timer);
    // The MSI-X write crosses PCIe to the host.
    ctx_.scheduler().schedule(*cq->event_timer, ctx_.pcie.write(ctx_.now(), 4));
  } else if (p.cq_moderation_period > sim::Duration::zero() && !cq->event_timer->scheduled()) {
    ctx_.scheduler().schedule(*cq->event_timer, ctx_.now() + p.cq_moderation_period);
  }
}

void CqeWriter::fire_event(Cqn cqn) {
  CqContext* cq = ctx_.tables.cq(cqn);
  if (cq == nullptr || !cq->armed) return;
  cq->armed = false;
  cq->pending_events = 0;
  ++cq->events;
  if (cq->listener != nullptr) cq->listener->on_event(cqn);
}

}  // namespace rnicsim::nic
