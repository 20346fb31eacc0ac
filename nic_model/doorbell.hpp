// The doorbell unit: MMIO writes from the host cross PCIe, then tell the WQE
// fetcher that a send or receive queue has new entries.
#pragma once

#include <cstdint>

#include "nic_model/nic_context.hpp"
#include "nic_model/ports.hpp"
#include "nic_model/queue_format.hpp"
#include "nic_model/types.hpp"
#include "sim/ring_queue.hpp"
#include "sim/scheduler.hpp"

namespace rnicsim::nic {

class Doorbell final {
public:
  explicit Doorbell(NicContext& ctx);
  // The ports it sends into.
  struct Ports {
    SendQueuePort* send_queue = nullptr;
    FetchPort* fetch = nullptr;
  };
  void connect(const Ports& ports) { ports_ = ports; }
  // The host wrote `producer` to the doorbell register of a queue (a QP's send
  // or receive queue, or a shared receive queue).
  void ring(WorkQueue queue, uint64_t producer);
  // A send doorbell with the WQE in the same MMIO write (BlueFlame-style).
  void ring_with_wqe(Qpn qpn, uint64_t producer, const SendWqe& wqe, uint32_t bytes);
  uint64_t rung() const { return rung_; }
  uint64_t rung_with_wqe() const { return with_wqe_; }

private:
  struct Write {
    sim::Time arrival;
    WorkQueue queue;
    uint64_t producer;
    bool has_wqe = false;
    SendWqe wqe{};
  };
  void on_arrival();
  NicContext& ctx_;
  Ports ports_;
  sim::RingQueue<Write> in_flight_;
  sim::Event arrive_;
  uint64_t rung_ = 0;
  uint64_t with_wqe_ = 0;
};

}  // namespace rnicsim::nic
