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
template <class W>
class WqeRingWriter {
public:
  static_assert(sizeof(W) == 128);
  WqeRingWriter(std::span<std::byte> ring, uint32_t entries) : ring_(ring), entries_(entries) {}
  // Writes the WQE into the next slot and returns the new producer index (for the
  // doorbell). The caller keeps no more than `entries` outstanding.
  uint64_t post(const W& w) {
    std::memcpy(ring_.data() + (producer_ % entries_) * sizeof(W), &w, sizeof(W));
    return ++producer_;
  }
  uint64_t producer() const { return producer_; }
  uint32_t entries() const { return entries_; }

private:
  std::span<std::byte> ring_;
  uint32_t entries_;
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
