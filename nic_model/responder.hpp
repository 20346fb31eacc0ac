// The responder: executes incoming requests in PSN order. It checks the PSN
// (duplicates are re-acknowledged, READs re-executed and atomics answered from a
// replay cache; a gap is NAKed with a PSN sequence error, and again when that NAK
// or the resend it asked for is lost), checks rkeys,
// access rights and bounds, DMA-writes RDMA WRITE payload, places SEND payload
// into receive WQEs (the QP's or a shared receive queue's), answers READs and
// atomics through the transmit pipeline within the IRD limit, writes receive
// completions, and sends coalesced ACKs, NAKs and RNR NAKs.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "nic_model/nic_context.hpp"
#include "nic_model/ports.hpp"
#include "fabric/frame.hpp"
#include "nic_model/dma_engine.hpp"
#include "nic_model/processing_units.hpp"
#include "nic_model/qp_context.hpp"
#include "packet/packet.hpp"
#include "sim/ring_queue.hpp"
#include "sim/scheduler.hpp"

namespace rnicsim::nic {

class Responder final : public RequestPort, public RoomPort, public DmaClient {
public:
  using Verdict = RequestVerdict;
  explicit Responder(NicContext& ctx);
  // The ports it sends into.
  struct Ports {
    CompletionPort* completions = nullptr;
    QpErrorPort* errors = nullptr;
    FetchPort* fetch = nullptr;
    TransmitPort* transmit = nullptr;
    ReceivePort* receive = nullptr;
    WirePort* wire = nullptr;
  };
  void connect(const Ports& ports) { ports_ = ports; }
  // The host's doorbell records, read when a receive queue looks empty (none: never).
  void set_doorbell_records(RecvDoorbellRecords* records) { records_ = records; }
  Verdict receive(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame) override;
  void recv_wqes_arrived(std::optional<Qpn> qpn) override;
  // Answers (READ responses, atomic ACKs) may go on: the pipeline has room.
  void room_available() override;
  void dma_done(uint64_t tag, bool ok) override;
  // The QP's NAK timer: its gap is still open nak_repeat_interval (doubling with
  // each repeat) after the NAK, so the NAK was lost, or the resend with the
  // packets behind it: NAK again.
  void on_nak_timer(QpContext& qp);

