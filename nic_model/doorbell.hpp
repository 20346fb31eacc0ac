// The doorbell unit: MMIO writes from the host cross PCIe, then tell the WQE
// fetcher that a send or receive queue has new entries.
#pragma once

#include <cstdint>

#include "sim/ring_queue.hpp"
#include "sim/scheduler.hpp"

namespace rnicsim::nic {

class Nic;

enum class QueueKind : uint8_t { Send, Recv, Srq };

class Doorbell {
public:
  explicit Doorbell(Nic& nic);
  // The host wrote `producer` to the doorbell register of a queue (a QP's send or
  // receive queue by QPN, or a shared receive queue by SRQ number).
  void ring(QueueKind kind, uint32_t id, uint64_t producer);
  uint64_t rung() const { return rung_; }

private:
  struct Write {
    sim::Time arrival;
    QueueKind kind;
    uint32_t id;
    uint64_t producer;
  };
  void on_arrival();
  Nic& nic_;
  sim::RingQueue<Write> in_flight_;
  sim::Event arrive_;
  uint64_t rung_ = 0;
};

}  // namespace rnicsim::nic
