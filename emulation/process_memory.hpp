// Host memory of a real process (emulation mode): the NIC's DMA reaches the
// program's registered regions through process_vm_readv/writev, or directly
// where the shim shared a region's pages with the daemon, only inside a region
// and with the rights its registration granted; the rings through the daemon's
// own mapping of the segment. A packet's payload is copied once where it can
// be: lent (loan), read ahead and written in batches (kWindow), moved by a
// second thread (set_mover).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "nic_model/host_memory.hpp"

namespace rnicsim::emulation {

class PayloadMover;

class ProcessHostMemory : public nic::HostMemory {
public:
  // Rings live at these addresses in the NIC's view (the upper half of the x86-64
  // address space, where no user mapping can be): segment k at kSegmentBase + k << 32.
  static constexpr uint64_t kSegmentBase = 0xFFFF'0000'0000'0000ull;
  static uint64_t segment_address(uint32_t index) { return kSegmentBase + (uint64_t{index} << 32); }

  // Another process (or none): batched reads and writes of the last are dropped.
  void set_process(pid_t pid);
  pid_t process() const { return pid_; }
  // A shared segment the daemon has mapped at `local`.
  void add_segment(uint64_t address, std::byte* local, uint64_t bytes) { segments_[address] = {local, bytes}; }
  void remove_segment(uint64_t address) { segments_.erase(address); }
  // A registered region of the process: `access` holds ibv_access_flags.
  void add_region(uint64_t addr, uint64_t length, uint32_t access);
  void remove_region(uint64_t addr, uint64_t length, uint32_t access);
  // Shared pages: `bytes` bytes of the program at `addr` are at `local` in the
  // daemon. The newest run wins where runs overlap (the program may have
  // unmapped the pages of an older one and shared new pages at its address).
  void add_run(uint64_t addr, std::byte* local, uint64_t bytes) { runs_.push_back({addr, local, bytes, false}); }
  // Maps `bytes` bytes at `offset` of memfd `fd` (MAP_SHARED) and adds them as
  // a run at `addr`: the run this object unmaps when it is removed. Everything
  // page-aligned, and the memfd sealed against shrinking (a program that
  // shrank it would make the daemon's accesses fault); nullptr if not.
  std::byte* map_run(uint64_t addr, uint64_t bytes, int fd, uint64_t offset);
  // Removes the run at `local` (and unmaps it if map_run made it).
  void remove_run(std::byte* local);
  // Forgets every region, segment and run (the process is gone).
  void clear();
  ~ProcessHostMemory() override;

  bool read(uint64_t addr, std::span<std::byte> dst) const override;
  // Never from the read-ahead window, and drops it: the program may change these
  // bytes at any time (an RDMA READ's or an atomic's target).
  bool read_now(uint64_t addr, std::span<std::byte> dst) const override;
  bool write(uint64_t addr, std::span<const std::byte> src) override;
  bool write_frame(uint64_t addr, std::span<const std::byte> src, fabric::Frame&& holder) override;
  // Moved writes: with a mover, a DMA write of a received payload of
  // kMoveMinBytes or more goes to the mover's thread while it is awake, in
  // order with every other (a copy into shared pages, or a process_vm_writev
  // that gathers writes continuing each other). Whatever depends on a move
  // waits for it: a read or a loan for the moves into this memory; a write
  // made here for those and for every move that reads lent bytes; a CQE (the
  // program may look at all the work before it wrote) and a change of runs,
  // regions or process for every move. A move never writes bytes a frame
  // still borrows. nullptr: every write is made at once.
  static constexpr size_t kMoveMinBytes = 1024;
  void set_mover(PayloadMover* mover);
  // Lends bytes that lie in one run, or, read through process_vm_readv, bytes
  // of the read-ahead window (a read that continues the last one; see below),
  // so that a packet's payload goes from the sender's pages straight into the
  // receiver's. The daemon cannot see a program's stores, so lending leans on
  // the verbs' rule that posted buffers stay untouched until their work
  // completes; borrowers copy their bytes in wherever that rule stops holding
  // or the pages could go: before a CQE of send work reaches the program
  // (work_completed), when registrations or runs change, when the process goes.
  nic::Loan loan(uint64_t addr, size_t len) override;
  void settle(uint64_t addr, size_t len) override;
  // Frames that borrow for that work (by their QP and PSN) copy their bytes
  // in: a completion frees the buffers of the work before it, unsignaled work
  // included, and no other.
  void work_completed(nic::Qpn qpn, nic::Psn last_psn) override;
  // Whether loan() lends (default) or every read copies.
  void set_lending(bool on) { lending_ = on; }
  const fabric::BorrowList& borrowers() const { return borrowers_; }

