// The NIC's context tables: the QP, CQ and SRQ contexts and the address
// handles, by number. The control path fills them; every block looks up in them.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "nic_model/qp_context.hpp"
#include "nic_model/types.hpp"

namespace rnicsim::nic {

class ContextTables {
public:
  QpContext* qp(Qpn qpn) {
    QpContext* hit = qp_slots_[qpn.value() % kQpSlots];
    return hit != nullptr && hit->qpn == qpn ? hit : qp_slow(qpn);
  }
  CqContext* cq(Cqn cqn);
  SrqContext* srq(Srqn srqn);
  // The ring a doorbell of that queue advances.
  WorkRing* work_ring(WorkQueue queue);
  const AddressVector* address_handle(uint32_t index) const;

  bool has_qp(Qpn qpn) const { return qps_.contains(qpn); }
  QpContext& add_qp(std::unique_ptr<QpContext> qp);
  bool erase_qp(Qpn qpn);
  CqContext& add_cq(Cqn cqn) { return cqs_[cqn]; }
  bool erase_cq(Cqn cqn) { return cqs_.erase(cqn) > 0; }
  SrqContext& add_srq(std::unique_ptr<SrqContext> srq);
  bool erase_srq(Srqn srqn) { return srqs_.erase(srqn) > 0; }
  // The index of a new address handle (one given back first).
  uint32_t add_ah(const AddressVector& av);
  bool erase_ah(uint32_t index);

  size_t qp_count() const { return qps_.size(); }
  // Calls `f(const QpContext&)` for every QP, in QPN order.
  template <class F>
  void for_each_qp(F&& f) const {
    std::vector<Qpn> qpns;
    for (const auto& [qpn, qp] : qps_) qpns.push_back(qpn);
    std::sort(qpns.begin(), qpns.end());
    for (Qpn q : qpns) f(*qps_.at(q));
  }

private:
  QpContext* qp_slow(Qpn qpn);
  std::unordered_map<Qpn, std::unique_ptr<QpContext>> qps_;
  // A direct-mapped table in front of qps_, so that most packets find their QP
  // without a hash look-up. QPNs are handed out in sequence: up to kQpSlots QPs
  // created one after the other never evict each other.
  static constexpr size_t kQpSlots = 1024;
  std::array<QpContext*, kQpSlots> qp_slots_{};
  std::unordered_map<Cqn, CqContext> cqs_;
  std::unordered_map<Srqn, std::unique_ptr<SrqContext>> srqs_;
  std::vector<AddressVector> address_handles_;
  std::vector<uint32_t> free_address_handles_;  // indices erase_ah gave back
};

}  // namespace rnicsim::nic
