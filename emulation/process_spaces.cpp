#include "emulation/process_spaces.hpp"

namespace rnicsim::emulation {
namespace {
constexpr uint64_t kSegmentMask = ~((uint64_t{1} << 32) - 1);
constexpr uint64_t kVaMask = ProcessSpaces::kAddressLimit - 1;
}  // namespace

ProcessSpaces::ProcessSpaces() { daemon_.set_process(0); }

size_t ProcessSpaces::attach(pid_t pid) {
  size_t free = kDaemon;
  for (size_t i = 0; i < spaces_.size(); ++i) {
    if (spaces_[i].pid == pid) {
      ++spaces_[i].sessions;
      return i;
    }
    if (spaces_[i].pid == 0 && free == kDaemon) free = i;
  }
  if (free == kDaemon) {
    if (spaces_.size() >= kMaxSlots) return kDaemon;
    free = spaces_.size();
    spaces_.push_back({std::make_unique<ProcessHostMemory>(), std::make_unique<SlotFaults>(*this, free)});
    spaces_.back().memory->set_mover(mover_);
    spaces_.back().memory->set_fault_listener(spaces_.back().faults.get());
  }
  Slot& s = spaces_[free];
  s.pid = pid;
  s.sessions = 1;
  s.memory->set_process(pid);
  return free;
}

bool ProcessSpaces::detach(size_t slot) {
  Slot& s = spaces_.at(slot);
  if (--s.sessions > 0) return false;
  s.memory->clear();
  s.pid = 0;
  std::erase_if(segment_slots_, [slot](const auto& e) { return e.second == slot; });
  return true;
}

bool ProcessSpaces::has(pid_t pid) const {
  for (const Slot& s : spaces_)
    if (s.pid == pid) return true;
  return false;
}

bool ProcessSpaces::empty() const {
  for (const Slot& s : spaces_)
    if (s.pid != 0) return false;
  return true;
}

void ProcessSpaces::add_segment(size_t slot, uint64_t addr, std::byte* local, uint64_t bytes) {
  space(slot).add_segment(addr, local, bytes);
  segment_slots_[addr & kSegmentMask] = slot;
}

void ProcessSpaces::remove_segment(uint64_t addr) {
  auto it = segment_slots_.find(addr & kSegmentMask);
  if (it == segment_slots_.end()) return;
  space(it->second).remove_segment(addr);
  segment_slots_.erase(it);
}

ProcessHostMemory* ProcessSpaces::route(uint64_t& addr) const {
  if (addr >= ProcessHostMemory::kSegmentBase) {
    auto it = segment_slots_.find(addr & kSegmentMask);
    if (it == segment_slots_.end()) return nullptr;
    return it->second == kDaemon ? &daemon_ : spaces_[it->second].memory.get();
  }
  const uint64_t slot = addr >> kSlotShift;
  if (slot >= spaces_.size() || spaces_[slot].pid == 0) return nullptr;
  addr &= kVaMask;
  return spaces_[slot].memory.get();
}

bool ProcessSpaces::read(uint64_t addr, std::span<std::byte> dst) const {
  ProcessHostMemory* m = route(addr);
  return m != nullptr && m->read(addr, dst);
}

bool ProcessSpaces::read_now(uint64_t addr, std::span<std::byte> dst) const {
  ProcessHostMemory* m = route(addr);
  return m != nullptr && m->read_now(addr, dst);
}

bool ProcessSpaces::write(uint64_t addr, std::span<const std::byte> src) {
  ProcessHostMemory* m = route(addr);
  return m != nullptr && m->write(addr, src);
}

bool ProcessSpaces::write_frame(uint64_t addr, std::span<const std::byte> src, fabric::Frame&& holder) {
  ProcessHostMemory* m = route(addr);
  return m != nullptr && m->write_frame(addr, src, std::move(holder));
}

nic::Loan ProcessSpaces::loan(uint64_t addr, size_t len) {
  ProcessHostMemory* m = route(addr);
  return m != nullptr ? m->loan(addr, len) : nic::Loan{};
}

void ProcessSpaces::settle(uint64_t addr, size_t len) {
  if (ProcessHostMemory* m = route(addr)) m->settle(addr, len);
}

template <class F>
void ProcessSpaces::for_each(F f) {
  f(daemon_);
  for (Slot& s : spaces_) f(*s.memory);
}

// Only the space that lent a frame of the work has borrowers of it; the others
// find none.
void ProcessSpaces::work_completed(nic::Qpn qpn, nic::Psn last_psn) {
  for_each([&](ProcessHostMemory& m) { m.work_completed(qpn, last_psn); });
}

void ProcessSpaces::set_fault_listener(nic::MemoryFaultListener* l) {
  fault_listener_ = l;
  daemon_.set_fault_listener(l);  // the slots' listeners ask for it as they hear
}

void ProcessSpaces::SlotFaults::access_failed(uint64_t addr, uint64_t length, bool write) {
  if (spaces_.fault_listener_ == nullptr) return;
  spaces_.fault_listener_->access_failed(addr < kAddressLimit ? nic_address(slot_, addr) : addr, length, write);
}

void ProcessSpaces::set_mover(PayloadMover* mover) {
  mover_ = mover;
  for_each([&](ProcessHostMemory& m) { m.set_mover(mover); });
}

void ProcessSpaces::flush() {
  for_each([](ProcessHostMemory& m) { m.flush(); });
}

uint64_t ProcessSpaces::sum(uint64_t (ProcessHostMemory::*counter)() const) const {
  uint64_t n = (daemon_.*counter)();
  for (const Slot& s : spaces_) n += (*s.memory.*counter)();
  return n;
}

}  // namespace rnicsim::emulation
