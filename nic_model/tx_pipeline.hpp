// The transmit pipeline: frames whose payload is still being DMA-read from host
// memory wait here, in the order they were built; when a frame's reads are done
// the packet layer seals it (pad, checksums; the CRCs are deferred until someone
// looks at the frame, see fabric::Frame::defer_seal) and it is queued at the
// port. The requester (requests) and the responder (read responses, atomic ACKs)
// share it, as they share the port. DMA reads complete in issue order, so the
// frames leave in order without any reordering buffer.
#pragma once

#include <cstdint>
#include <span>

#include "nic_model/nic_context.hpp"
#include "nic_model/ports.hpp"
#include "fabric/frame.hpp"
#include "nic_model/dma_engine.hpp"
#include "packet/packet.hpp"
#include "sim/ring_queue.hpp"
#include "sim/scheduler.hpp"

namespace rnicsim::nic {

class TxPipeline final : public TransmitPort, public DmaClient {
public:
  explicit TxPipeline(NicContext& ctx);
  // The ports it sends into.
  struct Ports {
    WirePort* wire = nullptr;
    SendQueuePort* send_queue = nullptr;
    QpErrorPort* errors = nullptr;
    std::array<RoomPort*, 2> producers{};  // told of room, in this order
  };
  void connect(const Ports& ports) { ports_ = ports; }
  // Room in the pipeline's depth and at the port.
  bool has_room(size_t bytes) const override;
  void submit(fabric::Frame&& frame, const packet::FrameLayout& layout, std::span<const DmaPiece> pieces,
              Qpn qpn, TxOrigin origin, const ChunkRead& chunk) override;
  // A QP's requests from `from` on that have not reached the wire: those still
  // fetching their payload are dropped when their reads land, and the port's
  // queue gives back its own. Returns how many.
  uint32_t withdraw(Qpn qpn, uint8_t priority, Psn from) override;
  void dma_done(uint64_t tag, bool ok) override;
  bool take_loan(uint64_t tag, std::byte* dst, size_t length, const Loan& loan) override;
  size_t depth() const { return pending_.size(); }

private:
  struct Pending {
    fabric::Frame frame;
    packet::FrameLayout layout;
    uint32_t reads_left = 0;
    bool failed = false;
    bool withdrawn = false;  // a rewind takes it back: its reads land, it is not sent
    Qpn qpn{};
    TxOrigin origin = TxOrigin::Request;
    sim::Time ready_at;  // built + tx_latency_cycles
    sim::Time submitted;
  };
  void drain();
  // Drains, then tells refused producers if there is room for them now.
  void drain_and_wake();

  NicContext& ctx_;
  Ports ports_;
  sim::Event drain_event_;  // the head's pipeline latency has passed
  sim::RingQueue<Pending> pending_;
  uint64_t front_id_ = 0;  // submission number of pending_.front(); a DMA tag is a submission number
  uint64_t bytes_ = 0;
  // The smallest frame a producer was refused room for since room was last
  // signalled (0: none refused).
  mutable size_t refused_bytes_ = 0;
};

}  // namespace rnicsim::nic
