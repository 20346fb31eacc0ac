#include "nic_model/memory_translation.hpp"

#include <algorithm>

#include "nic_model/host_memory.hpp"

namespace rnicsim::nic {

const MemoryRegion& MemoryTranslation::add(Pdn pd, uint64_t addr, uint64_t length, uint64_t iova,
                                           uint32_t access) {
  const uint32_t index = next_index_++;
  // Key = 24-bit index and an 8-bit tag, as NICs build them; lkey and rkey differ.
  const Lkey lkey((index << 8) | 0x11);
  const Rkey rkey((index << 8) | 0x22);
  MemoryRegion mr{pd, addr, length, iova, access, lkey, rkey};
  auto [it, _] = by_lkey_.insert_or_assign(lkey, mr);
  rkey_to_lkey_[rkey] = lkey;
  return it->second;
}

bool MemoryTranslation::modify(Lkey lkey, Pdn pd, uint64_t addr, uint64_t length, uint64_t iova,
                               uint32_t access) {
  auto it = by_lkey_.find(lkey);
  if (it == by_lkey_.end()) return false;
  MemoryRegion& mr = it->second;
  mr.pd = pd;
  mr.addr = addr;
  mr.length = length;
  mr.iova = iova;
  mr.access = access;
  return true;
}

bool MemoryTranslation::remove(Lkey lkey) {
  auto it = by_lkey_.find(lkey);
  if (it == by_lkey_.end()) return false;
  rkey_to_lkey_.erase(it->second.rkey);
  by_lkey_.erase(it);
  last_lkey_ = last_rkey_ = nullptr;
  return true;
}

const MemoryRegion* MemoryTranslation::by_lkey(Lkey lkey) const {
  if (last_lkey_ != nullptr && last_lkey_->lkey == lkey) return last_lkey_;
  auto it = by_lkey_.find(lkey);
  if (it == by_lkey_.end()) return nullptr;
  last_lkey_ = &it->second;
  return last_lkey_;
}

const MemoryRegion* MemoryTranslation::by_rkey(Rkey rkey) const {
  if (last_rkey_ != nullptr && last_rkey_->rkey == rkey) return last_rkey_;
  auto it = rkey_to_lkey_.find(rkey);
  if (it == rkey_to_lkey_.end()) return nullptr;
  const MemoryRegion* mr = by_lkey(it->second);
  last_rkey_ = mr;
  return mr;
}

void MemoryTranslation::touch(const MemoryRegion& mr, uint64_t va, uint64_t len) const {
  if (cache_.capacity() == 0) return;
  const uint64_t from = va - mr.iova, to = from + (len == 0 ? 0 : len - 1);
  const uint64_t first = page_shift_ >= 0 ? from >> page_shift_ : from / page_bytes_;
  const uint64_t last = page_shift_ >= 0 ? to >> page_shift_ : to / page_bytes_;
  for (uint64_t page = first; page <= last; ++page)
    if (!cache_.access((uint64_t{mr.lkey.value() >> 8} << 40) | page)) ++pending_misses_;
}

AccessCheck MemoryTranslation::check(const MemoryRegion* mr, Pdn pd, uint64_t va, uint64_t len,
                                     uint32_t needed, uint64_t& host_addr) const {
  if (mr == nullptr) return AccessCheck::BadKey;
  if (mr->pd != pd) return AccessCheck::BadPd;
  if (!range_within(mr->iova, mr->length, va, len)) return AccessCheck::OutOfBounds;
  if ((mr->access & needed) != needed) return AccessCheck::NoPermission;
  host_addr = mr->addr + (va - mr->iova);
  touch(*mr, va, len);
  return AccessCheck::Ok;
}

AccessCheck MemoryTranslation::check_local(Lkey lkey, Pdn pd, uint64_t va, uint64_t len, uint32_t needed,
                                           uint64_t& host_addr) const {
  return check(by_lkey(lkey), pd, va, len, needed, host_addr);
}

AccessCheck MemoryTranslation::check_remote(Rkey rkey, Pdn pd, uint64_t va, uint64_t len,
                                            uint32_t needed, uint64_t& host_addr) const {
  return check(by_rkey(rkey), pd, va, len, needed, host_addr);
}

AccessCheck MemoryTranslation::map_sges(std::span<const Sge> sges, Pdn pd, uint64_t offset, uint64_t len,
                                        uint32_t needed, SgeMap& out) const {
  out.count = 0;
  uint64_t skip = offset, placed = 0;
  for (const Sge& s : sges) {
    if (placed == len) break;
    if (skip >= s.length) {
      skip -= s.length;
      continue;
    }
    const uint64_t n = std::min<uint64_t>(s.length - skip, len - placed);
    uint64_t host = 0;
    const AccessCheck c = check_local(Lkey(s.lkey), pd, s.addr + skip, n, needed, host);
    if (c != AccessCheck::Ok) return c;
    out.pieces[out.count++] = DmaPiece{host, static_cast<uint32_t>(placed), static_cast<uint32_t>(n)};
    placed += n;
    skip = 0;
  }
  return placed == len ? AccessCheck::Ok : AccessCheck::TooShort;
}

bool MemoryTranslation::invalidate_rkey(Rkey rkey) {
  auto it = rkey_to_lkey_.find(rkey);
  if (it == rkey_to_lkey_.end()) return false;
  rkey_to_lkey_.erase(it);
  last_rkey_ = nullptr;
  return true;
}

}  // namespace rnicsim::nic