  struct Counters {
    uint64_t requests = 0, duplicates = 0, out_of_sequence = 0, rnr_naks = 0, access_errors = 0,
             invalid_requests = 0, dropped = 0, acks_sent = 0, read_responses = 0, atomics = 0,
             bad_opcode_sequence = 0, sequence_naks = 0, repeated_naks = 0,
             atomic_waits = 0,  // requests that waited for an atomic (of their QP, or on their bucket)
             record_reads = 0;  // receive doorbell records read that held receives not yet rung
  };
  const Counters& counters() const { return counters_; }

private:
  // One request as the steps of receive() see it.
  struct Request {
    QpContext& qp;
    const packet::ParsedPacket& p;
    fabric::Frame& frame;
    const packet::OpcodeInfo& info;
    Psn psn;
    bool starts, ends;  // the packet begins, ends its message
    uint32_t psns = 1;  // PSNs the request takes (a READ: one per response)
  };
  // The steps, in order: each lets the request go on (nullopt) or ends it.
  std::optional<Verdict> check_state(Request& r);
  std::optional<Verdict> check_psn(Request& r);
  std::optional<Verdict> check_psn_rc(Request& r);
  std::optional<Verdict> check_psn_uc(Request& r);
  std::optional<Verdict> check_qkey_ud(Request& r);
  std::optional<Verdict> check_sequence(Request& r);
  std::optional<Verdict> check_resources(Request& r);
  std::optional<Verdict> execute(Request& r);
  std::optional<Verdict> acknowledge(Request& r);
  void duplicate(Request& r);
  // IBTA's opcode sequence check for the next packet of a connected QP.
  static bool sequence_ok(const QpContext& qp, const packet::OpcodeInfo& info);
  void send_ack(QpContext& qp, Syndrome syndrome, Psn psn);
  void nak(QpContext& qp, NakCode code, Psn psn);
  // A NAK (of any kind) is out: note the PSN the repeat rule of sequence_nak
  // measures the requester's going back against.
  void outstanding_nak(QpContext& qp, Psn highest);
  void arm_nak_timer(QpContext& qp);
  // A PSN-sequence NAK for the gap at the expected PSN; again if the first one
  // or the resend it asked for was lost (see check_psn_rc).
  void sequence_nak(QpContext& qp, Psn seen);
  // A Class C error of a request that no receive WQE answers for (RDMA WRITE,
  // READ, atomic; IBTA C9-222.1.1): on RC the requester gets the NAK, the
  // responder's client an affiliated asynchronous error (QP access error for a
  // remote access error, invalid request otherwise) and the QP goes to the
  // error state. UC drops the packet.
  void class_c_error(QpContext& qp, NakCode code, Psn psn);
  // The receive queue a QP takes WQEs from (its own, or its SRQ's until a
  // message took one for the QP).
  sim::RingQueue<RecvWqe>& recv_queue(QpContext& qp);
  Verdict need_recv_wqe(QpContext& qp);
  // Receives the host posted on `queue` (whose ring is `ring`) but has not rung yet.
  void read_doorbell_record(WorkQueue queue, WorkRing& ring);
  // A QP on an SRQ takes the SRQ's next WQE for the message that starts.
  void take_recv_wqe(QpContext& qp);
  void consume_recv_wqe(QpContext& qp);
  void complete_recv(QpContext& qp, const packet::ParsedPacket& p, WcOpcode op, uint32_t byte_len,
                     WcStatus status = WcStatus::Success);
  Verdict execute_send(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame, bool ends);
  bool execute_write(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame, bool starts, bool ends);
  bool answer_slot(QpContext& qp);
  bool queue_read(QpContext& qp, const packet::ParsedPacket& p, bool replay = false);
  // The QP's access flags and the R_Key's range for an RDMA READ or WRITE.
  bool remote_access_ok(const QpContext& qp, const packet::RethFields& r, uint32_t needed, uint64_t& host) const;
  Verdict start_atomic(QpContext& qp, const packet::ParsedPacket& p);
  const AtomicReplay* replayed_atomic(const QpContext& qp, Psn psn) const;
  // A receive-side processing unit's answers (READ responses, atomic answers,
  // ACKs queued behind them), made one packet per responder_cycles_per_packet.
  struct Unit {
    Unit(uint32_t index, Responder* r)
        : respond([r, index] { r->step_responses(r->units_[index]); }, "responder.respond", r->ctx_.actor()) {}
    sim::RingQueue<ResponseJob> responses;
    sim::Event respond;
    sim::Time next_free;
  };
  // The queue of `qp`'s answers: its unit's.
  sim::RingQueue<ResponseJob>& answers(const QpContext& qp) { return units_.of(qp.qpn).responses; }
  void step_responses(Unit& unit);
  void wake(Unit& unit);
  // Drops the queued answers of `qp` from `psn` on (a duplicate request came).
  void cancel_responses_from(QpContext& qp, Psn psn);
  // Queues the ATOMIC ACK of `psn` carrying `original` (the caller counts it in
  // responses_queued).
  void queue_atomic_answer(QpContext& qp, Psn psn, uint64_t original);
  void queue_answer(QpContext& qp, ResponseJob job);
  void release_reordered(QpContext& qp);
  uint32_t bucket_of(uint64_t va) const;
  ResponseJob* pending_answer(QpContext& qp, Psn psn);
  bool waits_for_atomic(const QpContext& qp, const packet::ParsedPacket& p) const;

  NicContext& ctx_;
  Ports ports_;
  RecvDoorbellRecords* records_ = nullptr;
  Counters counters_;
  ProcessingUnits<Unit> units_;
  // The atomics being executed, by DMA tag (a deque: each value stays where
  // its DMA read puts it), and the free tags; the buckets they lock.
  struct PendingAtomic {
    Qpn qpn{};
    Psn psn;
    uint64_t host_addr = 0;
    bool compare_swap = false;
    uint64_t swap_add = 0, compare = 0;
    uint32_t bucket = 0;
    std::array<std::byte, 8> value{};
  };
  std::deque<PendingAtomic> atomics_;
  std::vector<uint32_t> free_atomics_;
  std::vector<bool> bucket_locked_;
};

}  // namespace rnicsim::nic
