// Host memory as the NIC sees it: the NIC reaches it only through the DMA engine.
// In scenario mode it is simulated (SimulatedHostMemory); in emulation mode it is a
// real process's memory (a later implementation of the same interface).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>

#include "fabric/frame.hpp"

namespace rnicsim::nic {

// Whether the `len` bytes at `addr` lie within the `size` bytes at `start`,
// without overflow: an address below `start` wraps around and fails.
constexpr bool range_within(uint64_t start, uint64_t size, uint64_t addr, uint64_t len) {
  return addr - start <= size && len <= size - (addr - start);
}

// Bytes of host memory lent to a frame instead of copied (see fabric::Frame,
// "Borrowed payload").
struct Loan {
  const std::byte* bytes = nullptr;  // nullptr: no loan; copy them
  fabric::BorrowList* lender = nullptr;
};

class HostMemory {
public:
  virtual ~HostMemory() = default;
  // Both return false, touching nothing, if any byte is outside the host's memory.
  virtual bool read(uint64_t addr, std::span<std::byte> dst) const = 0;
  virtual bool write(uint64_t addr, std::span<const std::byte> src) = 0;
  // A read of memory its owner may change at any time, without telling the NIC
  // (the target of an RDMA READ or an atomic): a memory that reads ahead must
  // take these bytes as they are now. Otherwise read().
  virtual bool read_now(uint64_t addr, std::span<std::byte> dst) const { return read(addr, dst); }
  // Whether `len` bytes at `addr` could be read and written (a size-only access:
  // the bytes themselves are not materialised). By default, whether the first and
  // the last byte can be read.
  virtual bool holds(uint64_t addr, size_t len) const {
    std::byte b{};
    return len == 0 ? read(addr, {}) : read(addr, {&b, 1}) && read(addr + len - 1, {&b, 1});
  }
  // A size-only write of `len` bytes at `addr`: holds(), and whatever the memory
  // keeps track of (see SimulatedHostMemory::watch).
  virtual bool write_elided(uint64_t addr, size_t len) { return holds(addr, len); }
  // The `len` bytes at `addr` as a loan to a frame, if this memory lends (it
  // then keeps them as they are until the frame copies them in). By default it
  // does not: they are read().
  virtual Loan loan(uint64_t /*addr*/, size_t /*len*/) { return {}; }
  // The `len` bytes at `addr` are about to be written: frames that borrow any
  // of them copy theirs in first. write() does this itself.
  virtual void settle(uint64_t /*addr*/, size_t /*len*/) {}
};

// Simulated host memory: regions allocated on demand at increasing addresses.
class SimulatedHostMemory : public HostMemory {
public:
  // Returns the address of `size` zeroed bytes aligned to `align` (a power of two).
  uint64_t allocate(size_t size, size_t align = 64);
  bool read(uint64_t addr, std::span<std::byte> dst) const override;
  bool write(uint64_t addr, std::span<const std::byte> src) override;
  bool holds(uint64_t addr, size_t len) const override;
  bool write_elided(uint64_t addr, size_t len) override;
  Loan loan(uint64_t addr, size_t len) override;
  void settle(uint64_t addr, size_t len) override;
  // Whether loan() lends (default) or makes every read copy; either way the
  // bytes a frame carries are the same.
  void set_lending(bool on) { lending_ = on; }
  const fabric::BorrowList& borrowers() const { return borrowers_; }
  // Size-only runs: counts the size-only writes that cover the byte at `addr`
  // (a host spinning on a byte that payload would change watches those writes).
  void watch(uint64_t addr) { watched_.try_emplace(addr, 0); }
  uint64_t writes_seen(uint64_t addr) const;
  // Direct access for the host-side code of a scenario (workload drivers, checks);
  // frames that borrow these bytes copy them in first, as the caller may write.
  std::span<std::byte> span(uint64_t addr, size_t len);
  size_t bytes_allocated() const { return allocated_; }

private:
  struct Free {
    void operator()(std::byte* p) const noexcept;
  };
  // From calloc: large regions come as fresh zero pages, which cost memory only
  // once touched (a size-only run never touches its payload buffers).
  struct Region {
    size_t size;
    std::unique_ptr<std::byte[], Free> bytes;
  };
  const Region* find(uint64_t addr, size_t len, uint64_t& offset) const;
  std::map<uint64_t, Region> regions_;  // never removed: found_ may point into it
  struct Found {
    uint64_t start = 0;
    const Region* region = nullptr;
  };
  mutable std::array<Found, 2> found_{};  // the regions find() found last, the latest first
  std::map<uint64_t, uint64_t> watched_;  // address -> size-only writes that covered it
  uint64_t next_ = 0x1000'0000;
  size_t allocated_ = 0;
  bool lending_ = true;
  // Frames that borrow bytes of the regions; declared after them, so that it
  // goes first and its borrowers can still copy their bytes in.
  fabric::BorrowList borrowers_;
};

}  // namespace rnicsim::nic