  // Batching, to spend one system call on many packets. Reads: a read that
  // continues the previous one (the next packet of the same message) fills a
  // read-ahead window of up to kWindow bytes of the region with one
  // process_vm_readv, and the packets after it are lent or copied from there. A read
  // that does not continue the last one, a write into the window and
  // forget_reads() (the daemon calls it whenever a program posts send work:
  // the program may have filled the buffers it posts since) drop the window.
  // The verbs forbid a program to change a buffer it has posted until the
  // work completes, so data read ahead for it is what the NIC would have read.
  // Frames borrow their payload from the window (loan), as from shared pages:
  // the window is the daemon's own copy, which no program store and no write
  // of the NIC changes, so its borrowers never need to copy their bytes in.
  // Memory a peer reads (RDMA READ and atomic targets) carries no such promise:
  // the NIC reads it with read_now(), which never uses the window.
  // Writes: a write that continues the previous one is appended to it; the
  // run goes out with one process_vm_writev before any other access (a CQE,
  // a read), when it reaches kWindow bytes, and at flush(), which the daemon
  // calls whenever it has run the simulation. A failure of that late write
  // (the process is gone) is not reported to the NIC.
  // 256 KiB: a CQE waits for the mover's writes, and so for a fill handed over
  // before them; a smaller fill keeps that wait short and its bytes in the
  // mover's cache (ib_write_bw 1 MiB: 2.87 GB/s against 2.68 with 1 MiB
  // windows, four alternating runs each).
  static constexpr uint64_t kWindow = 256 << 10;
  static constexpr uint64_t kPageBytes = 4096;
  // Windows lent and filled again since, kept while frames or moves read
  // them; with this many, the oldest one's borrowers copy their bytes in and
  // its moves are waited for.
  static constexpr size_t kMaxRetired = 4;
  void forget_reads() const { window_bytes_ = 0; }
  void flush();

  uint64_t denied() const { return denied_; }
  uint64_t system_calls() const { return calls_; }
  // process_vm_readv/writev calls that failed (the process gone, or not ours to read).
  uint64_t failed_calls() const { return failed_calls_; }
  // Reads and writes served from shared pages, with no system call.
  uint64_t shared_accesses() const { return shared_accesses_; }

private:
  struct Segment {
    std::byte* local;
    uint64_t bytes;
  };
  std::byte* in_segment(uint64_t addr, uint64_t len) const;

  pid_t pid_ = 0;
  std::map<uint64_t, Segment> segments_;
  struct Region {
    uint64_t length;
    uint32_t access;
  };
  std::multimap<uint64_t, Region> regions_;
  // Whether no two regions overlap, and the one allowed_end found last (end(): none).
  bool disjoint_ = true;
  mutable std::multimap<uint64_t, Region>::const_iterator last_region_ = regions_.end();
  void regions_changed();
  struct Run {
    uint64_t addr;
    std::byte* local;
    uint64_t bytes;
    bool mapped;  // by map_run: unmapped when removed
  };
  std::vector<Run> runs_;  // oldest first
  // The run holding `addr`, newest first; nullptr if none.
  const Run* run_at(uint64_t addr) const;
  // Whether every byte of [addr, addr + bytes) lies in runs.
  bool in_runs(uint64_t addr, uint64_t bytes) const;
  // Counts one shared access and calls f(p, done, n) for each piece of
  // [addr, addr + bytes) (in_runs must hold): n bytes at `p` in the daemon,
  // `done` bytes into the access.
  template <class F>
  void for_runs(uint64_t addr, uint64_t bytes, F f) const;
  void unmap(const Run& r);
  mutable uint64_t denied_ = 0;
  // The region [addr, addr + length) lies in, with `write` rights if asked:
  // its end, or 0 (counted as denied).
  uint64_t region_end(uint64_t addr, uint64_t len, bool write) const;
  // The same, not counted.
  uint64_t allowed_end(uint64_t addr, uint64_t len, bool write) const;
  bool flush_writes() const;
  // read() (`ahead`: through the read-ahead window) and read_now().
  bool read_from(uint64_t addr, std::span<std::byte> dst, bool ahead) const;
  // Copies [addr, addr + dst.size()) from the read-ahead window, filling it
  // first when this read continues the last one; false if the bytes are not
  // there. `end`: the end of the region the bytes lie in.
  bool from_window(uint64_t addr, std::span<std::byte> dst, uint64_t end) const;
  // One process_vm_readv.
  bool read_process(uint64_t addr, std::span<std::byte> dst) const;
  // Where [addr, addr + len) lies in the read-ahead window, filling it first
  // when this read continues the last one; nullptr if the bytes are not there.
  const std::byte* window_at(uint64_t addr, uint64_t len, uint64_t end) const;
  // Page-aligned bytes (their contents are not kept when they grow). The
  // kernel's copy (process_vm_readv/writev) runs at a fifth of its speed on
  // some CPUs (AMD Zen's rep movsb) when the destination lies 1 to 31 bytes
  // past the source modulo a page: its loads alias its own recent stores. So
  // the daemon's buffers for those calls keep every byte at its program
  // address's offset within a page; other reads go through `bounce_`
  // (read_process).
  class PageBuffer {
  public:
    std::byte* data() const { return p_.get(); }
    void reserve(size_t bytes);

