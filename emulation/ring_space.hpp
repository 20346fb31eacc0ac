// Space for the queue rings in a context's shared segment: page-aligned ranges
// handed out first fit and taken back when their queue goes, so a program that
// creates and destroys queues forever never runs out.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace rnicsim::emulation {

class RingSpace {
public:
  static constexpr uint64_t kPage = 4096;
  // The space is [begin, end), both page-aligned.
  RingSpace(uint64_t begin, uint64_t end);
  // The offset of `bytes` (rounded up to pages); 0 when no free range holds them.
  uint64_t allocate(uint64_t bytes);
  // The range allocated at `offset` goes back, but only once the NIC has made
  // every DMA write it had issued by now (`writes_issued`): a CQE still on its
  // way to a destroyed CQ must not land in the next queue's ring.
  void release(uint64_t offset, uint64_t writes_issued);
  // Frees the released ranges whose writes have all been made (`writes_done`),
  // calling drop(offset, bytes) for each first (to zero its pages).
  template <class Drop>
  void reclaim(uint64_t writes_done, Drop drop);
  uint64_t free_bytes() const;

private:
  void give_back(uint64_t offset, uint64_t bytes);
  struct Held {
    uint64_t offset, bytes, writes;
  };
  std::map<uint64_t, uint64_t> free_;  // offset -> bytes, neighbours merged
  std::map<uint64_t, uint64_t> used_;  // offset -> bytes
  std::vector<Held> held_;             // released, waiting for their writes
};

template <class Drop>
void RingSpace::reclaim(uint64_t writes_done, Drop drop) {
  std::erase_if(held_, [&](const Held& h) {
    if (h.writes > writes_done) return false;
    drop(h.offset, h.bytes);
    give_back(h.offset, h.bytes);
    return true;
  });
}

}  // namespace rnicsim::emulation
