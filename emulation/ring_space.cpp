#include "emulation/ring_space.hpp"

#include <iterator>
#include <stdexcept>

namespace rnicsim::emulation {

RingSpace::RingSpace(uint64_t begin, uint64_t end) {
  if (begin % kPage != 0 || end % kPage != 0 || begin == 0 || end <= begin)
    throw std::invalid_argument("ring space: bad range");
  free_[begin] = end - begin;
}

uint64_t RingSpace::allocate(uint64_t bytes) {
  if (bytes == 0 || bytes > UINT64_MAX - kPage) return 0;
  bytes = (bytes + kPage - 1) / kPage * kPage;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < bytes) continue;
    const uint64_t at = it->first;
    const uint64_t rest = it->second - bytes;
    free_.erase(it);
    if (rest > 0) free_[at + bytes] = rest;
    used_[at] = bytes;
    return at;
  }
  return 0;
}

void RingSpace::release(uint64_t offset, uint64_t writes_issued) {
  auto it = used_.find(offset);
  if (it == used_.end()) return;
  held_.push_back(Held{offset, it->second, writes_issued});
  used_.erase(it);
}

void RingSpace::give_back(uint64_t offset, uint64_t bytes) {
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && offset + bytes == next->first) {
    bytes += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      prev->second += bytes;
      return;
    }
  }
  free_[offset] = bytes;
}

uint64_t RingSpace::free_bytes() const {
  uint64_t n = 0;
  for (const auto& [at, bytes] : free_) n += bytes;
  return n;
}

}  // namespace rnicsim::emulation
