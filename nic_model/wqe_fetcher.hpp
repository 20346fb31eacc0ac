// The WQE fetcher: DMA-reads new send and receive WQEs from the rings in host
// memory, several at a time, and hands them to the requester (send WQEs) or keeps
// them for the responder (receive WQEs).
#pragma once

#include <cstdint>
#include <vector>

#include "nic_model/dma_engine.hpp"
#include "nic_model/doorbell.hpp"
#include "sim/ring_queue.hpp"

namespace rnicsim::nic {

class Nic;

class WqeFetcher : public DmaClient {
public:
  explicit WqeFetcher(Nic& nic);
  // A queue (QPN, or SRQ number for Srq) may have entries to fetch.
  void kick(QueueKind kind, uint32_t id);
  // Receive WQEs of that queue are being fetched right now.
  bool recv_fetch_pending(QueueKind kind, uint32_t id) const;
  void dma_done(uint64_t tag, bool ok) override;
  uint64_t wqes_fetched() const { return fetched_; }

private:
  struct Pending {
    QueueKind kind;
    uint32_t id;
  };
  struct Slot {
    std::vector<std::byte> buffer;
    QueueKind kind = QueueKind::Send;
    uint32_t id = 0;
    uint32_t count = 0;
    bool busy = false;
  };
  void issue();

  Nic& nic_;
  sim::RingQueue<Pending> pending_;
  std::vector<Slot> slots_;
  uint32_t busy_slots_ = 0;
  uint64_t fetched_ = 0;
};

}  // namespace rnicsim::nic
