#include "nic_model/doorbell.hpp"

#include "nic_model/nic.hpp"

namespace rnicsim::nic {

Doorbell::Doorbell(Nic& nic) : nic_(nic), arrive_([this] { on_arrival(); }, "doorbell.arrive") {}

void Doorbell::ring(QueueKind kind, uint32_t id, uint64_t producer) {
  // An 8-byte MMIO write, then the unit's own processing.
  const sim::Time at = nic_.pcie().mmio_write(nic_.now(), 8) + nic_.cycles(nic_.params().doorbell_cycles);
  in_flight_.push_back(Write{at, kind, id, producer});
  ++rung_;
  if (!arrive_.scheduled()) nic_.scheduler().schedule(arrive_, in_flight_.front().arrival);
}

void Doorbell::ring_with_wqe(uint32_t qpn, uint64_t producer, const SendWqe& wqe) {
  // The doorbell word and the 128-byte WQE in one write-combined MMIO burst.
  const sim::Time at =
      nic_.pcie().mmio_write(nic_.now(), 8 + sizeof(SendWqe)) + nic_.cycles(nic_.params().doorbell_cycles);
  Write w{at, QueueKind::Send, qpn, producer};
  w.has_wqe = true;
  w.wqe = wqe;
  in_flight_.push_back(w);
  ++rung_;
  if (!arrive_.scheduled()) nic_.scheduler().schedule(arrive_, in_flight_.front().arrival);
}

void Doorbell::on_arrival() {
  const Write w = in_flight_.pop_front();
  if (!in_flight_.empty()) nic_.scheduler().schedule(arrive_, std::max(in_flight_.front().arrival, nic_.now()));
  WorkRing* ring = nic_.work_ring(w.kind, w.id);
  if (ring == nullptr) return;  // destroyed meanwhile
  if (w.producer > ring->producer) ring->producer = w.producer;
  QpContext* qp = w.has_wqe ? nic_.qp(w.id) : nullptr;
  if (qp != nullptr && ring->fetched + 1 == w.producer && qp->state != QpState::Reset) {
    // The WQE came with the doorbell and nothing older is unfetched: no DMA read.
    ring->fetched = w.producer;
    ++with_wqe_;
    nic_.requester().accept_wqe(*qp, w.wqe);
    return;
  }
  nic_.wqe_fetcher().kick(w.kind, w.id);
}

}  // namespace rnicsim::nic