  private:
    struct Free {
      void operator()(std::byte* p) const { std::free(p); }
    };
    std::unique_ptr<std::byte, Free> p_;
    size_t size_ = 0;
  };
  // Read-ahead: window_bytes_ bytes from window_addr_ in window_; read_end_:
  // where the last read ended. A window whose bytes were lent is not filled
  // again while a frame borrows them or a move may still read them: it is
  // retired and another takes its place (fresh_window), and it becomes a
  // spare once both are over (recycle). So a packet's payload read through
  // process_vm_readv is copied once more only, by the mover into the receiver.
  // A window is filled on the mover's thread while it takes moves and is not
  // behind (`fill`; behind, the simulation thread would only wait for it, so
  // it fills the window itself), so that the simulation thread copies no
  // payload: whoever reads the bytes on this thread (a copy, a borrower
  // copying in) waits for them (await), and the mover's own writes from the
  // window come after the fill in its order.
  struct Window final : fabric::BorrowList::Arrival {
    explicit Window(const ProcessHostMemory& o) : owner(o) {}
    void await() const override;
    const ProcessHostMemory& owner;
    PageBuffer bytes;
    uint64_t skew = 0;  // the filled window's first byte is at bytes.data() + skew
    uint64_t fill = 0;  // the mover's read that fills it (0: filled here)
    fabric::BorrowList borrowers{this};  // frames that borrow its bytes
    bool lent = false;             // since it was last filled
    bool quiet = false;            // retired, no borrower left, and moves up to `last_move` may read it
    uint64_t last_move = 0;        // 0: none (made(0) holds)
  };
  // Whether [addr, addr + len) lies within the window's extent (filled or not).
  bool in_window(uint64_t addr, uint64_t len) const {
    return addr >= window_addr_ && addr - window_addr_ + len <= window_bytes_;
  }
  Window& fresh_window() const;
  // Reads `bytes` bytes at `addr` into the window (see Window); false if that failed here.
  bool fill(Window& w, uint64_t addr, uint64_t bytes) const;
  // A window nobody reads any more, ready to be filled again.
  void to_spares(std::unique_ptr<Window> w) const;
  // Retired windows that nobody reads any more become spares; with too many
  // retired, the oldest's borrowers copy their bytes in and its moves are waited for.
  void recycle() const;
  // Every window's borrowers copy their bytes in; the retired become spares.
  // Only once every move is made (let_go).
  void settle_windows() const;
  mutable std::unique_ptr<Window> window_ = std::make_unique<Window>(*this);
  mutable std::vector<std::unique_ptr<Window>> retired_, spares_;  // retired_: oldest first
  mutable uint64_t window_addr_ = 0, window_bytes_ = 0, read_end_ = 0;
  mutable PageBuffer bounce_;
  // Writes not yet made: pending_bytes_ bytes at pending_addr_, kept at that
  // address's offset within a page (see PageBuffer).
  mutable PageBuffer pending_;
  mutable uint64_t pending_addr_ = 0, pending_bytes_ = 0;
  std::byte* pending_data() const { return pending_.data() + pending_addr_ % kPageBytes; }
  mutable uint64_t calls_ = 0, failed_calls_ = 0, shared_accesses_ = 0;
  bool lending_ = true;
  // Frames that borrow bytes of the runs.
  fabric::BorrowList borrowers_;
  PayloadMover* mover_ = nullptr;
  uint64_t moved_into_ = 0;  // the number of the last move into this memory
  // Waits for the moves that write into this memory (and, with `lent`, for
  // those that read lent bytes).
  void wait_for_moves(bool lent) const;
  void drain_moves() const;
  // Every move made and every borrower's bytes copied in: the memory is about
  // to change in ways neither could follow (regions, runs, the process).
  void let_go();
  // A write of [addr, addr + len) drops the read-ahead window it overlaps.
  void drop_window_over(uint64_t addr, uint64_t len) const;
};

}  // namespace rnicsim::emulation
