#include "emulation/process_memory.hpp"

#include <sys/uio.h>

#include <atomic>
#include <cstring>

#include "nic_model/queue_format.hpp"

namespace rnicsim::emulation {
namespace {
// Rights that let the NIC write into a region: a receive or READ response needs
// local write, an RDMA WRITE remote write, an atomic remote atomic.
constexpr uint32_t kWriteRights = nic::kAccessLocalWrite | nic::kAccessRemoteWrite | nic::kAccessRemoteAtomic;
}  // namespace

void ProcessHostMemory::add_region(uint64_t addr, uint64_t length, uint32_t access) {
  regions_.emplace(addr, Region{length, access});
}

void ProcessHostMemory::remove_region(uint64_t addr, uint64_t length, uint32_t access) {
  auto [lo, hi] = regions_.equal_range(addr);
  for (auto it = lo; it != hi; ++it)
    if (it->second.length == length && it->second.access == access) {
      regions_.erase(it);
      return;
    }
}

void ProcessHostMemory::clear() {
  regions_.clear();
  segments_.clear();
  pid_ = 0;
}

std::byte* ProcessHostMemory::in_segment(uint64_t addr, uint64_t len) const {
  if (addr < kSegmentBase) return nullptr;
  auto it = segments_.upper_bound(addr);
  if (it == segments_.begin()) return nullptr;
  --it;
  const uint64_t off = addr - it->first;
  if (off > it->second.bytes || len > it->second.bytes - off) return nullptr;
  return it->second.local + off;
}

bool ProcessHostMemory::allowed(uint64_t addr, uint64_t len, bool write) const {
  for (const auto& [base, r] : regions_) {
    if (base > addr) break;
    if (addr - base <= r.length && len <= r.length - (addr - base) && (!write || (r.access & kWriteRights) != 0))
      return true;
  }
  ++denied_;
  return false;
}

bool ProcessHostMemory::read(uint64_t addr, std::span<std::byte> dst) const {
  if (std::byte* p = in_segment(addr, dst.size())) {
    std::memcpy(dst.data(), p, dst.size());
    return true;
  }
  if (pid_ == 0 || !allowed(addr, dst.size(), false)) return false;
  if (dst.empty()) return true;
  iovec local{dst.data(), dst.size()};
  iovec remote{reinterpret_cast<void*>(addr), dst.size()};
  return process_vm_readv(pid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(dst.size());
}

bool ProcessHostMemory::write(uint64_t addr, std::span<const std::byte> src) {
  if (std::byte* p = in_segment(addr, src.size())) {
    if (src.size() == sizeof(nic::Cqe)) {
      // A CQE: everything but the owner byte first, so a program that sees the
      // owner flip reads a whole entry.
      constexpr size_t kOwner = offsetof(nic::Cqe, owner);
      std::memcpy(p, src.data(), kOwner);
      std::memcpy(p + kOwner + 1, src.data() + kOwner + 1, src.size() - kOwner - 1);
      std::atomic_ref<std::byte>(p[kOwner]).store(src[kOwner], std::memory_order_release);
      return true;
    }
    std::memcpy(p, src.data(), src.size());
    return true;
  }
  if (pid_ == 0 || !allowed(addr, src.size(), true)) return false;
  if (src.empty()) return true;
  iovec local{const_cast<std::byte*>(src.data()), src.size()};
  iovec remote{reinterpret_cast<void*>(addr), src.size()};
  return process_vm_writev(pid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(src.size());
}

}  // namespace rnicsim::emulation
