#include "nic_model/context_cache.hpp"

#include <algorithm>

#include "nic_model/queue_format.hpp"

namespace rnicsim::nic {

ContextCache::ContextCache(const NicParams& params, PcieLink& pcie, MemoryTranslation& translation)
    : params_(params),
      pcie_(pcie),
      translation_(translation),
      qpc_(params.qpc_cache_entries, params.qpc_cache_ways),
      wqes_(params.wqe_cache_entries, params.wqe_cache_ways) {
  translation_.set_cache(params.mtt_cache_entries, params.mtt_cache_ways, params.mtt_page_bytes);
}

sim::Time ContextCache::context_ready(Qpn qpn, sim::Time now) {
  if (qpc_.access(qpn.value())) return arriving_.empty() ? now : landing(qpn, now);
  return pcie_.read(now, params_.qpc_entry_bytes);
}

sim::Time ContextCache::wqe_ready(uint64_t key, sim::Time now) {
  return wqes_.access(key) ? now : pcie_.read(now, kMinWqeStride);
}

void ContextCache::prefetch(Qpn qpn, sim::Time now) {
  if (qpc_.access(qpn.value())) return;
  drop_landed(now);  // else a run of misses, which never asks landing(), would grow the list
  arriving_.push_back({qpn, pcie_.read(now, params_.qpc_entry_bytes)});
}

void ContextCache::drop_landed(sim::Time now) {
  std::erase_if(arriving_, [&](const Arriving& a) { return a.at <= now; });
}

sim::Time ContextCache::landing(Qpn qpn, sim::Time now) {
  drop_landed(now);
  for (const Arriving& a : arriving_)
    if (a.qpn == qpn) return a.at;
  return now;
}

sim::Duration ContextCache::translation_stall(sim::Time now) {
  sim::Time ready = now;
  for (uint32_t m = translation_.take_misses(); m > 0; --m)
    ready = std::max(ready, pcie_.read(now, params_.mtt_entry_bytes));
  return ready - now;
}

}  // namespace rnicsim::nic
