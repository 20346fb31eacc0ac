// The PCIe link between the host and the NIC: two directions, each a serial
// resource at the link's data rate, with a one-way latency. Writes and read
// requests travel upstream (NIC to host), read completions and MMIO writes
// (doorbells) travel downstream. Every transfer is cut into TLPs (max payload size
// for writes and completions, max read request size for reads) that each carry a
// header overhead.
#pragma once

#include <bit>
#include <cstdint>

#include "sim/ring_queue.hpp"
#include "sim/time.hpp"

namespace rnicsim::nic {

struct PcieParams {
  uint32_t generation = 3;                        // 1..5: 2.5, 5, 8, 16, 32 GT/s per lane
  uint32_t lanes = 16;
  sim::Duration latency = sim::Duration::ns(250);  // one way, NIC <-> root complex
  sim::Duration host_memory_latency = sim::Duration::ns(80);  // read from host DRAM
  uint32_t max_payload_bytes = 256;               // MPS
  uint32_t max_read_request_bytes = 512;          // MRRS
  uint32_t tlp_overhead_bytes = 24;               // header + framing + DLLP share per TLP
  // Non-posted read requests (one per MRRS) outstanding at once; a read that
  // finds no free tag waits for one. With few tags, read bandwidth is at most
  // max_read_tags x MRRS / round trip. 256 is what an 8-bit Tag field (Extended
  // Tag Field Enable, PCIe 3.0 section 2.2.6.2) allows a function; a
  // ConnectX-5-class NIC's own limit is not published, so this is an estimate.
  // 0: unlimited.
  uint32_t max_read_tags = 256;
  // The write-combining rate of MMIO: the least time per 64-byte line of MMIO
  // writes (doorbells, BlueFlame WQEs), below the link's own rate (Kalia et al.,
  // ATC 2016: 175 M lines/s on Connect-IB, so 5.7 ns). Zero: the link's rate only.
  sim::Duration mmio_line_time = sim::Duration::zero();

  // Usable bits per second after line coding (8b/10b for gen 1-2, 128b/130b after).
  uint64_t data_rate_bps() const;
};

class PcieLink {
public:
  explicit PcieLink(PcieParams p)
      : p_(p), up_time_(p.data_rate_bps()), down_time_(p.data_rate_bps()), mmio_time_(p.data_rate_bps()) {}
  const PcieParams& params() const { return p_; }

  // A DMA write of `bytes` issued at `now`: when it is visible in host memory.
  sim::Time write(sim::Time now, uint64_t bytes);
  // A DMA read of `bytes` issued at `now`: when the last completion reaches the NIC.
  // Each of its read requests holds a tag until the read's last completion has
  // arrived; a read waits for enough free tags (one that needs more than there
  // are goes out in parts, each waiting for the previous one's tags).
  sim::Time read(sim::Time now, uint64_t bytes);
  // An MMIO write of `bytes` from the host issued at `now`: when the NIC sees it.
  sim::Time mmio_write(sim::Time now, uint64_t bytes);

  uint64_t upstream_bytes() const { return up_bytes_; }
  uint64_t downstream_bytes() const { return down_bytes_; }
  // Read tags in use at the latest issue time, and reads that had to wait for tags.
  uint32_t read_tags_in_use() const { return tags_busy_; }
  uint64_t read_tag_waits() const { return tag_waits_; }

private:
  struct TagRelease {
    sim::Time at;
    uint32_t count = 0;
  };
  static uint64_t tlps(uint64_t bytes, uint32_t unit) {
    if (bytes == 0) return 1;
    // MPS and MRRS are powers of two in every real configuration: a shift, not a division.
    // (unit & (unit - 1)) rather than std::has_single_bit, which is a library call
    // for popcount on the baseline x86-64 target.
    return (unit & (unit - 1)) == 0 ? (bytes + unit - 1) >> std::countr_zero(unit) : (bytes + unit - 1) / unit;
  }
  static sim::Time reserve(sim::Time& next_free, sim::Time start, uint64_t wire_bytes,
                           const sim::SerializationTimes& time);
  // The read's timing once its requests have tags, from `start`.
  sim::Time read_with_tags(sim::Time start, uint64_t bytes);
  // When `n` tags are free for a read issued at `now`; takes them.
  sim::Time take_tags(sim::Time now, uint32_t n);

  PcieParams p_;
  // Serialization times at the link's rate, one memo per queue (each sees few sizes).
  sim::SerializationTimes up_time_, down_time_, mmio_time_;
  sim::Time up_free_, down_free_;
  sim::Time mmio_free_;  // MMIO writes among themselves (they pass completions)
  uint64_t up_bytes_ = 0, down_bytes_ = 0;
  // Tags in use, by release time. Reads complete in issue order (the downstream
  // direction is a FIFO), so release times never decrease along the queue.
  sim::RingQueue<TagRelease> tags_in_use_;
  uint32_t tags_busy_ = 0;
  uint64_t tag_waits_ = 0;
};

}  // namespace rnicsim::nic
