#include "nic_model/host_memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <new>
#include <stdexcept>

namespace rnicsim::nic {

SimulatedHostMemory::Pages::~Pages() {
  for (auto [base, size] : maps_) munmap(base, size);
}

// Reserved, not committed: a host's payload buffers may far exceed the
// machine's memory as long as nobody touches them. Huge pages for the large
// regions (payload buffers, touched whole when payload is copied), none for
// the shared ones (a host's rings would each pin 2 MiB).
std::byte* SimulatedHostMemory::Pages::map(size_t size, bool large) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  madvise(p, size, large ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  maps_.emplace_back(static_cast<std::byte*>(p), size);
  return static_cast<std::byte*>(p);
}

std::byte* SimulatedHostMemory::Pages::take(size_t size, size_t align) {
  if (size > kShared / 4) return map(size, true);  // page-aligned, whatever `align` asks
  const size_t a = std::min<size_t>(align, 4096);
  const size_t skip = (a - reinterpret_cast<uintptr_t>(next_) % a) % a;
  if (next_ == nullptr || skip + size > left_) {
    next_ = map(kShared, false);
    left_ = kShared;
    return take(size, align);
  }
  std::byte* const p = next_ + skip;
  next_ = p + size;
  left_ -= skip + size;
  return p;
}

uint64_t SimulatedHostMemory::allocate(size_t size, size_t align) {
  if (size == 0) size = 1;
  const uint64_t addr = (next_ + align - 1) & ~static_cast<uint64_t>(align - 1);
  regions_.emplace(addr, Region{size, pages_.take(size, align)});
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

bool HostMemory::write_frame(uint64_t addr, std::span<const std::byte> src, fabric::Frame&& holder) {
  if (holder.borrowing()) {
    // The payload is still in the sender's memory: take it from there. Frames
    // that borrow the bytes about to change copy theirs in first, this one too
    // if its payload overlaps its own destination.
    settle(addr, src.size());
    src = holder.source_of(src);
  }
  return write(addr, src);
}

bool SimulatedHostMemory::read(uint64_t addr, std::span<std::byte> dst) const {
  uint64_t off = 0;
  const Region* r = find(addr, dst.size(), off);
  if (r == nullptr) return false;
  complete_deferred(addr, dst.size());
  if (!dst.empty()) std::memcpy(dst.data(), r->bytes + off, dst.size());
  return true;
}

bool SimulatedHostMemory::write(uint64_t addr, std::span<const std::byte> src) {
  uint64_t off = 0;
  const Region* r = find(addr, src.size(), off);
  if (r == nullptr) return false;
  if (src.empty()) return true;
  complete_deferred(addr, src.size(), true);
  std::byte* dst = r->bytes + off;
  borrowers_.settle(dst, dst + src.size());
  std::memcpy(dst, src.data(), src.size());
  return true;
}

Loan SimulatedHostMemory::loan(uint64_t addr, size_t len) {
  uint64_t off = 0;
  const Region* r = find(addr, len, off);
  if (r == nullptr || len == 0 || !lending_) return {};
  complete_deferred(addr, len);
  return {r->bytes + off, &borrowers_};
}

void SimulatedHostMemory::settle(uint64_t addr, size_t len) {
  uint64_t off = 0;
  if (const Region* r = find(addr, len, off)) {
    complete_deferred(addr, len);
    borrowers_.settle(r->bytes + off, r->bytes + off + len);
  }
}

bool SimulatedHostMemory::write_frame(uint64_t addr, std::span<const std::byte> src, fabric::Frame&& holder) {
  uint64_t off = 0;
  Region* r = find(addr, src.size(), off);
  if (r == nullptr) return false;
  if (src.empty()) return true;
  std::byte* const dst = r->bytes + off;
  const bool defer = deferring_ && !r->spanned && src.size() >= kDeferMinBytes;
  // Deferred writes never overlap: one of exactly these bytes is alone in the
  // range, and goes moot (a stream writing one buffer over and over).
  auto it = deferred_.end();
  if (defer && last_deferred_ != deferred_.end()) {
    if (const auto next = std::next(last_deferred_); next != deferred_.end() && next->first == addr) it = next;
  }
  if (defer && it == deferred_.end()) it = deferred_.find(addr);
  if (it != deferred_.end() && it->second.length == src.size()) {
    ++dropped_;
  } else {
    complete_deferred(addr, src.size(), true);  // moot what it covers, complete what it overlaps
    it = deferred_.end();
  }
  // Frames that borrowed these bytes before this write copy them in now (this
  // one too, if its payload overlaps its own destination).
  borrowers_.settle(dst, dst + src.size());
  if (it == deferred_.end() && (!defer || deferred_.size() >= kDeferMax)) {
    std::memcpy(dst, holder.source_of(src).data(), src.size());
    return true;
  }
  if (it == deferred_.end()) it = deferred_.try_emplace(addr).first;
  last_deferred_ = it;
  Deferred& d = it->second;
  d.length = static_cast<uint32_t>(src.size());
  d.dst = dst;
  d.src = src.data();
  d.holder = std::move(holder);
  return true;
}

void SimulatedHostMemory::complete_range(uint64_t addr, size_t len, bool covered_moot) const {
  auto it = deferred_.upper_bound(addr);
  if (it != deferred_.begin()) {
    const auto before = std::prev(it);
    if (before->first + before->second.length > addr) it = before;
  }
  while (it != deferred_.end() && (it->first < addr || it->first - addr < len)) {
    Deferred& d = it->second;
    if (covered_moot && it->first >= addr && it->first - addr + d.length <= len) {
      ++dropped_;  // written over whole before anybody looked
    } else {
      const std::span<const std::byte> from = d.holder.source_of({d.src, d.length});
      std::memcpy(d.dst, from.data(), d.length);
    }
    if (it == last_deferred_) last_deferred_ = deferred_.end();
    it = deferred_.erase(it);
  }
}

void SimulatedHostMemory::set_deferring(bool on) {
  if (!on) complete_deferred(0, UINT64_MAX);
  deferring_ = on;
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

SimulatedHostMemory::Region& SimulatedHostMemory::region_of(uint64_t addr, size_t len, uint64_t& offset) {
  Region* r = find(addr, len, offset);
  if (r == nullptr) throw std::out_of_range("address outside simulated host memory");
  return *r;
}

std::span<std::byte> SimulatedHostMemory::span(uint64_t addr, size_t len) {
  uint64_t off = 0;
  region_of(addr, len, off).spanned = true;
  return access(addr, len);
}

std::span<std::byte> SimulatedHostMemory::access(uint64_t addr, size_t len) {
  uint64_t off = 0;
  std::byte* const p = region_of(addr, len, off).bytes + off;
  complete_deferred(addr, len);
  borrowers_.settle(p, p + len);
  return {p, len};
}

}  // namespace rnicsim::nic
