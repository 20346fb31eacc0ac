// The completer (requester side of RC): takes ACKs, NAKs, READ responses and atomic
// ACKs, places returned data in the requester's memory, retires the WQEs they
// cover, has completions written, and runs the retransmission machinery: the
// local ACK timer (4.096 us x 2^timeout), retry_cnt, RNR NAK back-off and
// rnr_retry, and go-back-N through the requester.
#pragma once

#include <cstdint>

#include "nic_model/nic_context.hpp"
#include "nic_model/ports.hpp"
#include "fabric/frame.hpp"
#include "nic_model/qp_context.hpp"
#include "packet/packet.hpp"

namespace rnicsim::nic {

// The RNR NAK timer field's value in time (IBTA table 45).
sim::Duration rnr_timer_duration(uint8_t field);

class Completer final : public ResponsePort {
public:
  explicit Completer(NicContext& ctx) : ctx_(ctx) {}
  // The ports it sends into.
  struct Ports {
    SendQueuePort* send_queue = nullptr;
    CompletionPort* completions = nullptr;
    QpErrorPort* errors = nullptr;
  };
  void connect(const Ports& ports) { ports_ = ports; }
  void receive(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame) override;
  void arm_timer(QpContext& qp) override;
  void on_timer(QpContext& qp);

  uint64_t acks() const { return acks_; }
  uint64_t naks() const { return naks_; }
  uint64_t timeouts() const { return timeouts_; }
  uint64_t stale_responses() const { return stale_responses_; }

private:
  // Whether it moved the QP on: retired a WQE or the oldest unacknowledged PSN.
  bool retire_through(QpContext& qp, Psn psn);
  // A READ response or atomic ACK for `psn`; false if it was not the one expected.
  void place_response(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame);
  void tell_congestion(QpContext& qp, Psn acked, bool nak);
  void progress(QpContext& qp);
  // What an AETH of each kind does (kByKind, by AckKind): `psn` is the
  // response's, `syndrome` its AETH's.
  using AckStep = void (Completer::*)(QpContext& qp, Psn psn, Syndrome syndrome);
  void on_ack(QpContext& qp, Psn psn, Syndrome syndrome);
  void on_rnr_nak(QpContext& qp, Psn psn, Syndrome syndrome);
  void on_nak(QpContext& qp, Psn psn, Syndrome syndrome);
  void on_reserved(QpContext&, Psn, Syndrome) {}
  static constexpr AckStep kByKind[] = {&Completer::on_ack, &Completer::on_rnr_nak, &Completer::on_reserved,
                                        &Completer::on_nak};
  static_assert(sizeof(kByKind) / sizeof(kByKind[0]) == static_cast<size_t>(AckKind::Nak) + 1);
  NicContext& ctx_;
  Ports ports_;
  uint64_t acks_ = 0, naks_ = 0, timeouts_ = 0, stale_responses_ = 0;
};

}  // namespace rnicsim::nic
