// The host's cores as they post work. ibv_post_send costs a core time: it
// builds each WQE in the send ring (post_cost), then writes the doorbell, or
// with BlueFlame the WQE itself, by MMIO (mmio_cost per 64-byte line: the
// stores into the write-combining buffer and their flush). A core does one
// thing at a time, so the doorbells of a busy core leave late, and its busy
// time says whether the host bounds a workload's rate (Kalia et al., ATC 2016:
// one core posting to one QP is CPU- or MMIO-bound, not NIC-bound).
// With both costs zero a doorbell is rung at once: posting is free.
#pragma once

#include <cstdint>
#include <deque>

#include "nic_model/nic.hpp"
#include "sim/ring_queue.hpp"
#include "sim/scheduler.hpp"

namespace rnicsim::scenario {

class HostCores {
public:
  struct Costs {
    sim::Duration post = sim::Duration::zero();  // per WQE built
    sim::Duration mmio = sim::Duration::zero();  // per 64-byte line written by MMIO
    bool blueflame_wqe_size = false;  // a BlueFlame write is the WQE's own size, not its ring slot
  };
  HostCores(nic::Nic& nic, sim::Actor actor, uint32_t cores, Costs costs);
  HostCores(const HostCores&) = delete;
  HostCores& operator=(const HostCores&) = delete;

  // Core `core` builds a WQE (already in the ring at `producer`) and, if
  // `ring`, writes its doorbell, by BlueFlame when `wqe` is given (its QP of
  // `type`). Returns when the core started on it: now, or when it was done
  // with earlier posts.
  sim::Time post(uint32_t core, nic::WorkQueue queue, uint64_t producer, bool ring, const nic::SendWqe* wqe,
                 nic::QpType type);
  // A receive WQE: its doorbell record, a store to host memory the NIC reads
  // (no MMIO), so only the WQE's building costs.
  sim::Time post_recv(uint32_t core, nic::WorkQueue queue, uint64_t producer);

  uint32_t count() const { return static_cast<uint32_t>(cores_.size()); }
  // Time the core spent posting, since the start.
  sim::Duration busy(uint32_t core) const { return cores_[core].busy; }
  sim::Duration busiest() const;

private:
  struct Ring {
    sim::Time at;
    nic::WorkQueue queue;
    uint64_t producer = 0;
    bool with_wqe = false;
    uint32_t bytes = 64;  // the MMIO writes: the doorbell's line, or the BlueFlame WQE's
    nic::SendWqe wqe{};
  };
  struct Core {
    Core(HostCores& owner, sim::Actor actor);
    sim::Time free;  // done with what it was given
    sim::Duration busy = sim::Duration::zero();
    sim::RingQueue<Ring> rings;  // doorbells written, not yet rung
    sim::Event ring_next;
  };
  sim::Time take(Core& c, sim::Duration cost);
  void ring_when_written(Core& c, const Ring& r);
  void ring(const Ring& r);
  void ring_due(Core& c);

  nic::Nic& nic_;
  Costs costs_;
  std::deque<Core> cores_;  // events stay where they are
};

}  // namespace rnicsim::scenario
