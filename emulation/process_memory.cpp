#include "emulation/process_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

#include "emulation/payload_mover.hpp"
#include "nic_model/queue_format.hpp"
#include "packet/psn.hpp"

namespace rnicsim::emulation {
namespace {
// Rights that let the NIC write into a region: a receive or READ response needs
// local write, an RDMA WRITE remote write, an atomic remote atomic.
constexpr uint32_t kWriteRights = nic::kAccessLocalWrite | nic::kAccessRemoteWrite | nic::kAccessRemoteAtomic;
constexpr uint64_t kPage = ProcessHostMemory::kPageBytes;
bool page_aligned(uint64_t v) { return v % kPage == 0; }
// Whether the kernel copies slowly to `dst` from `src` (see PageBuffer), and
// the sizes worth a copy through the bounce buffer instead.
bool aliasing(uint64_t dst, uint64_t src) {
  const uint64_t ahead = (dst - src) % kPage;
  return ahead != 0 && ahead < 32;
}
constexpr size_t kBounceMin = 256, kBounceMax = 64 * 1024;
}  // namespace

void ProcessHostMemory::PageBuffer::reserve(size_t bytes) {
  if (bytes <= size_) return;
  const size_t rounded = (bytes + kPage - 1) / kPage * kPage;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(kPage, rounded));
  if (p == nullptr) throw std::bad_alloc();
  p_.reset(p);
  size_ = rounded;
}

ProcessHostMemory::~ProcessHostMemory() {
  let_go();
  for (const Run& r : runs_) unmap(r);
}

void ProcessHostMemory::set_mover(PayloadMover* mover) {
  drain_moves();
  mover_ = mover;
}

void ProcessHostMemory::wait_for_moves(bool lent) const {
  if (mover_ == nullptr) return;
  const uint64_t n = lent ? std::max(moved_into_, mover_->last_lent()) : moved_into_;
  if (n != 0) mover_->wait_until_made(n);
}

void ProcessHostMemory::drain_moves() const {
  if (mover_ != nullptr) mover_->drain();
}

void ProcessHostMemory::let_go() {
  drain_moves();
  borrowers_.settle_all();
  settle_windows();
}

void ProcessHostMemory::settle_windows() const {
  window_->borrowers.settle_all();
  window_->lent = false;
  for (auto& w : retired_) {
    w->borrowers.settle_all();
    to_spares(std::move(w));
  }
  retired_.clear();
}

void ProcessHostMemory::to_spares(std::unique_ptr<Window> w) const {
  w->lent = w->quiet = false;
  spares_.push_back(std::move(w));
}

ProcessHostMemory::Window& ProcessHostMemory::fresh_window() const {
  if (!window_->lent) return *window_;  // nobody looks at its bytes: fill it again
  recycle();
  retired_.push_back(std::move(window_));
  if (spares_.empty()) {
    window_ = std::make_unique<Window>(*this);
  } else {
    window_ = std::move(spares_.back());
    spares_.pop_back();
  }
  return *window_;
}

void ProcessHostMemory::recycle() const {
  if (retired_.size() >= kMaxRetired) {  // the oldest must go now
    Window& w = *retired_.front();
    w.borrowers.settle_all();
    if (mover_ != nullptr) mover_->wait_until_made(mover_->moves());
    w.quiet = true;
    w.last_move = 0;
  }
  for (auto it = retired_.begin(); it != retired_.end();) {
    Window& w = **it;
    // A borrower's move takes the frame's place in the mover's queue when its
    // write is handed over, so once no frame borrows, the last move that may
    // read the window is the last handed over by then.
    if (!w.quiet && w.borrowers.borrowers() == 0) {
      w.quiet = true;
      w.last_move = mover_ != nullptr ? mover_->moves() : 0;
    }
    if (w.quiet && (mover_ == nullptr || mover_->made(w.last_move))) {
      to_spares(std::move(*it));
      it = retired_.erase(it);
    } else {
      ++it;
    }
  }
}

