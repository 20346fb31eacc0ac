// Strong types of the NIC: the wire's numbers (QPN, PSN, keys, SRQ numbers,
// the AETH syndrome) from the packet layer, message sequence numbers, and the
// control path's CQ and protection-domain numbers.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <variant>

#include "packet/numbers.hpp"
#include "packet/psn.hpp"
#include "packet/syndrome.hpp"

namespace rnicsim::nic {

using packet::Psn;
using packet::AckKind;
using packet::NakCode;
using packet::Syndrome;

// A message sequence number: 24 bits, counting messages a responder completed.
class Msn {
public:
  constexpr Msn() = default;
  constexpr explicit Msn(uint32_t v) : v_(v & 0xFFFFFF) {}
  constexpr uint32_t value() const { return v_; }
  constexpr Msn& operator++() {
    v_ = (v_ + 1) & 0xFFFFFF;
    return *this;
  }
  constexpr bool operator==(const Msn&) const = default;

private:
  uint32_t v_ = 0;
};

using packet::Number32;
using packet::Qpn;
using packet::Srqn;
using packet::Lkey;
using packet::Rkey;
using packet::Qkey;
struct CqnTag;
struct PdnTag;
// Completion queue and protection domain numbers (from 1; 0 names none).
using Cqn = Number32<CqnTag>;
using Pdn = Number32<PdnTag>;

// The queues a doorbell advances: a QP's send or receive queue, or a shared receive queue.
enum class QueueKind : uint8_t { Send, Recv, Srq };

// One such queue: its kind and the QP or SRQ it belongs to, so that an SRQ
// number never travels as a QPN.
class WorkQueue {
public:
  constexpr WorkQueue() = default;
  static constexpr WorkQueue send(Qpn qp) { return {QueueKind::Send, qp.value()}; }
  static constexpr WorkQueue recv(Qpn qp) { return {QueueKind::Recv, qp.value()}; }
  static constexpr WorkQueue srq(Srqn srq) { return {QueueKind::Srq, srq.value()}; }
  constexpr QueueKind kind() const { return kind_; }
  constexpr bool is_srq() const { return kind_ == QueueKind::Srq; }
  constexpr Qpn qpn() const { return Qpn(number_); }     // of a Send or Recv queue
  constexpr Srqn srqn() const { return Srqn(number_); }  // of an Srq
  constexpr auto operator<=>(const WorkQueue&) const = default;

private:
  constexpr WorkQueue(QueueKind kind, uint32_t number) : kind_(kind), number_(number) {}
  QueueKind kind_ = QueueKind::Send;
  uint32_t number_ = 0;
};

// Asynchronous events (values match ibv_event_type).
enum class AsyncEvent : uint8_t {
  CqErr = 0,
  QpFatal = 1,
  QpReqErr = 2,
  QpAccessErr = 3,
  CommEst = 4,
  SqDrained = 5,
  SrqErr = 14,
  SrqLimitReached = 15,
  QpLastWqeReached = 16,
};

// The object an asynchronous event is about: a QP, an SRQ or a CQ.
using AsyncObject = std::variant<Qpn, Srqn, Cqn>;
// Its number, as the host's event record carries it.
constexpr uint32_t number_of(const AsyncObject& o) {
  return std::visit([](auto n) { return n.value(); }, o);
}

}  // namespace rnicsim::nic

