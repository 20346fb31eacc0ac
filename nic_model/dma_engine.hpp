// The DMA engine: the NIC's only way into host memory. Timing comes from the PCIe
// link; the memory operation itself happens when the transfer completes (a read
// samples host memory then; a write becomes visible then). Completions of each
// direction arrive in issue order, as PCIe orders them, so each direction is a FIFO
// with one event and requests allocate nothing.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "fabric/frame.hpp"
#include "nic_model/host_memory.hpp"
#include "nic_model/pcie_link.hpp"
#include "nic_model/types.hpp"
#include "sim/ring_queue.hpp"
#include "sim/simulator.hpp"

namespace rnicsim::nic {

// A piece of a message in host memory: `length` bytes at `host_addr` that are
// bytes [offset, offset+length) of the part of the message being moved.
// Made whole (braces, every field) wherever it is made: SgeMap leaves its
// unused pieces uninitialised.
struct DmaPiece {
  uint64_t host_addr;
  uint32_t offset;
  uint32_t length;
};

// How a DMA read takes host memory's bytes.
enum class ReadMode : uint8_t {
  // As the memory gives them (which may be from bytes it read ahead).
  Copy,
  // A remote party's bytes, read as they are when the read completes
  // (HostMemory::read_now), not from anything read ahead.
  Now,
  // Payload of a frame: the client may take the bytes as a loan
  // (DmaClient::take_loan) if the memory lends them, else as Copy.
  Lend,
};

// Where a read's bytes come from: across PCIe, or from the NIC's own buffer,
// where an earlier read brought them (a chunk of a message read ahead): no
// PCIe time, done in issue order after the reads before it.
enum class ReadSource : uint8_t { Pcie, Buffered };

class DmaClient {
public:
  virtual ~DmaClient() = default;
  // `ok` is false if the host memory access failed (address not backed).
  virtual void dma_done(uint64_t tag, bool ok) = 0;
  // A ReadMode::Lend read whose memory lends: the client may take
  // the bytes as a loan for the frame `dst` is in, instead of a copy into `dst`.
  // Returns whether it took them; dma_done follows either way.
  virtual bool take_loan(uint64_t /*tag*/, std::byte* /*dst*/, size_t /*length*/, const Loan& /*loan*/) { return false; }
};

// Told of a host memory access that failed: the QP whose write it was (none
// known, or a read: its client hears of it through dma_done), where, how
// long, and which way.
class DmaFaultListener {
public:
  virtual ~DmaFaultListener() = default;
  virtual void dma_fault(std::optional<Qpn> qpn, uint64_t addr, uint64_t length, bool write) = 0;
};

class DmaEngine : MemoryFaultListener {
public:
  DmaEngine(sim::Simulator& sim, PcieLink& pcie, HostMemory& memory, sim::Actor actor = {});
  ~DmaEngine() override;
  DmaEngine(const DmaEngine&) = delete;
  DmaEngine& operator=(const DmaEngine&) = delete;
  void set_fault_listener(DmaFaultListener* l) { fault_listener_ = l; }

  // Reads host memory into `dst`, which must stay valid until dma_done.
  // `qpn`: the QP whose data it reads, if any (named when the read fails).
  void read(uint64_t addr, std::span<std::byte> dst, DmaClient* client, uint64_t tag,
            ReadMode mode = ReadMode::Copy, std::optional<Qpn> qpn = std::nullopt,
            ReadSource source = ReadSource::Pcie);
  // Writes `src` to host memory; `src` lives in `holder` (a received frame), which
  // the engine keeps until the write is done.
  void write(uint64_t addr, std::span<const std::byte> src, fabric::Frame&& holder, DmaClient* client, uint64_t tag,
             std::optional<Qpn> qpn = std::nullopt);
  // Writes up to 64 bytes copied at issue (CQEs, small responses); `qpn`: the
  // QP whose data it is, if any (told of a fault).
  void write_small(uint64_t addr, std::span<const std::byte> src, DmaClient* client, uint64_t tag,
                   std::optional<Qpn> qpn = std::nullopt);
  // Writes `src` to host memory in pieces (each piece's offset is into `src`), with
  // no completion callback. If `holder` owns src's bytes, the last write keeps it
  // until all have read them; without a holder, each piece (at most 64 bytes) is
  // copied at issue. A size-only holder (fabric::Frame::elided) has no payload
  // bytes: the pieces are written size-only (timing and address checks, no bytes).
  // `qpn`: the QP whose data it is (a write that fails is its fault).
  void scatter(std::span<const DmaPiece> pieces, std::span<const std::byte> src, fabric::Frame&& holder,
               std::optional<Qpn> qpn);
  // An event queue entry (64 bytes): it lands after every write issued before it
  // (PCIe keeps posted writes in order), so whoever is told of the event finds
  // those writes done. The event queue itself is not kept in host memory.
  void write_event_entry(DmaClient* client, uint64_t tag);

