#include "nic_model/tx_pipeline.hpp"

#include "nic_model/nic.hpp"

namespace rnicsim::nic {

bool TxPipeline::has_room(size_t bytes) const {
  return pending_.size() < nic_.params().tx_pipeline_packets && nic_.tx_has_room(bytes_ + bytes);
}

void TxPipeline::submit(fabric::Frame&& frame, const packet::FrameLayout& layout, std::span<const DmaPiece> pieces,
                        uint32_t qpn, TxOrigin origin) {
  Pending p;
  p.layout = layout;
  p.qpn = qpn;
  p.origin = origin;
  p.frame = std::move(frame);
  std::span<std::byte> payload = p.frame.bytes().subspan(layout.payload_offset, layout.payload_length);
  for (const DmaPiece& piece : pieces) {
    nic_.dma().read(piece.host_addr, payload.subspan(piece.offset, piece.length), this, 0);
    ++p.reads_left;
  }
  bytes_ += p.frame.size();
  pending_.push_back(std::move(p));
  drain();
}

void TxPipeline::dma_done(uint64_t, bool ok) {
  // Completions come back in issue order: the oldest frame still reading owns this one.
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (pending_[i].reads_left > 0) {
      --pending_[i].reads_left;
      if (!ok) pending_[i].failed = true;
      break;
    }
  }
  drain();
  nic_.tx_space_available();
}

void TxPipeline::drain() {
  while (!pending_.empty() && pending_.front().reads_left == 0) {
    Pending p = pending_.pop_front();
    bytes_ -= p.frame.size();
    QpContext* qp = nic_.qp(p.qpn);
    if (qp == nullptr || qp->state == QpState::Err || qp->state == QpState::Reset) continue;
    if (p.failed) {
      nic_.qp_fatal(*qp, WcStatus::LocProtErr);
      continue;
    }
    packet::seal(p.frame.bytes(), p.layout);
    nic_.transmit(std::move(p.frame));
    if (p.origin == TxOrigin::RequestEndsUnreliableWqe) nic_.requester().unreliable_wqe_sent(*qp);
  }
}

}  // namespace rnicsim::nic
