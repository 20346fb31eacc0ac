#include "nic_model/context_cache.hpp"

#include <algorithm>

#include "nic_model/queue_format.hpp"

namespace rnicsim::nic {

ContextCache::ContextCache(const NicParams& params, PcieLink& pcie, MemoryTranslation& translation)
    : params_(params),
      pcie_(pcie),
      translation_(translation),
      qpc_{SetCache(params.qpc_cache_entries, params.qpc_cache_ways), params.qpc_entry_bytes, {}},
      wqes_{SetCache(params.wqe_cache_entries, params.wqe_cache_ways, Replacement::Random), kMinWqeStride, {}} {
  translation_.set_cache(params.mtt_cache_entries, params.mtt_cache_ways, params.mtt_page_bytes);
}

sim::Time ContextCache::context_ready(Qpn qpn, sim::Time now) { return qpc_.ready(qpn.value(), now, pcie_); }
void ContextCache::prefetch(Qpn qpn, sim::Time now) { qpc_.prefetch(qpn.value(), now, pcie_); }
sim::Time ContextCache::wqe_ready(uint64_t key, sim::Time now) { return wqes_.ready(key, now, pcie_); }
void ContextCache::prefetch_wqe(uint64_t key, sim::Time now) { wqes_.prefetch(key, now, pcie_); }

sim::Time ContextCache::ReadCache::ready(uint64_t key, sim::Time now, PcieLink& pcie) {
  if (!keys.access(key)) return pcie.read(now, entry_bytes);
  if (arriving.empty()) return now;
  drop_landed(now);
  for (const Arriving& a : arriving)
    if (a.key == key) return a.at;
  return now;
}

void ContextCache::ReadCache::prefetch(uint64_t key, sim::Time now, PcieLink& pcie) {
  if (keys.access(key)) return;
  drop_landed(now);  // else a run of misses, which never asks ready() of a hit, would grow the list
  arriving.push_back({key, pcie.read(now, entry_bytes)});
}

void ContextCache::ReadCache::drop_landed(sim::Time now) {
  std::erase_if(arriving, [&](const Arriving& a) { return a.at <= now; });
}

sim::Duration ContextCache::translation_stall(sim::Time now) {
  sim::Time ready = now;
  for (uint32_t m = translation_.take_misses(); m > 0; --m)
    ready = std::max(ready, pcie_.read(now, params_.mtt_entry_bytes));
  return ready - now;
}

}  // namespace rnicsim::nic
