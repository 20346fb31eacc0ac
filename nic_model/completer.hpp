// The completer (requester side of RC): takes ACKs, NAKs, READ responses and atomic
// ACKs, places returned data in the requester's memory, retires the WQEs they
// cover, has completions written, and runs the retransmission machinery: the
// local ACK timer (4.096 us x 2^timeout), retry_cnt, RNR NAK back-off and
// rnr_retry, and go-back-N through the requester.
#pragma once

#include <cstdint>

#include "fabric/frame.hpp"
#include "nic_model/qp_context.hpp"
#include "packet/packet.hpp"

namespace rnicsim::nic {

class Nic;

// AETH syndrome classes (IBTA 9.7.5.1.1).
enum class AckKind : uint8_t { Ack = 0, RnrNak = 1, Reserved = 2, Nak = 3 };
enum class NakCode : uint8_t { PsnSequenceError = 0, InvalidRequest = 1, RemoteAccessError = 2, RemoteOperationalError = 3, InvalidRdRequest = 4 };

constexpr uint8_t aeth_ack(uint8_t credits = 0x1F) { return credits & 0x1F; }
constexpr uint8_t aeth_rnr_nak(uint8_t timer) { return static_cast<uint8_t>(0x20 | (timer & 0x1F)); }
constexpr uint8_t aeth_nak(NakCode c) { return static_cast<uint8_t>(0x60 | static_cast<uint8_t>(c)); }

// The RNR NAK timer field's value in time (IBTA table 45).
sim::Duration rnr_timer_duration(uint8_t field);
// The local ACK timeout: 4.096 us x 2^timeout; 0 means infinite.
sim::Duration local_ack_timeout(uint8_t timeout);

class Completer {
public:
  explicit Completer(Nic& nic) : nic_(nic) {}
  void receive(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame);
  // (Re)starts the retransmission timer of a QP with packets outstanding.
  void arm_timer(QpContext& qp);
  void on_timer(QpContext& qp);

  uint64_t acks() const { return acks_; }
  uint64_t naks() const { return naks_; }
  uint64_t timeouts() const { return timeouts_; }
  uint64_t stale_responses() const { return stale_responses_; }

private:
  void retire_through(QpContext& qp, Psn psn);
  // A READ response or atomic ACK for `psn`; false if it was not the one expected.
  void place_response(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame);
  void progress(QpContext& qp);
  Nic& nic_;
  uint64_t acks_ = 0, naks_ = 0, timeouts_ = 0, stale_responses_ = 0;
};

}  // namespace rnicsim::nic
