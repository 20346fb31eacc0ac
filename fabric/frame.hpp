// A frame on the fabric: owned bytes (an Ethernet frame for RoCEv2, an IB packet for
// native IB, without FCS) plus metadata. Buffers come from a FramePool and return to
// it when the Frame dies, so steady-state traffic allocates nothing. A run need not
// compute or copy what nobody observes: size-only frames, deferred CRCs and borrowed
// payloads, each described at its part of Frame below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "packet/psn.hpp"
#include "sim/time.hpp"

namespace rnicsim::fabric {

class FramePool;
class BorrowList;

// The markings of a frame's headers a switch's priority map reads
// (fabric/classify.hpp priority_of).
struct Markings {
  uint8_t dscp = 0, pcp = 0, sl = 0;
  bool tagged = false;  // an 802.1Q tag carries `pcp`
};

struct FrameMeta {
  uint8_t priority = 0;      // egress priority (802.1p / VL) 0..7
  uint32_t flow_id = 0;      // for statistics
  sim::Time created;         // when the sender built it
  uint16_t ingress_port = 0;  // inside a switch: the port it came in on
  uint8_t ingress_vl = 0;     // and the priority (IB: VL) it came in on, for credits
  bool corrupted = false;     // a size-only frame a fault changed (its ICRC would fail)
  packet::Psn psn{};          // a request the NIC built: its PSN (flow_id is its QP)
  bool request = false;       // and that it is one (withdraw looks for them)
  // What the first switch read of the headers (fabric/classify.hpp), so that
  // the switches after it read none; forgotten when the bytes change (bytes()).
  struct Route {
    const void* numbering = nullptr;  // the Destinations `destination` is a number of; null: nothing kept
    uint32_t destination = 0;
    uint64_t flow_hash = 0;
    uint16_t ip_offset = 0;
    Markings markings;
  } route;
};

class Frame {
public:
  // Completes a deferred seal: computes the CRC fields of `bytes` in place.
  using Sealer = void (*)(std::span<std::byte> bytes) noexcept;

  Frame() = default;
  Frame(Frame&& o) noexcept : n_(o.n_) { o.n_ = nullptr; }
  Frame& operator=(Frame&& o) noexcept {
    if (this != &o) {
      release();
      n_ = o.n_;
      o.n_ = nullptr;
    }
    return *this;
  }
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  ~Frame() { release(); }

  explicit operator bool() const { return n_ != nullptr; }
  // The frame's bytes, CRCs included (a deferred seal is completed first); for a
  // size-only frame, the headers only.
  std::span<std::byte> bytes() {
    complete_seal();
    if (n_ != nullptr) n_->meta.route.numbering = nullptr;  // the headers may change
    return n_ == nullptr ? std::span<std::byte>() : std::span<std::byte>(n_->data(), n_->length);
  }
  std::span<const std::byte> bytes() const {
    complete_seal();
    return bytes_as_built();
  }
  // The length on the wire (size-only frames included).
  size_t size() const { return n_ == nullptr ? 0 : size_t{n_->length} + n_->elided; }
  size_t capacity() const { return n_ == nullptr ? 0 : n_->capacity; }
  // Sets the frame length (<= capacity); the frame is no longer size-only.
  void resize(size_t n);

  // --- size-only frames ---
  // In a run that does not materialise payload bytes, a frame holds its headers
  // only: the bytes from the payload on (payload, pad, ICRC, VCRC, Ethernet
  // padding) are "elided". size() is still the length on the wire, which is what
  // serialisation, buffers and credits count; bytes() is the part that exists. A
  // fault that would change elided bytes marks the frame corrupted
  // (meta().corrupted) instead, and the receiver drops it as an ICRC failure.
  // Keeps the first `kept` bytes, the rest is elided: size() stays.
  void elide_from(size_t kept);
  // Bytes of the frame on the wire that are not materialised.
  size_t elided() const { return n_ == nullptr ? 0 : n_->elided; }
  // The writable area of the whole buffer, for builders that learn the length later.
  std::span<std::byte> buffer() {
    complete_seal();
    return n_ == nullptr ? std::span<std::byte>() : std::span<std::byte>(n_->data(), n_->capacity);
  }
  // A frame's metadata; only a frame that holds a buffer has them.
  FrameMeta& meta() { return n_->meta; }
  const FrameMeta& meta() const { return n_->meta; }

