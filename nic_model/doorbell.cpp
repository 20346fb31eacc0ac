#include "nic_model/doorbell.hpp"

#include "nic_model/nic.hpp"

namespace rnicsim::nic {

Doorbell::Doorbell(Nic& nic) : nic_(nic), arrive_([this] { on_arrival(); }, "doorbell.arrive") {}

void Doorbell::ring(QueueKind kind, uint32_t qpn, uint64_t producer) {
  // An 8-byte MMIO write, then the unit's own processing.
  const sim::Time at = nic_.pcie().mmio_write(nic_.now(), 8) + nic_.cycles(nic_.params().doorbell_cycles);
  in_flight_.push_back(Write{at, kind, qpn, producer});
  ++rung_;
  if (!arrive_.scheduled()) nic_.scheduler().schedule(arrive_, in_flight_.front().arrival);
}

void Doorbell::on_arrival() {
  const Write w = in_flight_.pop_front();
  if (!in_flight_.empty()) nic_.scheduler().schedule(arrive_, std::max(in_flight_.front().arrival, nic_.now()));
  QpContext* qp = nic_.qp(w.qpn);
  if (qp == nullptr) return;  // destroyed meanwhile
  WorkRing& ring = w.kind == QueueKind::Send ? qp->sq : qp->rq;
  if (w.producer > ring.producer) ring.producer = w.producer;
  nic_.wqe_fetcher().kick(w.kind, w.qpn);
}

}  // namespace rnicsim::nic
