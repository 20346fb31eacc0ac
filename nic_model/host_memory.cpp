#include "nic_model/host_memory.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

namespace rnicsim::nic {

void SimulatedHostMemory::Free::operator()(std::byte* p) const noexcept { std::free(p); }

uint64_t SimulatedHostMemory::allocate(size_t size, size_t align) {
  if (size == 0) size = 1;
  const uint64_t addr = (next_ + align - 1) & ~static_cast<uint64_t>(align - 1);
  auto* bytes = static_cast<std::byte*>(std::calloc(size, 1));
  if (bytes == nullptr) throw std::bad_alloc();
  Region r{size, std::unique_ptr<std::byte[], Free>(bytes)};
  regions_.emplace(addr, std::move(r));
  next_ = addr + size + 4096;  // an unmapped gap after every region catches overruns
  allocated_ += size;
  return addr;
}

const SimulatedHostMemory::Region* SimulatedHostMemory::find(uint64_t addr, size_t len, uint64_t& offset) const {
  auto holds = [&](uint64_t start, const Region& r) { return range_within(start, r.size, addr, len); };
  // The last two regions found first: the NIC goes back and forth between a few.
  for (Found& f : found_) {
    if (f.region != nullptr && holds(f.start, *f.region)) {
      std::swap(f, found_[0]);
      offset = addr - found_[0].start;
      return found_[0].region;
    }
  }
  auto it = regions_.upper_bound(addr);
  if (it == regions_.begin()) return nullptr;
  --it;
  if (!holds(it->first, it->second)) return nullptr;
  offset = addr - it->first;
  found_[1] = found_[0];
  found_[0] = Found{it->first, &it->second};
  return &it->second;
}

bool SimulatedHostMemory::read(uint64_t addr, std::span<std::byte> dst) const {
  uint64_t off = 0;
  const Region* r = find(addr, dst.size(), off);
  if (r == nullptr) return false;
  if (!dst.empty()) std::memcpy(dst.data(), r->bytes.get() + off, dst.size());
  return true;
}

bool SimulatedHostMemory::write(uint64_t addr, std::span<const std::byte> src) {
  uint64_t off = 0;
  const Region* r = find(addr, src.size(), off);
  if (r == nullptr) return false;
  if (src.empty()) return true;
  std::byte* dst = r->bytes.get() + off;
  borrowers_.settle(dst, dst + src.size());
  std::memcpy(dst, src.data(), src.size());
  return true;
}

Loan SimulatedHostMemory::loan(uint64_t addr, size_t len) {
  uint64_t off = 0;
  const Region* r = find(addr, len, off);
  if (r == nullptr || len == 0 || !lending_) return {};
  return {r->bytes.get() + off, &borrowers_};
}

void SimulatedHostMemory::settle(uint64_t addr, size_t len) {
  uint64_t off = 0;
  if (const Region* r = find(addr, len, off)) borrowers_.settle(r->bytes.get() + off, r->bytes.get() + off + len);
}

bool SimulatedHostMemory::holds(uint64_t addr, size_t len) const {
  uint64_t off = 0;
  return find(addr, len, off) != nullptr;
}

bool SimulatedHostMemory::write_elided(uint64_t addr, size_t len) {
  if (!holds(addr, len)) return false;
  for (auto it = watched_.lower_bound(addr); it != watched_.end() && it->first - addr < len; ++it) ++it->second;
  return true;
}

uint64_t SimulatedHostMemory::writes_seen(uint64_t addr) const {
  const auto it = watched_.find(addr);
  return it == watched_.end() ? 0 : it->second;
}

std::span<std::byte> SimulatedHostMemory::span(uint64_t addr, size_t len) {
  uint64_t off = 0;
  const Region* r = find(addr, len, off);
  if (r == nullptr) throw std::out_of_range("address outside simulated host memory");
  borrowers_.settle(r->bytes.get() + off, r->bytes.get() + off + len);
  return {r->bytes.get() + off, len};
}

}  // namespace rnicsim::nic