  // --- deferred CRCs ---
  // A builder that knows its frame is correct may hand it over with its CRC
  // fields (ICRC, VCRC and whatever covers them) not yet computed, together with
  // the function that computes them. Such a frame is "intact": its bytes are
  // exactly what the builder made. Every way of looking at or changing the bytes
  // (bytes(), buffer(), resize()) first completes the seal, so whoever sees them
  // (a capture tap, a fault model, a test) sees correct CRCs, and whoever changes
  // them changes a correctly sealed frame, no longer intact. Only a receiver that
  // trusts intact frames looks at them as built and may skip the uncomputed CRCs.
  // The frame is correct except for the CRC fields `sealer` computes.
  void defer_seal(Sealer sealer) { n_->sealer = sealer; }
  // No one has seen or changed the bytes since a builder deferred the seal.
  bool intact() const { return n_ != nullptr && n_->sealer != nullptr; }
  // The function an intact frame's seal waits for (null otherwise).
  Sealer deferred_sealer() const { return n_ == nullptr ? nullptr : n_->sealer; }
  // The bytes without completing the seal: for an intact frame the CRC fields
  // hold garbage, and a borrowed payload is not there (source_of finds it).
  // For receivers that skip the CRC check of intact frames.
  std::span<const std::byte> bytes_as_built() const {
    return n_ == nullptr ? std::span<const std::byte>() : std::span<const std::byte>(n_->data(), n_->length);
  }
  // Copies a borrowed payload in, then computes the deferred CRCs (a no-op for
  // a frame that borrows nothing and is not intact).
  void complete_seal() const {
    if (n_ != nullptr && (n_->lender != nullptr || n_->sealer != nullptr)) [[unlikely]] complete();
  }

  // --- borrowed payload ---
  // The DMA read that fills the payload from host memory may lend the bytes
  // instead of copying them. Whoever looks at or changes the frame's bytes (the
  // calls that complete a deferred seal) makes the frame copy them in first; a
  // receiver that moves the payload straight into its own host memory reads it
  // where it lies (source_of): one copy instead of two. The lender (BorrowList)
  // makes its borrowers copy in before it changes those bytes and before it goes
  // away: a frame carries the bytes the DMA read saw, as if it had copied them.
  // The `length` bytes at `offset` of the frame are the `length` bytes at `src`
  // in `lender`'s memory, which lends them until the frame copies them in.
  void lend_payload(BorrowList& lender, uint32_t offset, const std::byte* src, uint32_t length);
  bool borrowing() const { return n_ != nullptr && n_->lender != nullptr; }
  // The bytes as built, writable, for the builder finishing its own headers
  // (pad, checksums): a borrowed payload is not copied in, as the builder
  // writes none of it, and nothing deferred is computed.
  std::span<std::byte> builder_bytes() {
    return n_ == nullptr ? std::span<std::byte>() : std::span<std::byte>(n_->data(), n_->length);
  }
  // Copies a borrowed payload in now (a no-op if there is none).
  void copy_in_payload() {
    if (borrowing()) n_->copy_in();
  }
  // Where the bytes of `part` (a span of bytes_as_built()) are: in host memory
  // if they are borrowed, in the buffer otherwise. Bytes only partly borrowed
  // are copied in first. Borrowed bytes still on their way to the lender
  // (BorrowList::Arrival) are waited for.
  std::span<const std::byte> source_of(std::span<const std::byte> part);
  // The same without that wait, for a reader ordered after the bytes' arrival
  // (the thread that brings them, which reads them after it).
  std::span<const std::byte> source_in_order(std::span<const std::byte> part);

private:
  friend class FramePool;
  friend class BorrowList;
  // The slow part of complete_seal.
  void complete() const;
  // A pooled buffer with everything known about the frame in it, so that a Frame
  // is one pointer: moving a frame from queue to queue copies eight bytes. The
  // frame's bytes follow the node in the same allocation.
  struct alignas(std::max_align_t) Node {
    FramePool* pool = nullptr;
    uint32_t length = 0;
    uint32_t elided = 0;  // bytes after length not materialised (size-only frames)
    uint32_t capacity = 0;
    Sealer sealer = nullptr;  // set while intact (the CRCs are computed on first look)
    FrameMeta meta;
    // Borrowed payload: bytes [lent_offset, lent_offset + lent_length) of the
    // frame are at `lent` while `lender` is set; the node is on lender's list.
    BorrowList* lender = nullptr;
    const std::byte* lent = nullptr;
    uint32_t lent_offset = 0, lent_length = 0;
    Node* lend_prev = nullptr;
    Node* lend_next = nullptr;
    // Copies the borrowed bytes in and leaves the lender's list.
    void copy_in();
    std::byte* data() { return reinterpret_cast<std::byte*>(this + 1); }
  };
  static_assert(sizeof(Node) % alignof(std::max_align_t) == 0, "the bytes after a node stay aligned");
  explicit Frame(Node* n) : n_(n) {}
  // Gives the buffer back. Inline, because most frames it is called on (moved
  // from, default-constructed slots of a queue) have none.
  void release() noexcept {
    if (n_ != nullptr) return_buffer();
  }
  void return_buffer() noexcept;

