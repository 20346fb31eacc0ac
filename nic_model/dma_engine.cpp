#include "nic_model/dma_engine.hpp"

#include <cstring>
#include <stdexcept>

namespace rnicsim::nic {
namespace {
// The source of a size-only write.
constexpr std::byte kElidedByte{};
const std::byte* const kElided = &kElidedByte;
constexpr std::byte kEventEntryByte{};
const std::byte* const kEventEntry = &kEventEntryByte;
constexpr size_t kEventEntryBytes = 64;
}  // namespace

DmaEngine::DmaEngine(sim::Simulator& sim, PcieLink& pcie, HostMemory& memory, sim::Actor actor)
    : sim_(sim),
      pcie_(pcie),
      memory_(memory),
      read_event_([this] { on_read_done(); }, "dma.read_done", actor),
      write_event_([this] { on_write_done(); }, "dma.write_done", actor) {
  memory_.set_fault_listener(this);
}

DmaEngine::~DmaEngine() { memory_.set_fault_listener(nullptr); }

void DmaEngine::access_failed(uint64_t addr, uint64_t length, bool write) {
  // The newest write for a QP that the failed range covers (reads ahead are
  // not kept: they name no QP).
  std::optional<Qpn> qpn;
  for (size_t i = 1; write && i <= kMadeKept && !qpn; ++i) {
    const Made& m = made_[(made_next_ + kMadeKept - i) % kMadeKept];
    if (m.qpn && m.addr < addr + length && addr < m.addr + m.length) qpn = m.qpn;
  }
  if (fault_listener_ != nullptr) fault_listener_->dma_fault(qpn, addr, length, write);
}

void DmaEngine::read(uint64_t addr, std::span<std::byte> dst, DmaClient* client, uint64_t tag, ReadMode mode,
                     std::optional<Qpn> qpn, ReadSource source) {
  static std::byte nothing;  // a zero-length read still needs a non-null target (null marks size-only)
  // Nothing to lend without bytes or without a client to take them.
  if (mode == ReadMode::Lend && (dst.empty() || client == nullptr)) mode = ReadMode::Copy;
  issue_read(addr, dst.empty() ? &nothing : dst.data(), dst.size(), client, tag, mode, qpn, source);
}

void DmaEngine::read_elided(uint64_t addr, size_t length, DmaClient* client, uint64_t tag, ReadSource source) {
  issue_read(addr, nullptr, length, client, tag, ReadMode::Copy, std::nullopt, source);
}

void DmaEngine::issue_read(uint64_t addr, std::byte* dst, size_t length, DmaClient* client, uint64_t tag,
                           ReadMode mode, std::optional<Qpn> qpn, ReadSource source) {
  // Completions come in issue order: a buffered read is done with the read before it.
  const sim::Time done = source == ReadSource::Pcie ? pcie_.read(sim_.now(), length)
                         : read_q_.empty()          ? sim_.now()
                                                    : std::max(sim_.now(), read_q_.back().done);
  Read& r = read_q_.emplace_back();
  r.done = done;
  r.addr = addr;
  r.dst = dst;
  r.length = length;
  r.mode = mode;
  r.client = client;
  r.tag = tag;
  r.qpn = qpn;
  ++reads_;
  if (!read_event_.scheduled()) sim_.scheduler().schedule(read_event_, read_q_.front().done);
}

void DmaEngine::issue_write(sim::Time done, uint64_t addr, const std::byte* src, size_t length,
                            fabric::Frame&& holder, DmaClient* client, uint64_t tag, std::optional<Qpn> qpn) {
  Write& w = write_q_.emplace_back();
  w.done = done;
  w.addr = addr;
  w.src = src;
  w.length = length;
  w.client = client;
  w.tag = tag;
  w.qpn = qpn;
  if (holder) w.holder = std::move(holder);
  ++writes_;
  if (!write_event_.scheduled()) sim_.scheduler().schedule(write_event_, write_q_.front().done);
}

uint64_t DmaEngine::writing(Qpn qpn) const {
  uint64_t bytes = 0;
  for (size_t i = 0; i < write_q_.size(); ++i)
    if (write_q_[i].qpn == qpn) bytes += write_q_[i].length;
  return bytes;
}

void DmaEngine::write(uint64_t addr, std::span<const std::byte> src, fabric::Frame&& holder, DmaClient* client,
                      uint64_t tag, std::optional<Qpn> qpn) {
  // A zero-length write still needs a non-null source (null marks a small write).
  static constexpr std::byte kNothing{};
  issue_write(pcie_.write(sim_.now(), src.size()), addr, src.empty() ? &kNothing : src.data(), src.size(),
              std::move(holder), client, tag, qpn);
}

void DmaEngine::write_small(uint64_t addr, std::span<const std::byte> src, DmaClient* client, uint64_t tag,
                            std::optional<Qpn> qpn) {
  if (src.size() > 64) throw std::length_error("write_small takes at most 64 bytes");
  std::memcpy(small_.emplace_back().data(), src.data(), src.size());
  issue_write(pcie_.write(sim_.now(), src.size()), addr, nullptr, src.size(), fabric::Frame(), client, tag, qpn);
}

void DmaEngine::scatter(std::span<const DmaPiece> pieces, std::span<const std::byte> src, fabric::Frame&& holder,
                        std::optional<Qpn> qpn) {
  const bool held = static_cast<bool>(holder);
  if (held && holder.elided() > 0) {  // the payload bytes were never there
    scatter_elided(pieces, qpn);
    return;
  }
  // Only the last piece's write holds the frame and can find a borrowed
  // payload; with more pieces, the frame copies it in now.
  if (held && pieces.size() > 1) holder.copy_in_payload();
  for (size_t i = 0; i < pieces.size(); ++i) {
    const auto part = src.subspan(pieces[i].offset, pieces[i].length);
    if (!held)
      write_small(pieces[i].host_addr, part, nullptr, 0, qpn);
    else
      write(pieces[i].host_addr, part, i + 1 == pieces.size() ? std::move(holder) : fabric::Frame(), nullptr, 0, qpn);
  }
}

void DmaEngine::write_event_entry(DmaClient* client, uint64_t tag) {
  issue_write(pcie_.write(sim_.now(), kEventEntryBytes), 0, kEventEntry, kEventEntryBytes, fabric::Frame(), client, tag);
}

void DmaEngine::scatter_elided(std::span<const DmaPiece> pieces, std::optional<Qpn> qpn) {
  for (const DmaPiece& p : pieces)
    issue_write(pcie_.write(sim_.now(), p.length), p.host_addr, kElided, p.length, fabric::Frame(), nullptr, 0, qpn);
}

void DmaEngine::on_read_done() {
  const Read r = read_q_.front();
  read_q_.pop();
  if (!read_q_.empty()) sim_.scheduler().schedule(read_event_, read_q_.front().done);
  const std::span<std::byte> dst(r.dst, r.dst == nullptr ? 0 : r.length);
  const bool ok = r.dst == nullptr              ? memory_.holds(r.addr, r.length)
                  : r.mode == ReadMode::Now  ? memory_.read_now(r.addr, dst)
                  : r.mode == ReadMode::Lend ? lend(r) || memory_.read(r.addr, dst)
                                             : memory_.read(r.addr, dst);
  if (!ok && fault_listener_ != nullptr) fault_listener_->dma_fault(r.qpn, r.addr, r.length, false);
  if (r.client != nullptr) r.client->dma_done(r.tag, ok);
}

bool DmaEngine::lend(const Read& r) {
  const Loan loan = memory_.loan(r.addr, r.length);
  return loan.bytes != nullptr && r.client->take_loan(r.tag, r.dst, r.length, loan);
}

void DmaEngine::on_write_done() {
  Write& w = write_q_.front();
  const bool small = w.src == nullptr;
  // A received frame's payload goes with its frame: the memory may take it
  // from where it lies (still in the sender's memory) now or later.
  const bool ok = w.holder           ? memory_.write_frame(w.addr, {w.src, w.length}, std::move(w.holder))
                  : w.src == kEventEntry ? true
                  : w.src == kElided  ? memory_.write_elided(w.addr, w.length)
                                      : memory_.write(w.addr, std::span<const std::byte>(small ? small_.front().data() : w.src, w.length));
  if (small) small_.pop();
  if (w.qpn) {
    made_[made_next_] = Made{w.addr, w.length, w.qpn};
    made_next_ = (made_next_ + 1) % kMadeKept;
    if (!ok && fault_listener_ != nullptr) fault_listener_->dma_fault(w.qpn, w.addr, w.length, true);
  }
  DmaClient* const client = w.client;
  const uint64_t tag = w.tag;
  write_q_.pop();  // releases the frame that held the data
  if (!write_q_.empty()) sim_.scheduler().schedule(write_event_, write_q_.front().done);
  if (client != nullptr) client->dma_done(tag, ok);
}

}  // namespace rnicsim::nic