void ProcessHostMemory::drop_window_over(uint64_t addr, uint64_t len) const {
  if (window_bytes_ != 0 && addr < window_addr_ + window_bytes_ && window_addr_ < addr + len) window_bytes_ = 0;
}

void ProcessHostMemory::set_process(pid_t pid) {
  let_go();
  pid_ = pid;
  pending_bytes_ = 0;
  window_bytes_ = 0;
  read_end_ = 0;
}

void ProcessHostMemory::add_region(uint64_t addr, uint64_t length, uint32_t access) {
  let_go();
  regions_.emplace(addr, Region{length, access});
  regions_changed();
}

void ProcessHostMemory::regions_changed() {
  last_region_ = regions_.end();
  disjoint_ = true;
  uint64_t reach = 0;  // the furthest end of the regions so far, in address order
  for (const auto& [base, r] : regions_) {
    if (base < reach) disjoint_ = false;
    reach = std::max(reach, base + r.length);
  }
}

void ProcessHostMemory::remove_region(uint64_t addr, uint64_t length, uint32_t access) {
  let_go();
  flush_writes();
  window_bytes_ = 0;
  auto [lo, hi] = regions_.equal_range(addr);
  for (auto it = lo; it != hi; ++it)
    if (it->second.length == length && it->second.access == access) {
      regions_.erase(it);
      regions_changed();
      return;
    }
}

std::byte* ProcessHostMemory::map_run(uint64_t addr, uint64_t bytes, int fd, uint64_t offset) {
  if (bytes == 0 || !page_aligned(addr) || !page_aligned(bytes) || !page_aligned(offset) || addr + bytes < addr ||
      offset + bytes < offset)
    return nullptr;
  struct stat st {};
  const int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0 || fstat(fd, &st) != 0 ||
      offset + bytes > static_cast<uint64_t>(st.st_size))
    return nullptr;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
  if (p == MAP_FAILED) return nullptr;
  let_go();  // the new run may hide bytes that are lent
  runs_.push_back({addr, static_cast<std::byte*>(p), bytes, true});
  return static_cast<std::byte*>(p);
}

void ProcessHostMemory::unmap(const Run& r) {
  if (r.mapped) munmap(r.local, r.bytes);
}

void ProcessHostMemory::remove_run(std::byte* local) {
  let_go();
  flush_writes();
  window_bytes_ = 0;
  auto it = std::find_if(runs_.begin(), runs_.end(), [&](const Run& r) { return r.local == local; });
  if (it == runs_.end()) return;
  unmap(*it);
  runs_.erase(it);
}

void ProcessHostMemory::clear() {
  let_go();
  regions_.clear();
  regions_changed();
  segments_.clear();
  for (const Run& r : runs_) unmap(r);
  runs_.clear();
  set_process(0);
}

const ProcessHostMemory::Run* ProcessHostMemory::run_at(uint64_t addr) const {
  for (auto it = runs_.rbegin(); it != runs_.rend(); ++it)
    if (addr >= it->addr && addr - it->addr < it->bytes) return &*it;
  return nullptr;
}

bool ProcessHostMemory::in_runs(uint64_t addr, uint64_t bytes) const {
  const uint64_t end = addr + bytes;
  while (addr < end) {
    const Run* r = run_at(addr);
    if (r == nullptr) return false;
    addr = r->addr + r->bytes;
  }
  return true;
}

template <class F>
void ProcessHostMemory::for_runs(uint64_t addr, uint64_t bytes, F f) const {
  ++shared_accesses_;
  for (uint64_t done = 0; done < bytes;) {
    const Run* r = run_at(addr + done);
    const uint64_t n = std::min(bytes - done, r->addr + r->bytes - (addr + done));
    f(r->local + (addr + done - r->addr), done, n);
    done += n;
  }
}

