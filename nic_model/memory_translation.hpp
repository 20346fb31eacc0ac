// Memory translation and protection (the MPT on a real NIC): memory regions with
// their protection domain, bounds and access rights, found by lkey or rkey. Every
// local and remote access is checked here before the DMA engine touches memory.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>

#include "nic_model/dma_engine.hpp"
#include "nic_model/set_cache.hpp"
#include "nic_model/queue_format.hpp"
#include "nic_model/types.hpp"

namespace rnicsim::nic {

struct MemoryRegion {
  Pdn pd;
  uint64_t addr = 0;    // host address of the first byte
  uint64_t length = 0;
  uint64_t iova = 0;    // address the keys' users name (== addr unless registered with an iova)
  uint32_t access = 0;  // AccessFlags
  Lkey lkey;
  Rkey rkey;
};

enum class AccessCheck : uint8_t { Ok, BadKey, BadPd, OutOfBounds, NoPermission, TooShort };

// Where bytes of a message described by scatter/gather elements are in host memory.
// Only the first `count` pieces are ever read: the rest stay uninitialised,
// because zeroing all 28 (448 bytes, every packet) was a third of the
// requester's own time per packet.
struct SgeMap {
  std::array<DmaPiece, kMaxSge> pieces;
  uint32_t count = 0;
};

class MemoryTranslation {
public:
  MemoryTranslation() = default;
  MemoryTranslation(const MemoryTranslation&) = delete;  // it keeps pointers into itself
  MemoryTranslation& operator=(const MemoryTranslation&) = delete;
  // Models the NIC's translation cache: every checked access touches the pages it
  // covers; misses are counted until the block that made them takes them.
  void set_cache(uint32_t entries, uint32_t ways, uint32_t page_bytes) {
    cache_ = SetCache(entries, ways);
    page_bytes_ = page_bytes == 0 ? 4096 : page_bytes;
    page_shift_ = std::has_single_bit(page_bytes_) ? std::countr_zero(page_bytes_) : -1;
  }
  // Translation misses since the last call.
  uint32_t take_misses() {
    const uint32_t m = pending_misses_;
    pending_misses_ = 0;
    return m;
  }
  const SetCache& cache() const { return cache_; }

  // Registers a region; keys are derived from an index and a rolling tag.
  const MemoryRegion& add(Pdn pd, uint64_t addr, uint64_t length, uint64_t iova, uint32_t access);
  bool remove(Lkey lkey);
  // Re-registration (ibv_rereg_mr): the region takes a new PD, place or rights
  // and keeps its keys. False if there is no such region.
  bool modify(Lkey lkey, Pdn pd, uint64_t addr, uint64_t length, uint64_t iova, uint32_t access);
  const MemoryRegion* by_lkey(Lkey lkey) const;
  const MemoryRegion* by_rkey(Rkey rkey) const;

  // Checks an access of [va, va+len) with rights `needed` (AccessFlags; 0 means a
  // local read, always allowed) and, when Ok, yields the host address.
  AccessCheck check_local(Lkey lkey, Pdn pd, uint64_t va, uint64_t len, uint32_t needed,
                          uint64_t& host_addr) const;
  AccessCheck check_remote(Rkey rkey, Pdn pd, uint64_t va, uint64_t len, uint32_t needed,
                           uint64_t& host_addr) const;
  // Maps bytes [offset, offset+len) of the message the SGEs describe to host
  // memory, checking every key (TooShort: the SGEs hold fewer bytes). The SGEs
  // are as the WQE in host memory has them: their raw lkeys are taken here.
  AccessCheck map_sges(std::span<const Sge> sges, Pdn pd, uint64_t offset, uint64_t len, uint32_t needed,
                       SgeMap& out) const;
  // Send with invalidate: the region behind `rkey` no longer takes remote access.
  bool invalidate_rkey(Rkey rkey);
  size_t size() const { return by_lkey_.size(); }

private:
  AccessCheck check(const MemoryRegion* mr, Pdn pd, uint64_t va, uint64_t len, uint32_t needed,
                    uint64_t& host_addr) const;
  void touch(const MemoryRegion& mr, uint64_t va, uint64_t len) const;
  std::unordered_map<Lkey, MemoryRegion> by_lkey_;
  std::unordered_map<Rkey, Lkey> rkey_to_lkey_;
  uint32_t next_index_ = 1;
  mutable SetCache cache_;
  mutable uint32_t pending_misses_ = 0;
  uint32_t page_bytes_ = 4096;
  int page_shift_ = 12;  // log2(page_bytes_), -1 if it is not a power of two
  // The regions found last by each key: a stream of packets asks for the same
  // ones again and again. Cleared whenever a region or an rkey goes.
  mutable const MemoryRegion* last_lkey_ = nullptr;
  mutable const MemoryRegion* last_rkey_ = nullptr;
};

}  // namespace rnicsim::nic
