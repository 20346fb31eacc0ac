#include "nic_model/context_cache.hpp"

#include <algorithm>

#include "nic_model/queue_format.hpp"

namespace rnicsim::nic {

ContextCache::ContextCache(const NicParams& params, PcieLink& pcie, MemoryTranslation& translation)
    : params_(params),
      pcie_(pcie),
      translation_(translation),
      qpc_(params.qpc_cache_entries, params.qpc_cache_ways),
      wqes_(params.wqe_cache_entries, params.wqe_cache_ways, Replacement::Random) {
  translation_.set_cache(params.mtt_cache_entries, params.mtt_cache_ways, params.mtt_page_bytes);
}

sim::Time ContextCache::context_ready(Qpn qpn, sim::Time now) {
  if (qpc_.access(qpn.value())) return arriving_.empty() ? now : landing(arriving_, qpn.value(), now);
  return pcie_.read(now, params_.qpc_entry_bytes);
}

void ContextCache::prefetch(Qpn qpn, sim::Time now) {
  if (qpc_.access(qpn.value())) return;
  drop_landed(arriving_, now);  // else a run of misses, which never asks landing(), would grow the list
  arriving_.push_back({qpn.value(), pcie_.read(now, params_.qpc_entry_bytes)});
}

sim::Time ContextCache::wqe_ready(uint64_t key, sim::Time now) {
  if (wqes_.access(key)) return wqes_arriving_.empty() ? now : landing(wqes_arriving_, key, now);
  return pcie_.read(now, kMinWqeStride);
}

void ContextCache::prefetch_wqe(uint64_t key, sim::Time now) {
  if (wqes_.access(key)) return;
  drop_landed(wqes_arriving_, now);
  wqes_arriving_.push_back({key, pcie_.read(now, kMinWqeStride)});
}

void ContextCache::drop_landed(std::vector<Arriving>& arriving, sim::Time now) {
  std::erase_if(arriving, [&](const Arriving& a) { return a.at <= now; });
}

sim::Time ContextCache::landing(std::vector<Arriving>& arriving, uint64_t key, sim::Time now) {
  drop_landed(arriving, now);
  for (const Arriving& a : arriving)
    if (a.key == key) return a.at;
  return now;
}

sim::Duration ContextCache::translation_stall(sim::Time now) {
  sim::Time ready = now;
  for (uint32_t m = translation_.take_misses(); m > 0; --m)
    ready = std::max(ready, pcie_.read(now, params_.mtt_entry_bytes));
  return ready - now;
}

}  // namespace rnicsim::nic
