// Host memory as the NIC sees it: the NIC reaches it only through the DMA engine.
// In scenario mode it is simulated (SimulatedHostMemory); in emulation mode it is a
// real process's memory (a later implementation of the same interface).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "fabric/frame.hpp"
#include "nic_model/types.hpp"

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

// Told of an access a memory accepted and could not make later (a memory that
// makes writes in batches, or reads ahead on another thread, finds out only
// then): a write, or a read whose bytes were zeros.
class MemoryFaultListener {
public:
  virtual ~MemoryFaultListener() = default;
  virtual void access_failed(uint64_t addr, uint64_t length, bool write) = 0;
};

class HostMemory {
public:
  virtual ~HostMemory() = default;
  virtual void set_fault_listener(MemoryFaultListener* l) { fault_listener_ = l; }
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
  // The send work of QP `qpn` up to the request packet with PSN `last_psn`
  // has completed (a CQE is about to say so): its buffers are the program's
  // again, and frames that borrow them must copy their bytes in. A memory
  // that lends requests' payload does that here.
  virtual void work_completed(Qpn /*qpn*/, Psn /*last_psn*/) {}
  // A DMA write of bytes that a received frame holds: `src` is a span of
  // `holder`'s bytes as built (its payload, which may still be borrowed from
  // the sender's memory). A memory may keep the frame and copy the bytes when
  // somebody looks at them (SimulatedHostMemory::set_deferring); by default
  // they are written at once. Returns what write() returns.
  virtual bool write_frame(uint64_t addr, std::span<const std::byte> src, fabric::Frame&& holder);

protected:
  MemoryFaultListener* fault_listener_ = nullptr;
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
  bool write_frame(uint64_t addr, std::span<const std::byte> src, fabric::Frame&& holder) override;
  // Deferred writes. With deferring on, a DMA write of at least
  // kDeferMinBytes of a received frame keeps the frame instead of copying its
  // payload, until somebody looks at the bytes or changes them: every read,
  // loan, span and access first completes the deferred writes its range
  // overlaps, and a write that covers a deferred one whole makes it moot, so it
  // is dropped uncopied. A stream that overwrites one buffer message after
  // message copies nothing that nobody reads. Nothing can tell the difference:
  // the bytes anybody sees are those the writes left, in their order. A region
  // somebody holds a span() of is written at once from then on, as the holder
  // reads it directly. Off by default; at most kDeferMax writes wait at once.
  static constexpr size_t kDeferMinBytes = 512;
  static constexpr size_t kDeferMax = 1024;
  void set_deferring(bool on);
  size_t deferred_writes() const { return deferred_.size(); }
  // Deferred writes made moot by later writes, never copied.
  uint64_t writes_dropped() const { return dropped_; }
  // Direct access for the host-side code of a scenario that keeps the span (the
  // rings of a queue): frames that borrow these bytes copy them in first, as
  // the caller may write, and the region is never written late (see above).
  std::span<std::byte> span(uint64_t addr, size_t len);
  // Access for a look or a change now (workload drivers, checks): the bytes as
  // the writes so far left them, valid until the simulation runs again.
  std::span<std::byte> access(uint64_t addr, size_t len);
  size_t bytes_allocated() const { return allocated_; }

private:
  // The regions' bytes: anonymous mappings, fresh zero pages that cost memory
  // only once touched. A size-only run never touches its payload buffers, and
  // a rank of a run across processes never touches the rings of the hosts it
  // does not run. Small regions share a mapping (a host's rings take the
  // pages they touch and the process few mappings); a large one has its own.
  class Pages {
  public:
    Pages() = default;
    Pages(const Pages&) = delete;
    Pages& operator=(const Pages&) = delete;
    ~Pages();
    std::byte* take(size_t size, size_t align);

  private:
    static constexpr size_t kShared = size_t{1} << 20;  // a shared mapping's size, and the most a region there takes
    std::byte* map(size_t size, bool large);
    std::vector<std::pair<std::byte*, size_t>> maps_;
    std::byte* next_ = nullptr;  // in the current shared mapping
    size_t left_ = 0;
  };
  struct Region {
    size_t size;
    std::byte* bytes;
    bool spanned = false;  // somebody holds a span(): never written late
  };
  const Region* find(uint64_t addr, size_t len, uint64_t& offset) const;
  Region* find(uint64_t addr, size_t len, uint64_t& offset) {
    return const_cast<Region*>(std::as_const(*this).find(addr, len, offset));
  }
  // find() for host code: an address outside the memory is a bug there.
  Region& region_of(uint64_t addr, size_t len, uint64_t& offset);
  // A write waiting for somebody to look: `length` bytes of `holder` (at `src`
  // as built) go to `dst`.
  struct Deferred {
    uint32_t length = 0;
    std::byte* dst = nullptr;
    const std::byte* src = nullptr;
    fabric::Frame holder;
  };
  // Completes the deferred writes that overlap [addr, addr + len); with
  // `covered_moot`, drops uncopied those the range covers whole (it is about
  // to be written over).
  void complete_deferred(uint64_t addr, size_t len, bool covered_moot = false) const {
    if (!deferred_.empty()) [[unlikely]] complete_range(addr, len, covered_moot);
  }
  void complete_range(uint64_t addr, size_t len, bool covered_moot) const;
  Pages pages_;  // first: the regions point into it
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
  bool deferring_ = false;
  // Deferred writes by address; they never overlap. Their frames may borrow
  // from this memory too: declared before the list of borrowers, it goes after it.
  mutable std::map<uint64_t, Deferred> deferred_;
  // The entry write_frame used last (or end()): a stream's next write is
  // usually the one after it.
  mutable std::map<uint64_t, Deferred>::iterator last_deferred_ = deferred_.end();
  mutable uint64_t dropped_ = 0;
  // Frames that borrow bytes of the regions; declared after them, so that it
  // goes first and its borrowers can still copy their bytes in.
  fabric::BorrowList borrowers_;
};

}  // namespace rnicsim::nic
