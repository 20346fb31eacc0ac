// The memory of one emulated host as its NIC sees it: the address spaces of
// the processes on the host, one ProcessHostMemory each (a forked child runs on
// its parent's host, as on a real machine). A NIC's MTT maps each process's
// pages to pages of its own; here a process's registered bytes are at its
// slot's tag above its virtual address (nic_address), so regions of two
// processes at one virtual address never meet. Rings and the CM agent's
// buffers are in segments (ProcessHostMemory::kSegmentBase), each held by the
// space it was added to; the daemon's own segments by a space of no process.
#pragma once

#include <sys/types.h>

#include <memory>
#include <unordered_map>
#include <vector>

#include "emulation/process_memory.hpp"

namespace rnicsim::emulation {

class ProcessSpaces : public nic::HostMemory {
public:
  static constexpr int kSlotShift = 48;
  // Registrations must end below this (x86-64 and AArch64 user space does).
  static constexpr uint64_t kAddressLimit = uint64_t{1} << kSlotShift;
  // Tags stay below the segments' (kSegmentBase's top bits are all ones).
  static constexpr size_t kMaxSlots = 255;
  // Segments added with this slot are the daemon's own.
  static constexpr size_t kDaemon = SIZE_MAX;
  static uint64_t nic_address(size_t slot, uint64_t va) { return (uint64_t{slot} << kSlotShift) | va; }

  ProcessSpaces();
  // Process `pid` opens a session on the host: its slot (the one it has, or a
  // free one), or kDaemon if every slot is taken.
  size_t attach(pid_t pid);
  // A session of the process in `slot` ends; true if it was its last (the
  // slot's regions, segments and runs are forgotten and the slot is free).
  bool detach(size_t slot);
  // Whether `pid` has a slot here.
  bool has(pid_t pid) const;
  bool empty() const;
  ProcessHostMemory& space(size_t slot) { return slot == kDaemon ? daemon_ : *spaces_.at(slot).memory; }

  void add_segment(size_t slot, uint64_t addr, std::byte* local, uint64_t bytes);
  void remove_segment(uint64_t addr);

  bool read(uint64_t addr, std::span<std::byte> dst) const override;
  bool read_now(uint64_t addr, std::span<std::byte> dst) const override;
  bool write(uint64_t addr, std::span<const std::byte> src) override;
  bool write_frame(uint64_t addr, std::span<const std::byte> src, fabric::Frame&& holder) override;
  nic::Loan loan(uint64_t addr, size_t len) override;
  void settle(uint64_t addr, size_t len) override;
  void work_completed(nic::Qpn qpn, nic::Psn last_psn) override;
  void set_fault_listener(nic::MemoryFaultListener* l) override;

  void set_mover(PayloadMover* mover);
  void flush();
  uint64_t system_calls() const { return sum(&ProcessHostMemory::system_calls); }
  uint64_t failed_calls() const { return sum(&ProcessHostMemory::failed_calls); }
  uint64_t shared_accesses() const { return sum(&ProcessHostMemory::shared_accesses); }

private:
  // A process's memory reports an access it could not make at the process's own
  // address; the NIC knows it at the slot's tag above it.
  class SlotFaults : public nic::MemoryFaultListener {
  public:
    SlotFaults(const ProcessSpaces& spaces, size_t slot) : spaces_(spaces), slot_(slot) {}
    void access_failed(uint64_t addr, uint64_t length, bool write) override;

  private:
    const ProcessSpaces& spaces_;
    size_t slot_;
  };
  struct Slot {
    std::unique_ptr<ProcessHostMemory> memory;
    std::unique_ptr<SlotFaults> faults;
    pid_t pid = 0;  // 0: free
    int sessions = 0;
  };
  // The space `addr` lies in, and the address within it; nullptr if none.
  ProcessHostMemory* route(uint64_t& addr) const;
  template <class F>
  void for_each(F f);
  uint64_t sum(uint64_t (ProcessHostMemory::*counter)() const) const;

  mutable ProcessHostMemory daemon_;
  std::vector<Slot> spaces_;
  std::unordered_map<uint64_t, size_t> segment_slots_;  // segment address -> slot
  PayloadMover* mover_ = nullptr;
};

}  // namespace rnicsim::emulation