  Node* n_ = nullptr;
};

class FramePool {
public:
  // Every buffer holds `buffer_size` bytes: at least the largest frame of the run.
  explicit FramePool(size_t buffer_size = 10240) : buffer_size_(buffer_size) {}
  FramePool(const FramePool&) = delete;
  FramePool& operator=(const FramePool&) = delete;

  Frame acquire(size_t length);
  size_t buffer_size() const { return buffer_size_; }
  size_t allocated() const { return storage_.size(); }
  size_t in_use() const { return storage_.size() - free_.size(); }

private:
  friend class Frame;
  void give_back(Frame::Node* n) { free_.push_back(n); }
  size_t buffer_size_;
  std::vector<std::unique_ptr<std::byte[]>> storage_;
  std::vector<Frame::Node*> free_;
};

// What a lender of payload bytes (host memory) keeps: the frames that borrow
// from it. The range summary makes the common check, a change to bytes no frame
// borrows, two comparisons.
class BorrowList {
public:
  // A lender whose bytes may still be on their way (another thread brings
  // them): a borrower waits for them before it reads them here.
  class Arrival {
  public:
    virtual void await() const = 0;

  protected:
    ~Arrival() = default;
  };
  BorrowList() = default;
  explicit BorrowList(const Arrival* arrival) : arrival_(arrival) {}
  BorrowList(const BorrowList&) = delete;
  BorrowList& operator=(const BorrowList&) = delete;
  // Every borrower copies its bytes in: they are about to go.
  ~BorrowList();
  // The bytes [from, to) of the lender are about to change: the frames that
  // borrow any of them copy theirs in now.
  void settle(const std::byte* from, const std::byte* to) {
    if (head_ != nullptr && from < hi_ && lo_ < to) settle_range(from, to);
  }
  // Every borrower copies its bytes in now (the lender is about to change
  // bytes it cannot name, or to unmap them).
  void settle_all();
  // The borrowers whose metadata `pick` picks copy their bytes in now.
  template <class Pick>
  void settle_if(Pick pick) {
    for (Frame::Node* n = head_; n != nullptr;) {
      Frame::Node* next = n->lend_next;
      if (pick(std::as_const(n->meta))) {
        n->copy_in();
        ++settled_;
      }
      n = next;
    }
  }
  size_t borrowers() const { return count_; }
  // Borrowers made to copy their bytes in by settle() so far.
  uint64_t settled() const { return settled_; }

private:
  friend class Frame;
  void add(Frame::Node* n);
  void remove(Frame::Node* n);
  void settle_range(const std::byte* from, const std::byte* to);
  void await() const {
    if (arrival_ != nullptr) arrival_->await();
  }
  const Arrival* arrival_ = nullptr;
  Frame::Node* head_ = nullptr;
  size_t count_ = 0;
  uint64_t settled_ = 0;
  // Every borrowed byte lies in [lo_, hi_) (which only grows until the list empties).
  const std::byte* lo_ = nullptr;
  const std::byte* hi_ = nullptr;
};

}  // namespace rnicsim::fabric