std::byte* ProcessHostMemory::in_segment(uint64_t addr, uint64_t len) const {
  if (addr < kSegmentBase) return nullptr;
  auto it = segments_.upper_bound(addr);
  if (it == segments_.begin()) return nullptr;
  --it;
  const uint64_t off = addr - it->first;
  if (off > it->second.bytes || len > it->second.bytes - off) return nullptr;
  return it->second.local + off;
}

uint64_t ProcessHostMemory::region_end(uint64_t addr, uint64_t len, bool write) const {
  const uint64_t end = allowed_end(addr, len, write);
  if (end == 0) ++denied_;
  return end;
}

uint64_t ProcessHostMemory::allowed_end(uint64_t addr, uint64_t len, bool write) const {
  auto holds = [&](uint64_t base, const Region& r) { return nic::range_within(base, r.length, addr, len); };
  auto allows = [&](const Region& r) { return !write || (r.access & kWriteRights) != 0; };
  // Disjoint regions: at most one holds the range, and the NIC keeps to one for a while.
  if (disjoint_ && last_region_ != regions_.end() && addr >= last_region_->first &&
      holds(last_region_->first, last_region_->second))
    return allows(last_region_->second) ? last_region_->first + last_region_->second.length : 0;
  uint64_t end = 0;
  for (auto it = regions_.begin(); it != regions_.end() && it->first <= addr; ++it) {
    if (!holds(it->first, it->second)) continue;
    if (disjoint_) last_region_ = it;
    if (allows(it->second)) end = std::max(end, it->first + it->second.length);
  }
  return end;
}