  // A size-only read (payload bytes not materialised, see fabric::Frame): the
  // same PCIe timing and the same address checks, no bytes moved.
  void read_elided(uint64_t addr, size_t length, DmaClient* client, uint64_t tag,
                   ReadSource source = ReadSource::Pcie);

  PcieLink& pcie() { return pcie_; }
  HostMemory& memory() { return memory_; }
  uint64_t reads() const { return reads_; }
  uint64_t writes() const { return writes_; }
  // Writes made so far (they complete in the order they were issued).
  uint64_t writes_done() const { return writes_ - write_q_.size(); }
  // Bytes of a QP's writes issued and not yet in host memory. Read from the
  // writes in flight when asked (a sampler asks, rarely), so that issuing and
  // completing a write keep no count.
  uint64_t writing(Qpn qpn) const;
  // f(qpn, writing(qpn)) once for each QP with writes in flight.
  template <class F>
  void for_each_writing(F f) const;

private:
  struct Read {
    sim::Time done;
    uint64_t addr = 0;
    std::byte* dst = nullptr;  // nullptr: a size-only read
    size_t length = 0;
    ReadMode mode = ReadMode::Copy;
    DmaClient* client = nullptr;
    uint64_t tag = 0;
    std::optional<Qpn> qpn;
  };
  struct Write {
    sim::Time done;
    uint64_t addr = 0;
    const std::byte* src = nullptr;  // nullptr: the data is the front of small_; kElided: size-only; kEventEntry
    size_t length = 0;
    DmaClient* client = nullptr;
    uint64_t tag = 0;
    std::optional<Qpn> qpn;
    fabric::Frame holder;
  };
  // The last writes made for QPs, to tell whose a write that failed later was.
  struct Made {
    uint64_t addr = 0, length = 0;
    std::optional<Qpn> qpn;
  };
  static constexpr size_t kMadeKept = 256;  // more than a payload mover has in flight
  void access_failed(uint64_t addr, uint64_t length, bool write) override;
  using Small = std::array<std::byte, 64>;
  void on_read_done();
  void on_write_done();
  // Offers a ReadMode::Lend read's bytes to its client as a loan; true if taken.
  bool lend(const Read& r);
  // Size-only writes of the pieces, as read_elided reads.
  void scatter_elided(std::span<const DmaPiece> pieces, std::optional<Qpn> qpn);
  void issue_read(uint64_t addr, std::byte* dst, size_t length, DmaClient* client, uint64_t tag, ReadMode mode,
                  std::optional<Qpn> qpn, ReadSource source);
  void issue_write(sim::Time done, uint64_t addr, const std::byte* src, size_t length, fabric::Frame&& holder,
                   DmaClient* client, uint64_t tag, std::optional<Qpn> qpn = std::nullopt);

  sim::Simulator& sim_;
  PcieLink& pcie_;
  HostMemory& memory_;
  sim::RingQueue<Read> read_q_;
  sim::RingQueue<Write> write_q_;
  sim::RingQueue<Small> small_;  // data of the small writes in write_q_, in order
  sim::Event read_event_, write_event_;
  uint64_t reads_ = 0, writes_ = 0;
  DmaFaultListener* fault_listener_ = nullptr;
  std::array<Made, kMadeKept> made_{};
  size_t made_next_ = 0;
};

template <class F>
void DmaEngine::for_each_writing(F f) const {
  // Writes in flight are few (a PCIe round trip's worth), and so are their QPs.
  std::vector<std::pair<Qpn, uint64_t>> by_qp;
  for (size_t i = 0; i < write_q_.size(); ++i) {
    const Write& w = write_q_[i];
    if (!w.qpn) continue;
    auto it = std::find_if(by_qp.begin(), by_qp.end(), [&](const auto& x) { return x.first == *w.qpn; });
    if (it == by_qp.end()) by_qp.emplace_back(*w.qpn, w.length);
    else it->second += w.length;
  }
  for (const auto& [qpn, bytes] : by_qp) f(qpn, bytes);
}

}  // namespace rnicsim::nic
