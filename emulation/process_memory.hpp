// Host memory of a real process (emulation mode): the NIC's DMA reaches the
// program's registered regions through process_vm_readv/writev, only inside a
// region and only with the rights its registration granted, and the rings it
// shares with the daemon through the daemon's own mapping of the segment.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <span>

#include "nic_model/host_memory.hpp"

namespace rnicsim::emulation {

class ProcessHostMemory : public nic::HostMemory {
public:
  // Rings live at these addresses in the NIC's view (the upper half of the x86-64
  // address space, where no user mapping can be): segment k at kSegmentBase + k << 32.
  static constexpr uint64_t kSegmentBase = 0xFFFF'0000'0000'0000ull;
  static uint64_t segment_address(uint32_t index) { return kSegmentBase + (uint64_t{index} << 32); }

  void set_process(pid_t pid) { pid_ = pid; }
  pid_t process() const { return pid_; }
  // A shared segment the daemon has mapped at `local`.
  void add_segment(uint64_t address, std::byte* local, uint64_t bytes) { segments_[address] = {local, bytes}; }
  void remove_segment(uint64_t address) { segments_.erase(address); }
  // A registered region of the process: `access` holds ibv_access_flags.
  void add_region(uint64_t addr, uint64_t length, uint32_t access);
  void remove_region(uint64_t addr, uint64_t length, uint32_t access);
  // Forgets every region and segment (the process is gone).
  void clear();

  bool read(uint64_t addr, std::span<std::byte> dst) const override;
  bool write(uint64_t addr, std::span<const std::byte> src) override;

  uint64_t denied() const { return denied_; }

private:
  struct Segment {
    std::byte* local;
    uint64_t bytes;
  };
  std::byte* in_segment(uint64_t addr, uint64_t len) const;
  bool allowed(uint64_t addr, uint64_t len, bool write) const;

  pid_t pid_ = 0;
  std::map<uint64_t, Segment> segments_;
  struct Region {
    uint64_t length;
    uint32_t access;
  };
  std::multimap<uint64_t, Region> regions_;
  mutable uint64_t denied_ = 0;
};

}  // namespace rnicsim::emulation
