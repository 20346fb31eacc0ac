// Host memory as the NIC sees it: the NIC reaches it only through the DMA engine.
// In scenario mode it is simulated (SimulatedHostMemory); in emulation mode it is a
// real process's memory (a later implementation of the same interface).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>

namespace rnicsim::nic {

class HostMemory {
public:
  virtual ~HostMemory() = default;
  // Both return false, touching nothing, if any byte is outside the host's memory.
  virtual bool read(uint64_t addr, std::span<std::byte> dst) const = 0;
  virtual bool write(uint64_t addr, std::span<const std::byte> src) = 0;
};

// Simulated host memory: regions allocated on demand at increasing addresses.
class SimulatedHostMemory : public HostMemory {
public:
  // Returns the address of `size` zeroed bytes aligned to `align` (a power of two).
  uint64_t allocate(size_t size, size_t align = 64);
  bool read(uint64_t addr, std::span<std::byte> dst) const override;
  bool write(uint64_t addr, std::span<const std::byte> src) override;
  // Direct access for the host-side code of a scenario (workload drivers, checks).
  std::span<std::byte> span(uint64_t addr, size_t len);
  size_t bytes_allocated() const { return allocated_; }

private:
  struct Region {
    size_t size;
    std::unique_ptr<std::byte[]> bytes;
  };
  const Region* find(uint64_t addr, size_t len, uint64_t& offset) const;
  std::map<uint64_t, Region> regions_;
  uint64_t next_ = 0x1000'0000;
  size_t allocated_ = 0;
};

}  // namespace rnicsim::nic
