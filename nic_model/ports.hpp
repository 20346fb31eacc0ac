// The ports of the NIC's blocks. A block implements the port it is reached
// through and is given, once, the ports it sends into; Nic wires them, a test
// wires one block to fakes. The arrows of docs/ARCHITECTURE.md are these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fabric/frame.hpp"
#include "nic_model/dma_engine.hpp"
#include "nic_model/qp_context.hpp"
#include "nic_model/queue_format.hpp"
#include "nic_model/types.hpp"
#include "packet/packet.hpp"

namespace rnicsim::nic {

// Into the requester: send work and what moves a send queue on.
class SendQueuePort {
public:
  virtual ~SendQueuePort() = default;
  // A fetched WQE joins its QP's send queue.
  virtual void accept_wqe(QpContext& qp, const SendWqe& wqe) = 0;
  // The QP may have packets to send (new WQEs, an ACK that opened the window, a rewind).
  virtual void kick(QpContext& qp) = 0;
  // Go-back-N: send again from `psn` (an unacknowledged PSN) on.
  virtual void rewind(QpContext& qp, Psn psn) = 0;
  // Selective repeat: send the packet of `psn` once more, then go on where it was.
  virtual void resend(QpContext& qp, Psn psn) = 0;
  // UC/UD: the last packet of the oldest WQE left the NIC; it completes.
  virtual void unreliable_wqe_sent(QpContext& qp) = 0;
};

// What the responder makes of a request. Done: consumed. Stall: keep it and
// retry after a resume (a receive WQE is on its way). Wait: keep it and retry
// when an atomic is done (its QP's atomic, or one on its bucket, executes).
enum class RequestVerdict : uint8_t { Done, Stall, Wait };

// Into the responder: requests, and receive WQEs that arrived for them.
class RequestPort {
public:
  virtual ~RequestPort() = default;
  virtual RequestVerdict receive(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame) = 0;
  // Of that QP's receive queue, or of an SRQ (nullopt: any QP may use them).
  virtual void recv_wqes_arrived(std::optional<Qpn> qpn) = 0;
};

// Into the completer: responses (ACK, NAK, READ response, atomic ACK) of RC requests.
class ResponsePort {
public:
  virtual ~ResponsePort() = default;
  virtual void receive(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame) = 0;
  // (Re)starts the retransmission timer of a QP with packets outstanding.
  virtual void arm_timer(QpContext& qp) = 0;
};

// Into the WQE fetcher: a queue may have entries to fetch.
class FetchPort {
public:
  virtual ~FetchPort() = default;
  virtual void kick(WorkQueue queue) = 0;
  // Receive WQEs of that queue are being fetched right now.
  virtual bool recv_fetch_pending(WorkQueue queue) const = 0;
};

// Into the CQE writer.
class CompletionPort {
public:
  virtual ~CompletionPort() = default;
  // Completes a send-queue WQE (writes a CQE if it is signaled or failed).
  virtual void complete_send(QpContext& qp, const SendEntry& e, WcStatus status) = 0;
  // Writes `cqe` of `qp` to CQ `cqn`; `solicited`: of a message with the solicited-event bit.
  virtual void post(QpContext& qp, Cqn cqn, Cqe cqe, bool solicited) = 0;
};

// What the transmit pipeline tells a frame's producer when the frame leaves.
enum class TxOrigin : uint8_t { Request, RequestEndsUnreliableWqe, Response };

// A request's reads beyond its own bytes (NicParams::tx_read_chunk_bytes): a
// chunk's first packet also reads the rest of the chunk (`ahead`, which it
// waits for), and the chunk's later packets take their bytes from the NIC's
// buffer (`buffered`).
struct ChunkRead {
  std::span<const DmaPiece> ahead;
  bool buffered = false;
};

// Into the transmit pipeline: frames whose payload is DMA-read from host memory.
class TransmitPort {
public:
  virtual ~TransmitPort() = default;
  // Room for one more frame of `bytes`; a producer told no hears of room (RoomPort).
  virtual bool has_room(size_t bytes) const = 0;
  virtual void submit(fabric::Frame&& frame, const packet::FrameLayout& layout, std::span<const DmaPiece> pieces,
                      Qpn qpn, TxOrigin origin, const ChunkRead& chunk) = 0;
  // Takes back the QP's requests from `from` on that wait for the wire; returns how many.
  virtual uint32_t withdraw(Qpn qpn, uint8_t priority, Psn from) = 0;
};

// Into a producer of frames that was refused room: there is room again.
class RoomPort {
public:
  virtual ~RoomPort() = default;
  virtual void room_available() = 0;
};

// Into the receive pipeline, from the responder.
class ReceivePort {
public:
  virtual ~ReceivePort() = default;
  // A stalled request of `qpn` (of any QP if nullopt) may go on.
  virtual void resume(std::optional<Qpn> qpn) = 0;
  // An atomic is done: requests that waited for one (RequestVerdict::Wait) may go on.
  virtual void atomic_done() = 0;
  // A packet kept out of order whose turn has come: processed before the frames still waiting.
  virtual void reinject(fabric::Frame&& frame) = 0;
};

// Into the NIC's egress (its port, or loopback): frames that need no more DMA.
class WirePort {
public:
  virtual ~WirePort() = default;
  // The port's queues have room for `bytes` more within the NIC's transmit buffer.
  virtual bool has_room(size_t bytes) const = 0;
  virtual void transmit(fabric::Frame&& frame) = 0;
  virtual uint32_t withdraw(Qpn qpn, uint8_t priority, Psn from) = 0;
};

// Into the receive buffer: the receive pipeline took in (delta > 0) or let go of frame bytes.
class RxBufferPort {
public:
  virtual ~RxBufferPort() = default;
  virtual void buffered(uint8_t priority, int64_t delta) = 0;
};

// Into the notification point: a CE-marked packet of `qp` arrived; a CNP may go back.
class CnpPort {
public:
  virtual ~CnpPort() = default;
  virtual void send_cnp(QpContext& qp) = 0;
};

// Into QP error handling.
class QpErrorPort {
public:
  virtual ~QpErrorPort() = default;
  // A QP fails: the oldest outstanding WQE completes with `status`, every other
  // one with WR_FLUSH_ERR, and the QP enters ERR.
  virtual void qp_fatal(QpContext& qp, WcStatus status) = 0;
  // Completes a receive WQE of a QP in ERR with WR_FLUSH_ERR.
  virtual void flush_recv(QpContext& qp, const RecvWqe& w) = 0;
  // An affiliated or unaffiliated asynchronous event for the host.
  virtual void async_event(AsyncEvent event, AsyncObject about) = 0;
};

}  // namespace rnicsim::nic
