// The requester: turns send WQEs into request packets. It segments SEND and WRITE
// messages at the path MTU, sends one request for an RDMA READ (whose responses
// take its PSNs) or an atomic, assigns PSNs, hands each frame with the host
// memory pieces of its payload to the transmit pipeline, and keeps RC WQEs until
// the completer retires them. Each of its processing units (`requester_units`)
// serves the QPs steered to it that have work round-robin, one packet per
// `requester_cycles_per_packet`, within the ORD limit and the PSN window; the
// units stop while the transmit pipeline or the port is full. With
// congestion control, a QP whose rate limiter says "not yet" waits aside until
// its send time and does not hold up the others.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "nic_model/nic_context.hpp"
#include "nic_model/ports.hpp"
#include "nic_model/processing_units.hpp"
#include "nic_model/qp_context.hpp"
#include "sim/ring_queue.hpp"
#include "sim/scheduler.hpp"

namespace rnicsim::nic {

class Requester final : public SendQueuePort, public RoomPort {
public:
  explicit Requester(NicContext& ctx);
  // The ports it sends into.
  struct Ports {
    TransmitPort* transmit = nullptr;
    ResponsePort* responses = nullptr;
    CompletionPort* completions = nullptr;
    QpErrorPort* errors = nullptr;
  };
  void connect(const Ports& ports) { ports_ = ports; }
  void accept_wqe(QpContext& qp, const SendWqe& wqe) override;
  void kick(QpContext& qp) override;
  void rewind(QpContext& qp, Psn psn) override;
  void resend(QpContext& qp, Psn psn) override;
  void unreliable_wqe_sent(QpContext& qp) override;
  // The transmit pipeline or the port has room again.
  void room_available() override;

  uint64_t packets_sent() const { return packets_; }

private:
  // One processing unit: the QPs it serves that have work, in turn.
  struct Unit {
    Unit(uint32_t index, Requester* r)
        : step([r, index] { r->step(r->units_[index]); }, "requester.step", r->ctx_.actor()) {}
    sim::RingQueue<Qpn> ready;
    sim::Event step;
    sim::Time next_free;
  };
  bool can_send(const QpContext& qp) const;
  void step(Unit& unit);
  // Schedules the unit's step if it has a QP whose packet the pipeline can take.
  void wake(Unit& unit);
  // Both return the cycles the packet costs the requester.
  uint32_t build_packet(QpContext& qp);
  // Request packets sent from `psn` (in send entry `entry`) on: a READ or
  // atomic is one request for all the PSNs of its answer. What a rewind resends.
  static uint32_t requests_sent_from(const QpContext& qp, size_t entry, Psn psn);
  // Builds and queues packet `index` of send entry `entry` with PSN `psn`;
  // `ends_unreliable`: it is the last packet of a UC/UD WQE, which completes when it leaves.
  uint32_t emit(QpContext& qp, size_t entry, uint32_t index, Psn psn, bool ends_unreliable);
  // emit()'s halves: the headers written field by field (and kept as the QP's
  // template when they can be), then the frame's payload, checks and hand-over.
  packet::FrameLayout build_headers(QpContext& qp, const SendEntry& e, packet::Opcode opcode, Psn psn, uint32_t len,
                                    uint32_t offset, bool solicited, bool ack_req, fabric::Frame& frame);
  // How a request's payload read goes with its message's chunk
  // (NicParams::tx_read_chunk_bytes): the packet at `psn`, whose bytes end at
  // message offset `end`, starts a chunk (reading the rest into `ahead`) or
  // takes its bytes from the chunk read before it.
  ChunkRead chunk_read(QpContext& qp, const SendEntry& e, Psn psn, uint32_t end, SgeMap& ahead);
  uint32_t send_packet(QpContext& qp, const SendEntry& e, uint32_t index, uint32_t len, uint32_t offset,
                       const packet::FrameLayout& layout, fabric::Frame&& frame, bool ends_unreliable);
  // Congestion control: `qp` may send again at `when`.
  void pace(QpContext& qp, sim::Time when);
  void sent(CongestionControl& cc, QpContext& qp, const SendEntry& e, uint32_t index, Psn psn, uint32_t bytes);
  void release_paced();

  NicContext& ctx_;
  Ports ports_;
  ProcessingUnits<Unit> units_;
  // QPs waiting for their send time, earliest first (ties by QPN).
  std::priority_queue<std::pair<sim::Time, Qpn>, std::vector<std::pair<sim::Time, Qpn>>,
                      std::greater<>>
      paced_;
  sim::Event pace_;
  uint64_t packets_ = 0;
};

}  // namespace rnicsim::nic
