// The responder: executes incoming requests in PSN order. It checks the PSN
// (duplicates are re-acknowledged, gaps are NAKed once with a PSN sequence error),
// checks rkeys and bounds, DMA-writes RDMA WRITE payload and places SEND payload
// into receive WQEs, writes receive completions, and sends coalesced ACKs, NAKs
// and RNR NAKs.
#pragma once

#include <cstdint>

#include "fabric/frame.hpp"
#include "nic_model/completer.hpp"
#include "nic_model/qp_context.hpp"
#include "packet/packet.hpp"

namespace rnicsim::nic {

class Nic;

class Responder {
public:
  enum class Verdict : uint8_t { Done, Stall };
  explicit Responder(Nic& nic) : nic_(nic) {}

  // Handles one request packet. Stall: a receive WQE is on its way from host
  // memory; the caller keeps the packet and retries after recv_wqes_arrived.
  Verdict receive(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame);
  void recv_wqes_arrived(uint32_t qpn);

  struct Counters {
    uint64_t requests = 0, duplicates = 0, out_of_sequence = 0, rnr_naks = 0, access_errors = 0,
             invalid_requests = 0, dropped = 0, acks_sent = 0;
  };
  const Counters& counters() const { return counters_; }

private:
  void send_ack(QpContext& qp, uint8_t syndrome, Psn psn);
  // Places SEND payload into the head receive WQE; false if it does not fit.
  bool place_send(QpContext& qp, std::span<const std::byte> payload, fabric::Frame& frame);
  void complete_recv(QpContext& qp, const packet::ParsedPacket& p, WcOpcode op, uint32_t byte_len);
  Verdict need_recv_wqe(QpContext& qp);

  Nic& nic_;
  Counters counters_;
};

}  // namespace rnicsim::nic
