#include "nic_model/tx_pipeline.hpp"

namespace rnicsim::nic {

TxPipeline::TxPipeline(NicContext& ctx) : ctx_(ctx), drain_event_([this] { drain_and_wake(); }, "tx.drain", ctx.actor()) {}

bool TxPipeline::has_room(size_t bytes) const {
  if (pending_.size() < ctx_.params().tx_pipeline_packets && ports_.wire->has_room(bytes_ + bytes)) return true;
  if (refused_bytes_ == 0 || bytes < refused_bytes_) refused_bytes_ = bytes;
  return false;
}

void TxPipeline::submit(fabric::Frame&& frame, const packet::FrameLayout& layout, std::span<const DmaPiece> pieces,
                        Qpn qpn, TxOrigin origin, const ChunkRead& chunk) {
  const uint64_t id = front_id_ + pending_.size();
  Pending& p = pending_.emplace_back();
  p.layout = layout;
  p.qpn = qpn;
  p.origin = origin;
  p.frame = std::move(frame);
  p.reads_left = static_cast<uint32_t>(pieces.size() + chunk.ahead.size());
  p.failed = false;
  p.withdrawn = false;
  p.submitted = ctx_.now();
  p.ready_at = p.submitted + ctx_.cycles(ctx_.params().tx_latency_cycles) + ctx_.jitter.draw();
  bytes_ += p.frame.size();
  const ReadSource source = chunk.buffered ? ReadSource::Buffered : ReadSource::Pcie;
  if (p.frame.elided() > 0) {
    for (const DmaPiece& piece : pieces) ctx_.dma.read_elided(piece.host_addr, piece.length, this, id, source);
  } else if (!pieces.empty()) {
    std::byte* payload = p.frame.bytes().data() + layout.payload_offset;
    // A request's payload is the requester's own posted buffer; a response's is
    // the responder's memory, which its owner may change at any time. A
    // request's payload in one piece may stay in host memory until needed (see
    // fabric::Frame, "Borrowed payload").
    const ReadMode mode = origin == TxOrigin::Response ? ReadMode::Now
                          : pieces.size() == 1           ? ReadMode::Lend
                                                         : ReadMode::Copy;
    for (const DmaPiece& piece : pieces)
      ctx_.dma.read(piece.host_addr, std::span<std::byte>(payload + piece.offset, piece.length), this, id, mode,
                      qpn, source);
  }
  // The rest of the chunk: read now, its bytes taken by the packets that carry them.
  for (const DmaPiece& piece : chunk.ahead) ctx_.dma.read_elided(piece.host_addr, piece.length, this, id);
  drain();
}

uint32_t TxPipeline::withdraw(Qpn qpn, uint8_t priority, Psn from) {
  uint32_t n = 0;
  for (size_t i = 0; i < pending_.size(); ++i) {
    Pending& p = pending_[i];
    const fabric::FrameMeta& m = p.frame.meta();
    if (p.withdrawn || p.origin == TxOrigin::Response || p.qpn != qpn || !m.request ||
        Psn::distance(from, m.psn) < 0)
      continue;
    p.withdrawn = true;
    ++n;
  }
  return n + ports_.wire->withdraw(qpn, priority, from);
}

void TxPipeline::dma_done(uint64_t tag, bool ok) {
  // The tag is the submission number of the frame the read fills.
  Pending& p = pending_[tag - front_id_];
  --p.reads_left;
  if (!ok) p.failed = true;
  if (auto* t = ctx_.timeline; t != nullptr && p.reads_left == 0 && p.origin != TxOrigin::Response)
    t->record({.kind = TimelineKind::PayloadRead, .qpn = p.qpn, .psn = p.frame.meta().psn,
               .start = p.submitted, .end = ctx_.now()});
  drain_and_wake();
}

bool TxPipeline::take_loan(uint64_t tag, std::byte* dst, size_t length, const Loan& loan) {
  fabric::Frame& frame = pending_[tag - front_id_].frame;
  const auto offset = static_cast<uint32_t>(dst - frame.bytes_as_built().data());
  frame.lend_payload(*loan.lender, offset, loan.bytes, static_cast<uint32_t>(length));
  return true;
}

void TxPipeline::drain_and_wake() {
  const bool was_refused = refused_bytes_ != 0;
  drain();
  // Moving frames to the port frees pipeline slots, not port room: a producer
  // told no needs to hear of it only if it would now be told yes.
  if (was_refused && has_room(refused_bytes_)) {
    refused_bytes_ = 0;
    for (RoomPort* p : ports_.producers) p->room_available();
  }
}

void TxPipeline::drain() {
  while (!pending_.empty() && pending_.front().reads_left == 0) {
    Pending& p = pending_.front();
    if (p.ready_at > ctx_.now()) {  // still in the pipeline
      if (!drain_event_.scheduled()) ctx_.scheduler().schedule(drain_event_, p.ready_at);
      return;
    }
    bytes_ -= p.frame.size();
    fabric::Frame frame = std::move(p.frame);
    const packet::FrameLayout layout = p.layout;
    const Qpn qpn = p.qpn;
    const TxOrigin origin = p.origin;
    const bool failed = p.failed;
    const bool withdrawn = p.withdrawn;
    pending_.pop();
    ++front_id_;
    QpContext* qp = ctx_.qp(qpn);
    if (withdrawn || qp == nullptr || qp->state == QpState::Err || qp->state == QpState::Reset) continue;
    if (failed) {
      ports_.errors->qp_fatal(*qp, WcStatus::LocProtErr);
      continue;
    }
    if (frame.elided() > 0) {
      packet::seal_headers(frame.bytes(), layout);  // a size-only frame has no pad or CRCs
    } else {
      // Pad and checksums now; the CRCs when (if ever) someone looks at the frame.
      packet::seal_without_crc(frame.builder_bytes(), layout);
      frame.defer_seal(packet::is_roce(layout.link) ? &packet::complete_seal_ethernet
                                                    : &packet::complete_seal_infiniband);
    }
    if (auto* t = ctx_.timeline; t != nullptr && origin != TxOrigin::Response)
      t->record({.kind = TimelineKind::PacketOut, .qpn = qpn, .psn = frame.meta().psn, .start = ctx_.now()});
    ports_.wire->transmit(std::move(frame));
    if (origin == TxOrigin::RequestEndsUnreliableWqe) ports_.send_queue->unreliable_wqe_sent(*qp);
  }
}

}  // namespace rnicsim::nic
