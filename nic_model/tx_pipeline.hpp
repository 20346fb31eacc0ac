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

#include "fabric/frame.hpp"
#include "nic_model/dma_engine.hpp"
#include "packet/packet.hpp"
#include "sim/ring_queue.hpp"
#include "sim/scheduler.hpp"

namespace rnicsim::nic {

class Nic;

// What the pipeline tells the frame's producer when the frame leaves.
enum class TxOrigin : uint8_t { Request, RequestEndsUnreliableWqe, Response };

class TxPipeline : public DmaClient {
public:
  explicit TxPipeline(Nic& nic);
  // Room for one more frame of `bytes` (pipeline depth and port queue). A
  // producer told no is resumed (Nic::tx_space_available) once there is room.
  bool has_room(size_t bytes) const;
  void submit(fabric::Frame&& frame, const packet::FrameLayout& layout, std::span<const DmaPiece> pieces,
              uint32_t qpn, TxOrigin origin);
  void dma_done(uint64_t tag, bool ok) override;
  bool take_loan(uint64_t tag, std::byte* dst, size_t length, const Loan& loan) override;
  size_t depth() const { return pending_.size(); }

private:
  struct Pending {
    fabric::Frame frame;
    packet::FrameLayout layout;
    uint32_t reads_left = 0;
    bool failed = false;
    uint32_t qpn = 0;
    TxOrigin origin = TxOrigin::Request;
    sim::Time ready_at;  // built + tx_latency_cycles
  };
  void drain();
  // Drains, then tells refused producers if there is room for them now.
  void drain_and_wake();

  Nic& nic_;
  sim::Event drain_event_;  // the head's pipeline latency has passed
  sim::RingQueue<Pending> pending_;
  uint64_t front_id_ = 0;  // submission number of pending_.front(); a DMA tag is a submission number
  uint64_t bytes_ = 0;
  // The smallest frame a producer was refused room for since room was last
  // signalled (0: none refused).
  mutable size_t refused_bytes_ = 0;
};

}  // namespace rnicsim::nic
