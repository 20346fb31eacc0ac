// The PCIe link between the host and the NIC: two directions, each a serial
// resource at the link's data rate, with a one-way latency. Writes and read
// requests travel upstream (NIC to host), read completions and MMIO writes
// (doorbells) travel downstream. Every transfer is cut into TLPs (max payload size
// for writes and completions, max read request size for reads) that each carry a
// header overhead.
#pragma once

#include <cstdint>

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

  // Usable bits per second after line coding (8b/10b for gen 1-2, 128b/130b after).
  uint64_t data_rate_bps() const;
};

class PcieLink {
public:
  explicit PcieLink(PcieParams p) : p_(p), rate_bps_(p.data_rate_bps()) {}
  const PcieParams& params() const { return p_; }

  // A DMA write of `bytes` issued at `now`: when it is visible in host memory.
  sim::Time write(sim::Time now, uint64_t bytes);
  // A DMA read of `bytes` issued at `now`: when the last completion reaches the NIC.
  sim::Time read(sim::Time now, uint64_t bytes);
  // An MMIO write of `bytes` from the host issued at `now`: when the NIC sees it.
  sim::Time mmio_write(sim::Time now, uint64_t bytes);

  uint64_t upstream_bytes() const { return up_bytes_; }
  uint64_t downstream_bytes() const { return down_bytes_; }

private:
  static uint64_t tlps(uint64_t bytes, uint32_t unit) { return bytes == 0 ? 1 : (bytes + unit - 1) / unit; }
  sim::Time reserve(sim::Time& next_free, sim::Time start, uint64_t wire_bytes);

  PcieParams p_;
  uint64_t rate_bps_;
  sim::Time up_free_, down_free_;
  uint64_t up_bytes_ = 0, down_bytes_ = 0;
};

}  // namespace rnicsim::nic
