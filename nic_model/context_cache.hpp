// The NIC's on-chip caches of QP contexts and of memory translation entries:
// what a miss costs (a DMA read of the entry from the context tables in host memory).
#pragma once

#include <cstdint>

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
  // When the context of `qpn` is on the NIC: `now` on a hit, else when its read lands.
  sim::Time context_ready(Qpn qpn, sim::Time now);
  // How long the block that just made translation-cache misses waits for them.
  sim::Duration translation_stall(sim::Time now);
  void forget(Qpn qpn) { qpc_.erase(qpn.value()); }
  const SetCache& qpc() const { return qpc_; }

private:
  const NicParams& params_;
  PcieLink& pcie_;
  MemoryTranslation& translation_;
  SetCache qpc_;
};

}  // namespace rnicsim::nic
