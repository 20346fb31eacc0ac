// The host's side of the rings: what a driver (a scenario workload, the verbs
// shim) does to post work requests and reap completions. It writes WQEs and reads
// CQEs in the layout of queue_format.hpp in memory it can address directly, then
// tells the NIC through the doorbell.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

#include "nic_model/queue_format.hpp"

namespace rnicsim::nic {

// A ring of WQEs of type W (SendWqe or RecvWqe) the host produces into.
// Its slots are `stride` bytes (wqe_stride); a WQE posted carries no more
// than one holds.
template <class W>
class WqeRingWriter {
public:
  WqeRingWriter(std::span<std::byte> ring, uint32_t entries, uint32_t stride = kMinWqeStride)
      : ring_(ring), entries_(entries), stride_(stride) {}
  // Writes the WQE into the next slot and returns the new producer index (for the
  // doorbell). The caller keeps no more than `entries` outstanding.
  uint64_t post(const W& w) {
    store_wqe(ring_.data() + (producer_ % entries_) * stride_, w, stride_);
    return ++producer_;
  }
  uint64_t producer() const { return producer_; }
  uint32_t entries() const { return entries_; }
  uint32_t stride() const { return stride_; }

private:
  std::span<std::byte> ring_;
  uint32_t entries_;
  uint32_t stride_;
  uint64_t producer_ = 0;
};

// A CQ ring the host consumes from.
class CqRingReader {
public:
  CqRingReader(std::span<std::byte> ring, uint32_t entries) : ring_(ring), entries_(entries) {}
  // The next valid CQE, if the NIC has written one.
  std::optional<Cqe> poll() {
    Cqe c;
    std::memcpy(&c, ring_.data() + (consumer_ % entries_) * sizeof(Cqe), sizeof(Cqe));
    if (c.owner != cqe_owner_for(consumer_, entries_)) return std::nullopt;
    ++consumer_;
    return c;
  }
  uint64_t consumer() const { return consumer_; }

private:
  std::span<std::byte> ring_;
  uint32_t entries_;
  uint64_t consumer_ = 0;
};

}  // namespace rnicsim::nic
