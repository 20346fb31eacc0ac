// The receive pipeline: frames from the port are parsed by the packet layer (with
// header prediction: see packet/header_prediction.hpp) and
// their ICRC (and VCRC) checked; malformed packets and bad CRCs are counted and
// dropped. Then the transport header checks (IBTA 9.6): the destination QP
// exists, the opcode is of the QP's service, the P_Key matches, and a connected
// QP's packets come from its peer; a packet failing one is counted and dropped
// silently, leaving the QP as it was. Good packets go to the completer (responses) or the responder
// (requests). Each packet goes to the processing unit its destination QP is
// steered to (`responder_units`, by QPN, read from the BTH before parsing); a
// unit takes its packets in order, one at a time, each costing its cycles
// (parse, checks, then responder or completer), side by side with the other
// units. A request waiting for a receive WQE from host memory stalls its unit,
// as in a simple in-order NIC, and so does a request that waits for an atomic
// (its QP's, whose write must land first, or one on its address bucket).
#pragma once

#include <cstdint>

#include "nic_model/nic_context.hpp"
#include "nic_model/ports.hpp"
#include "nic_model/processing_units.hpp"
#include "fabric/frame.hpp"
#include "packet/header_prediction.hpp"
#include "packet/packet.hpp"
#include "sim/ring_queue.hpp"
#include "sim/scheduler.hpp"

namespace rnicsim::nic {

struct QpContext;

class RxPipeline final : public ReceivePort {
public:
  explicit RxPipeline(NicContext& ctx);
  // The ports it sends into.
  struct Ports {
    ResponsePort* responses = nullptr;
    RequestPort* requests = nullptr;
    CnpPort* cnp = nullptr;
    RxBufferPort* rx_buffer = nullptr;
  };
  void connect(const Ports& ports) { ports_ = ports; }
  void receive(fabric::Frame&& frame);
  void resume(std::optional<Qpn> qpn) override;
  void atomic_done() override;
  void reinject(fabric::Frame&& frame) override;

  struct Counters {
    uint64_t packets = 0, malformed = 0, bad_icrc = 0, unknown_qp = 0;
    uint64_t wrong_transport = 0;  // opcode of another service than the QP's (a UD SEND to an RC QP)
    uint64_t bad_pkey = 0;         // P_Key not in the port's table (0xFFFF: low 15 bits all ones)
    uint64_t wrong_source = 0;     // to an RC/UC QP from another address than its peer's
    uint64_t ecn_ce = 0, cnps = 0;  // CE-marked packets and CNPs for known QPs
    uint64_t wqe_refetches = 0;     // answers that waited for their WQE to be read again
  };
  const Counters& counters() const { return counters_; }

private:
  // One processing unit: its frames in arrival order (with when each may take
  // effect: rx latency) and those the responder gave back, which go first.
  struct Unit {
    Unit(uint32_t index, RxPipeline* r)
        : process([r, index] { r->process(r->units_[index]); }, "rx.process", r->ctx_.actor()) {}
    sim::RingQueue<fabric::Frame> queue;
    sim::RingQueue<sim::Time> effective;
    sim::RingQueue<fabric::Frame> reinjected;
    sim::Event process;
    sim::Time busy_until;
    // What its head waits for: a receive WQE of stalled_qpn, or an atomic to
    // finish (of its QP, or one on its bucket).
    enum class Waits : uint8_t { Nothing, RecvWqe, Atomic } waits = Waits::Nothing;
    Qpn stalled_qpn;
    uint64_t refetched_wqe = kNoWqe;  // an answer's WQE it waited for, read again: do not look it up twice
    bool may_go() const { return waits == Waits::Nothing && !(queue.empty() && reinjected.empty()); }
  };
  // The unit of a frame's destination QP (by its BTH, read without parsing).
  Unit& unit_for(const std::optional<packet::ConstBth>& bth);
  // The frame's receive latency: the pipeline's, its opcode's, a jitter draw.
  sim::Duration latency_of(const std::optional<packet::ConstBth>& bth);
  // The frame's BTH, where the units or the opcode's latency need it.
  std::optional<packet::ConstBth> peek(const fabric::Frame& frame) const;
  // Schedules the unit's next packet no earlier than `earliest`, if it has one and may go.
  void wake(Unit& u, sim::Time earliest);
  void process(Unit& u);
  // What taking the head frame costs, and whether it leaves the queue.
  struct Outcome {
    uint32_t cycles = 0;
    bool done = true;
  };
  // A parsed packet with good CRCs to the block that takes it, after its QP's
  // context and the header checks; false when the context is not on the NIC yet.
  bool deliver(Unit& u, const packet::ParsedPacket& p, fabric::Frame& frame, Outcome& o);
  // A READ's first response or an atomic's ACK needs its WQE on the NIC: false
  // (the unit waits) while a dropped one is read again.
  bool answer_wqe_on_nic(Unit& u, const QpContext& qp, const packet::PacketFields& f);
  static bool places_by_wqe(packet::Opcode op);
  // Reads the WQEs of the answers queued behind the unit's head (wqe_prefetch of them).
  void prefetch_answer_wqes(const Unit& u);
  static constexpr uint64_t kNoWqe = ~uint64_t{0};
  void on_cnp(QpContext& qp);
  // A request to the responder: false when the packet stays at the head (a stall).
  bool to_responder(Unit& u, QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame);
  void notify_congestion(QpContext& qp);
  // The transport header checks: false (and counted) if the packet is dropped.
  bool admit(const QpContext* qp, const packet::ParsedPacket& p);
  uint32_t payload_cycles(uint32_t bytes) const;
  // A request's occupancy of the responder: a FIRST or ONLY packet pays for
  // the checks and DMA set-up, a MIDDLE or LAST one its segment's share.
  uint32_t request_cycles(packet::Opcode op) const;
  NicContext& ctx_;
  Ports ports_;
  packet::HeaderPrediction prediction_;  // parse(), answered from the QP's last packet where it can be
  ProcessingUnits<Unit> units_;
  Counters counters_;
};

}  // namespace rnicsim::nic
