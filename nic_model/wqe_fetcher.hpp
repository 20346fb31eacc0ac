// The WQE fetcher: DMA-reads new send and receive WQEs from the rings in host
// memory, several at a time, and hands them to the requester (send WQEs) or keeps
// them for the responder (receive WQEs).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nic_model/nic_context.hpp"
#include "nic_model/ports.hpp"
#include "nic_model/dma_engine.hpp"
#include "nic_model/doorbell.hpp"
#include "sim/ring_queue.hpp"

namespace rnicsim::nic {

class WqeFetcher final : public FetchPort, public DmaClient {
public:
  explicit WqeFetcher(NicContext& ctx);
  // The ports it sends into.
  struct Ports {
    SendQueuePort* send_queue = nullptr;
    RequestPort* requests = nullptr;
    QpErrorPort* errors = nullptr;
  };
  void connect(const Ports& ports) { ports_ = ports; }
  void kick(WorkQueue queue) override;
  bool recv_fetch_pending(WorkQueue queue) const override;
  void dma_done(uint64_t tag, bool ok) override;
  uint64_t wqes_fetched() const { return fetched_; }

private:
  struct Slot {
    std::vector<std::byte> buffer;
    WorkQueue queue;
    uint32_t count = 0;
    uint64_t first = 0;  // ring index of the first WQE read
    uint32_t stride = kMinWqeStride;  // the ring's, when the read was made
    sim::Time issued;
    bool busy = false;
    std::span<const std::byte> wqe(uint32_t i) const {
      return std::span<const std::byte>(buffer).subspan(size_t{i} * stride, stride);
    }
  };
  void issue();

  NicContext& ctx_;
  Ports ports_;
  sim::RingQueue<WorkQueue> pending_;
  std::vector<Slot> slots_;
  uint32_t busy_slots_ = 0;
  uint64_t fetched_ = 0;
};

}  // namespace rnicsim::nic
