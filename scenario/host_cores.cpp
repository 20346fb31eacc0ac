#include "scenario/host_cores.hpp"

#include <algorithm>

namespace rnicsim::scenario {

HostCores::Core::Core(HostCores& owner, sim::Actor actor)
    : ring_next([this, &owner] { owner.ring_due(*this); }, "host.doorbell", actor) {}

HostCores::HostCores(nic::Nic& nic, sim::Actor actor, uint32_t cores, Costs costs) : nic_(nic), costs_(costs) {
  for (uint32_t i = 0; i < std::max<uint32_t>(cores, 1); ++i) cores_.emplace_back(*this, actor);
}

sim::Time HostCores::take(Core& c, sim::Duration cost) {
  const sim::Time start = std::max(nic_.now(), c.free);
  c.free = start + cost;
  c.busy += cost;
  return start;
}

sim::Time HostCores::post(uint32_t core, nic::WorkQueue queue, uint64_t producer, bool ring, const nic::SendWqe* wqe,
                          nic::QpType type) {
  Core& c = cores_[core % cores_.size()];
  if (!ring) return take(c, costs_.post);
  // The doorbell is one 8-byte store; a BlueFlame WQE is its 64-byte lines.
  const uint32_t bytes = wqe == nullptr             ? 64
                         : costs_.blueflame_wqe_size ? nic::blueflame_bytes(*wqe, type)
                                                     : nic::wqe_bytes(*wqe);
  const sim::Time start = take(c, costs_.post + costs_.mmio * (bytes / 64));
  Ring r{c.free, queue, producer, wqe != nullptr, bytes};
  if (wqe != nullptr) r.wqe = *wqe;
  ring_when_written(c, r);
  return start;
}

sim::Time HostCores::post_recv(uint32_t core, nic::WorkQueue queue, uint64_t producer) {
  Core& c = cores_[core % cores_.size()];
  const sim::Time start = take(c, costs_.post);
  ring_when_written(c, Ring{c.free, queue, producer});
  return start;
}

void HostCores::ring_when_written(Core& c, const Ring& r) {
  // Rung now only if nothing written before it still waits: doorbells keep their order.
  if (c.rings.empty() && r.at == nic_.now()) {
    ring(r);
    return;
  }
  c.rings.push_back(r);
  if (!c.ring_next.scheduled()) nic_.scheduler().schedule(c.ring_next, c.rings.front().at);
}

void HostCores::ring(const Ring& r) {
  if (r.with_wqe)
    nic_.ring_doorbell_with_wqe(r.queue.qpn(), r.producer, r.wqe, r.bytes);
  else
    nic_.ring_doorbell(r.queue, r.producer);
}

void HostCores::ring_due(Core& c) {
  while (!c.rings.empty() && c.rings.front().at <= nic_.now()) ring(c.rings.pop_front());
  if (!c.rings.empty()) nic_.scheduler().schedule(c.ring_next, c.rings.front().at);
}

sim::Duration HostCores::busiest() const {
  sim::Duration most = sim::Duration::zero();
  for (const Core& c : cores_) most = std::max(most, c.busy);
  return most;
}

}  // namespace rnicsim::scenario