bool ProcessHostMemory::flush_writes() const {
  if (pending_bytes_ == 0) return true;
  const uint64_t bytes = pending_bytes_;
  iovec local{pending_data(), bytes};
  iovec remote{reinterpret_cast<void*>(pending_addr_), bytes};
  ++calls_;
  const bool ok = process_vm_writev(pid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(bytes);
  pending_bytes_ = 0;
  if (!ok) {
    ++failed_calls_;
    // The writes were accepted earlier: whoever made them hears of it now.
    if (fault_listener_ != nullptr) fault_listener_->access_failed(pending_addr_, bytes, true);
  }
  return ok;
}

void ProcessHostMemory::flush() {
  flush_writes();
  if (mover_ != nullptr && pid_ != 0 && fault_listener_ != nullptr)
    mover_->take_failures(pid_, [&](uint64_t addr, uint64_t bytes, bool read) {
      fault_listener_->access_failed(addr, bytes, !read);
    });
}

bool ProcessHostMemory::read(uint64_t addr, std::span<std::byte> dst) const { return read_from(addr, dst, true); }

bool ProcessHostMemory::read_now(uint64_t addr, std::span<std::byte> dst) const {
  window_bytes_ = 0;
  read_end_ = 0;  // the next read does not continue this one
  return read_from(addr, dst, false);
}

bool ProcessHostMemory::read_from(uint64_t addr, std::span<std::byte> dst, bool ahead) const {
  if (std::byte* p = in_segment(addr, dst.size())) {
    std::memcpy(dst.data(), p, dst.size());
    return true;
  }
  if (pid_ == 0 && runs_.empty()) return false;
  const uint64_t end = region_end(addr, dst.size(), false);
  if (end == 0) return false;
  if (dst.empty()) return true;
  wait_for_moves(false);  // a read sees every write before it
  flush_writes();
  if (in_runs(addr, dst.size())) {
    for_runs(addr, dst.size(), [&](std::byte* p, uint64_t done, uint64_t n) { std::memcpy(dst.data() + done, p, n); });
    return true;
  }
  if (pid_ == 0) return false;
  if (ahead && from_window(addr, dst, end)) return true;
  return read_process(addr, dst);
}

bool ProcessHostMemory::from_window(uint64_t addr, std::span<std::byte> dst, uint64_t end) const {
  const std::byte* p = window_at(addr, dst.size(), end);
  if (p == nullptr) return false;
  window_->await();
  std::memcpy(dst.data(), p, dst.size());
  return true;
}

void ProcessHostMemory::Window::await() const {
  if (fill != 0 && owner.mover_ != nullptr) owner.mover_->wait_until_made(fill);
}

bool ProcessHostMemory::fill(Window& w, uint64_t addr, uint64_t bytes) const {
  std::byte* into = w.bytes.data() + w.skew;
  if (mover_ != nullptr && mover_->accepting() && !mover_->behind()) {
    w.fill = mover_->push({into, nullptr, bytes, {}, pid_, addr, true}, false);
    return true;
  }
  w.fill = 0;
  return read_process(addr, std::span(into, bytes));
}

const std::byte* ProcessHostMemory::window_at(uint64_t addr, uint64_t len, uint64_t end) const {
  const bool continues = addr == read_end_;
  read_end_ = addr + len;
  if (!continues) {
    window_bytes_ = 0;
  } else if (!in_window(addr, len)) {
    const uint64_t bytes = std::max<uint64_t>(len, std::min(kWindow, end - addr));
    Window& w = fresh_window();
    w.await();  // a fill still on its way must not land in what comes next
    w.skew = addr % kPage;
    w.bytes.reserve(w.skew + bytes);
    window_addr_ = addr;
    window_bytes_ = fill(w, addr, bytes) ? bytes : 0;
  }
  if (window_bytes_ == 0 || !in_window(addr, len)) return nullptr;
  return window_->bytes.data() + window_->skew + (addr - window_addr_);
}

bool ProcessHostMemory::read_process(uint64_t addr, std::span<std::byte> dst) const {
  std::byte* into = dst.data();
  const bool bounce = dst.size() >= kBounceMin && dst.size() <= kBounceMax &&
                      aliasing(reinterpret_cast<uintptr_t>(into), addr);
  if (bounce) {
    bounce_.reserve(addr % kPage + dst.size());
    into = bounce_.data() + addr % kPage;
  }
  iovec local{into, dst.size()};
  iovec remote{reinterpret_cast<void*>(addr), dst.size()};
  ++calls_;
  const bool ok = process_vm_readv(pid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(dst.size());
  if (!ok) ++failed_calls_;
  if (ok && bounce) std::memcpy(dst.data(), into, dst.size());
  return ok;
}

nic::Loan ProcessHostMemory::loan(uint64_t addr, size_t len) {
  if (!lending_ || len == 0 || in_segment(addr, len) != nullptr) return {};
  const Run* r = runs_.empty() ? nullptr : run_at(addr);
  if (r == nullptr && pid_ == 0) return {};
  const uint64_t end = allowed_end(addr, len, false);
  if (end == 0 || (r != nullptr && len > r->addr + r->bytes - addr)) return {};
  wait_for_moves(false);  // a read sees every write before it
  flush_writes();
  if (r == nullptr) {  // through process_vm_readv: from the read-ahead window
    const std::byte* p = window_at(addr, len, end);
    if (p == nullptr) return {};
    window_->lent = true;
    return {p, &window_->borrowers};
  }
  ++shared_accesses_;
  return {r->local + (addr - r->addr), &borrowers_};
}

void ProcessHostMemory::work_completed(nic::Qpn qpn, nic::Psn last_psn) {
  if (borrowers_.borrowers() == 0) return;
  borrowers_.settle_if([&](const fabric::FrameMeta& m) {
    return m.flow_id == qpn.value() && nic::Psn::distance(m.psn, last_psn) >= 0;
  });
}

void ProcessHostMemory::settle(uint64_t addr, size_t len) {
  if (borrowers_.borrowers() == 0) return;
  for (const Run& r : runs_) {
    const uint64_t lo = std::max(addr, r.addr), hi = std::min(addr + len, r.addr + r.bytes);
    if (lo < hi) borrowers_.settle(r.local + (lo - r.addr), r.local + (hi - r.addr));
  }
}

bool ProcessHostMemory::write(uint64_t addr, std::span<const std::byte> src) {
  if (std::byte* p = in_segment(addr, src.size())) {
    drain_moves();  // a CQE after the data it completes, here and at the peer
    flush_writes();
    if (src.size() == sizeof(nic::Cqe)) {
      // A CQE: everything but the owner byte first, so a program that sees the
      // owner flip reads a whole entry.
      constexpr size_t kOwner = offsetof(nic::Cqe, owner);
      std::memcpy(p, src.data(), kOwner);
      std::memcpy(p + kOwner + 1, src.data() + kOwner + 1, src.size() - kOwner - 1);
      std::atomic_ref<std::byte>(p[kOwner]).store(src[kOwner], std::memory_order_release);
      return true;
    }
    std::memcpy(p, src.data(), src.size());
    return true;
  }
  if ((pid_ == 0 && runs_.empty()) || region_end(addr, src.size(), true) == 0) return false;
  if (src.empty()) return true;
  drop_window_over(addr, src.size());
  if (in_runs(addr, src.size())) {
    wait_for_moves(true);  // in the order the NIC made them
    flush_writes();
    settle(addr, src.size());
    for_runs(addr, src.size(), [&](std::byte* p, uint64_t done, uint64_t n) { std::memcpy(p, src.data() + done, n); });
    return true;
  }
  if (pid_ == 0) return false;
  wait_for_moves(false);  // after the moves into the process before it
  if (pending_bytes_ != 0 && (addr != pending_addr_ + pending_bytes_ || pending_bytes_ + src.size() > kWindow))
    flush_writes();
  if (pending_bytes_ == 0) {  // room for this write and those that may continue it
    pending_addr_ = addr;
    pending_.reserve(addr % kPage + std::max<uint64_t>(src.size(), kWindow));
  }
  std::memcpy(pending_data() + pending_bytes_, src.data(), src.size());
  pending_bytes_ += src.size();
  return true;
}

bool ProcessHostMemory::write_frame(uint64_t addr, std::span<const std::byte> src, fabric::Frame&& holder) {
  const bool shared = in_runs(addr, src.size());
  const bool movable = mover_ != nullptr && src.size() >= kMoveMinBytes && in_segment(addr, src.size()) == nullptr &&
                       (shared || pid_ != 0);
  if (!movable) return HostMemory::write_frame(addr, src, std::move(holder));
  if (region_end(addr, src.size(), true) == 0) return false;
  if (!mover_->accepting()) {
    mover_->copied_inline(src.size());
    return HostMemory::write_frame(addr, src, std::move(holder));
  }
  drop_window_over(addr, src.size());
  flush_writes();
  // Frames that borrow the bytes about to change copy theirs in first, this one
  // too if its payload overlaps its own destination; the rest of its payload
  // may stay where it is in the sender's memory.
  settle(addr, src.size());
  if (holder.borrowing()) src = holder.source_in_order(src);  // the mover reads it after any fill
  // A payload still borrowed is read where it lies in the sender's memory (see
  // the top of this file); the frame can go.
  const bool lent = holder.borrowing();
  if (lent) holder = fabric::Frame{};
  if (!shared) {  // into the process: process_vm_writev
    moved_into_ = mover_->push({nullptr, src.data(), src.size(), std::move(holder), pid_, addr}, lent);
    return true;
  }
  // One move per run the bytes lie in; the last keeps the frame.
  PayloadMover::Move move;
  for_runs(addr, src.size(), [&](std::byte* p, uint64_t done, uint64_t n) {
    if (move.dst != nullptr) mover_->push(std::move(move), lent);
    move = {p, src.data() + done, n, {}, 0, 0};
  });
  move.holder = std::move(holder);
  moved_into_ = mover_->push(std::move(move), lent);
  return true;
}

}  // namespace rnicsim::emulation
