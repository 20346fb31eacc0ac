// The NIC's on-chip caches of QP contexts and of memory translation entries:
// what a miss costs (a DMA read of the entry from the context tables in host memory).
#pragma once

#include <cstdint>
#include <vector>

#include "nic_model/set_cache.hpp"
#include "nic_model/memory_translation.hpp"
#include "nic_model/nic_params.hpp"
#include "nic_model/pcie_link.hpp"
#include "nic_model/types.hpp"
#include "sim/time.hpp"

namespace rnicsim::nic {

class ContextCache {
public:
  ContextCache(const NicParams& params, PcieLink& pcie, MemoryTranslation& translation);
  // When the context of `qpn` is on the NIC: `now` on a hit, else when its read
  // lands (also for a context a prefetch is still reading).
  sim::Time context_ready(Qpn qpn, sim::Time now);
  // The scheduler's look-ahead: a block that waits for one context reads the
  // contexts of the next QPs it will serve meanwhile (`qpc_prefetch` of them),
  // so misses overlap instead of following each other.
  uint32_t prefetch_depth() const { return params_.qpc_prefetch; }
  void prefetch(Qpn qpn, sim::Time now);
  // How long the block that just made translation-cache misses waits for them.
  sim::Duration translation_stall(sim::Time now);
  void forget(Qpn qpn) { qpc_.keys.erase(qpn.value()); }
  const SetCache& qpc() const { return qpc_.keys; }

  // The requester's WQE cache: a READ or atomic request sent keeps its WQE on
  // the NIC, where its answer (a READ's first response, an atomic's ACK, with
  // the request's PSN) finds where to place its data. An answer whose WQE was
  // dropped meanwhile reads it again from the send queue: ready when it lands.
  static uint64_t wqe_key(Qpn qpn, Psn psn) { return (uint64_t{qpn.value()} << 24) | psn.value(); }
  void wqe_sent(Qpn qpn, Psn psn) { wqes_.keys.access(wqe_key(qpn, psn)); }
  sim::Time wqe_ready(uint64_t key, sim::Time now);
  // A unit that waits for one WQE reads those of the answers behind it
  // meanwhile (as many as wqe_prefetch), so the reads overlap.
  uint32_t wqe_prefetch_depth() const { return params_.wqe_prefetch; }
  void prefetch_wqe(uint64_t key, sim::Time now);
  const SetCache& wqes() const { return wqes_.keys; }

private:
  const NicParams& params_;
  PcieLink& pcie_;
  MemoryTranslation& translation_;
  // A cache whose misses are DMA reads of `entry_bytes` (QP contexts by QPN,
  // WQEs by wqe_key): the keys resident, and those read ahead whose read has
  // not landed yet, with when it lands; at most a few (the misses under way),
  // dropped once landed.
  struct ReadCache {
    SetCache keys;
    uint32_t entry_bytes;
    struct Arriving {
      uint64_t key;
      sim::Time at;
    };
    std::vector<Arriving> arriving;
    // When `key`'s entry is on the NIC: `now` on a hit (or its read ahead's
    // landing), else when its read lands.
    sim::Time ready(uint64_t key, sim::Time now, PcieLink& pcie);
    void prefetch(uint64_t key, sim::Time now, PcieLink& pcie);
    void drop_landed(sim::Time now);
  };
  ReadCache qpc_, wqes_;
};

}  // namespace rnicsim::nic
