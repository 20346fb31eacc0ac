#include "emulation/doorbell_scanner.hpp"

namespace rnicsim::emulation {
namespace proto = verbs_proto;

namespace {

// Virtual clock: doorbells wait for a program thread that still runs until the
// programs have used this many settle times of CPU since they last acted (see
// take): a busy-polling thread is waiting for the NIC by then, while one that
// waits for a CPU on a loaded machine has used none.
constexpr int kSettleCap = 4;

}  // namespace

bool DoorbellScanner::scan_host(HostState& h) {
  const bool noticed = clock_ == ClockMode::Virtual;
  auto value = [noticed](const auto& live, auto seen) { return noticed ? seen : live.load(std::memory_order_acquire); };
  bool any = false;
  nic::Nic& n = *h.host->nic;
  for (auto& [qpn, q] : h.qps) {
    const Context& c = registry_.context(q.ctx);
    const proto::DoorbellRecord& d = c.doorbell(q.doorbell);
    const uint64_t sq = value(d.sq_producer, q.sq_noticed);
    if (sq != q.sq_seen) {
      q.sq_seen = sq;
      h.memory.space(c.slot).forget_reads();  // the program may have filled what it posts
      n.ring_doorbell(nic::WorkQueue::send(nic::Qpn(qpn)), sq);
      any = true;
    }
    const uint64_t rq = value(d.rq_producer, q.rq_noticed);
    if (rq != q.rq_seen) {
      q.rq_seen = rq;
      n.ring_doorbell(nic::WorkQueue::recv(nic::Qpn(qpn)), rq);
      any = true;
    }
  }
  for (auto& [srqn, q] : h.srqs) {
    const uint64_t p = value(registry_.context(q.ctx).doorbell(q.doorbell).sq_producer, q.noticed);
    if (p != q.seen) {
      q.seen = p;
      n.ring_doorbell(nic::WorkQueue::srq(nic::Srqn(srqn)), p);
      any = true;
    }
  }
  for (auto& [cqn, q] : h.cqs) {
    const proto::DoorbellRecord& d = registry_.context(q.ctx).doorbell(q.doorbell);
    const uint32_t seq = value(d.arm_seq, q.arm_noticed);
    if (seq == q.arm_seen) continue;
    q.arm_seen = seq;
    any = true;
    // A CQE written after the program looked raises the event at once; one
    // it saw before it armed does not (it polls that one itself).
    n.arm_cq(nic::Cqn(cqn), d.arm_solicited.load(std::memory_order_relaxed) != 0, d.arm_seen.load(std::memory_order_relaxed));
  }
  return any;
}

bool DoorbellScanner::scan() {
  bool any = false;
  for (auto& h : registry_.hosts()) any |= scan_host(*h);
  if (any) ++scans_with_work_;
  return any;
}

bool DoorbellScanner::notice() {
  bool changed = false;
  auto notice = [&changed](const auto& live, auto& noticed) {
    const auto v = live.load(std::memory_order_acquire);
    changed |= v != noticed;
    noticed = v;
  };
  for (auto& h : registry_.hosts()) {
    for (auto& [qpn, q] : h->qps) {
      const proto::DoorbellRecord& d = registry_.context(q.ctx).doorbell(q.doorbell);
      notice(d.sq_producer, q.sq_noticed);
      notice(d.rq_producer, q.rq_noticed);
    }
    for (auto& [srqn, q] : h->srqs) notice(registry_.context(q.ctx).doorbell(q.doorbell).sq_producer, q.noticed);
    for (auto& [cqn, q] : h->cqs) notice(registry_.context(q.ctx).doorbell(q.doorbell).arm_seq, q.arm_noticed);
  }
  return changed;
}

bool DoorbellScanner::take() {
  if (clock_ == ClockMode::Real) return scan();
  if (notice()) executor_.touch();
  if (executor_.settling()) return false;
  // A thread that still runs (or waits for a CPU) may be about to ring.
  if (!programs_done()) return false;
  return scan();
}

// Whether every program thread sleeps, or those that run have had their CPU
// time's worth since the programs last acted (wall time where the kernel does
// not say).
bool DoorbellScanner::programs_done() {
  // A request on its way lands with the doorbells rung before it.
  if (sessions_.request_pending()) return false;
  const ThreadsState t = sessions_.programs_state();
  if (t.asleep && asleep_at_once(t)) return true;
  const auto cap = kSettleCap * settle_;
  if (!t.cpu_known) return executor_.since_acted() >= cap;
  const auto since = executor_.since_acted();
  if (since < baseline_acted_ || t.cpu_ns < baseline_cpu_ns_) baseline_cpu_ns_ = t.cpu_ns;
  baseline_acted_ = since;
  return std::chrono::nanoseconds(t.cpu_ns - baseline_cpu_ns_) >= cap;
}

// Whether the threads a look found asleep were all asleep at one instant (a
// second look, program_state.hpp), and nothing they rang or asked before it
// is missing from the doorbells noticed: the programs' burst is whole. A
// thread woken in between fails it, and the next take looks again.
bool DoorbellScanner::asleep_at_once(const ThreadsState& first) {
  if (!first.cpu_known) return true;  // the kernel says no more
  if (!asleep_throughout(first, sessions_.programs_state()) || sessions_.request_pending()) return false;
  if (!notice()) return true;
  executor_.touch();  // rung while the threads were read: a burst goes on
  return false;
}

void DoorbellScanner::set_sleeping(bool on) {
  for (auto& [id, c] : registry_.contexts()) c->header().daemon_sleeping.store(on ? 1 : 0, std::memory_order_seq_cst);
}

void DoorbellScanner::set_contended(bool on) {
  for (auto& [id, c] : registry_.contexts()) c->header().cpus_contended.store(on ? 1 : 0, std::memory_order_relaxed);
}

}  // namespace rnicsim::emulation
