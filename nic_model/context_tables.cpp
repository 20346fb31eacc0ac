#include "nic_model/context_tables.hpp"

namespace rnicsim::nic {

QpContext* ContextTables::qp_slow(Qpn qpn) {
  auto it = qps_.find(qpn);
  if (it == qps_.end()) return nullptr;
  qp_slots_[qpn.value() % kQpSlots] = it->second.get();
  return it->second.get();
}

CqContext* ContextTables::cq(Cqn cqn) {
  auto it = cqs_.find(cqn);
  return it == cqs_.end() ? nullptr : &it->second;
}

SrqContext* ContextTables::srq(Srqn srqn) {
  auto it = srqs_.find(srqn);
  return it == srqs_.end() ? nullptr : it->second.get();
}

WorkRing* ContextTables::work_ring(WorkQueue queue) {
  if (queue.is_srq()) {
    SrqContext* s = srq(queue.srqn());
    return s == nullptr ? nullptr : &s->ring;
  }
  QpContext* q = qp(queue.qpn());
  if (q == nullptr) return nullptr;
  return queue.kind() == QueueKind::Send ? &q->sq : &q->rq;
}

const AddressVector* ContextTables::address_handle(uint32_t index) const {
  return index < address_handles_.size() ? &address_handles_[index] : nullptr;
}

QpContext& ContextTables::add_qp(std::unique_ptr<QpContext> qp) {
  QpContext& q = *qp;
  qps_.emplace(q.qpn, std::move(qp));
  return q;
}

bool ContextTables::erase_qp(Qpn qpn) {
  QpContext*& slot = qp_slots_[qpn.value() % kQpSlots];
  if (slot != nullptr && slot->qpn == qpn) slot = nullptr;
  return qps_.erase(qpn) > 0;
}

SrqContext& ContextTables::add_srq(std::unique_ptr<SrqContext> srq) {
  SrqContext& s = *srq;
  srqs_.emplace(s.srqn, std::move(srq));
  return s;
}

uint32_t ContextTables::add_ah(const AddressVector& av) {
  if (!free_address_handles_.empty()) {
    const uint32_t index = free_address_handles_.back();
    free_address_handles_.pop_back();
    address_handles_[index] = av;
    return index;
  }
  address_handles_.push_back(av);
  return static_cast<uint32_t>(address_handles_.size() - 1);
}

bool ContextTables::erase_ah(uint32_t index) {
  if (index >= address_handles_.size()) return false;
  address_handles_[index] = AddressVector{};
  free_address_handles_.push_back(index);
  return true;
}

}  // namespace rnicsim::nic
