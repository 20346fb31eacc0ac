// A frame on the fabric: owned bytes (an Ethernet frame for RoCEv2, an IB packet for
// native IB, without FCS) plus metadata. Buffers come from a FramePool and return to
// it when the Frame dies, so steady-state traffic allocates nothing.
//
// Deferred CRCs. A builder that knows its frame is correct may hand it over with
// its CRC fields (ICRC, VCRC and whatever covers them) not yet computed, together
// with the function that computes them (defer_seal). Such a frame is "intact": its
// bytes are exactly what the builder made. Every way of looking at or changing the
// bytes (bytes(), buffer(), resize()) first completes the seal, so whoever sees
// the bytes — a capture tap, a fault model, a test — sees correct CRCs, and whoever
// changes them changes a correctly sealed frame (and it is no longer intact). Only
// a receiver that trusts intact frames looks at them as built (bytes_as_built())
// and may skip checking the CRCs nobody computed: a run need not compute what
// nobody observes.
//
// Size-only frames. In a run that does not materialise payload bytes, a frame
// holds its headers only: the bytes from the payload on (payload, pad, ICRC,
// VCRC, Ethernet padding) are "elided". size() is still the length on the wire,
// which is what serialisation, buffers and credits count; bytes() is the part
// that exists. A fault that would change elided bytes marks the frame corrupted
// (meta().corrupted) instead, and the receiver drops it as an ICRC failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "sim/time.hpp"

namespace rnicsim::fabric {

class FramePool;

struct FrameMeta {
  uint8_t priority = 0;      // egress priority (802.1p / VL) 0..7
  uint32_t flow_id = 0;      // for statistics
  sim::Time created;         // when the sender built it
  uint16_t ingress_port = 0;  // inside a switch: the port it came in on
  uint8_t ingress_vl = 0;     // and the priority (IB: VL) it came in on, for credits
  bool corrupted = false;     // a size-only frame a fault changed (its ICRC would fail)
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

  // --- size-only frames (see the top of this file) ---
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

  // --- deferred CRCs (see the top of this file) ---
  // The frame is correct except for the CRC fields `sealer` computes.
  void defer_seal(Sealer sealer) { n_->sealer = sealer; }
  // No one has seen or changed the bytes since a builder deferred the seal.
  bool intact() const { return n_ != nullptr && n_->sealer != nullptr; }
  // The bytes without completing the seal: for an intact frame the CRC fields
  // hold garbage. For receivers that skip the CRC check of intact frames.
  std::span<const std::byte> bytes_as_built() const {
    return n_ == nullptr ? std::span<const std::byte>() : std::span<const std::byte>(n_->data(), n_->length);
  }
  // Computes the deferred CRCs now (a no-op for a frame that is not intact).
  void complete_seal() const {
    if (n_ != nullptr && n_->sealer != nullptr) [[unlikely]] {
      const Sealer s = n_->sealer;
      n_->sealer = nullptr;
      s({n_->data(), n_->length});
    }
  }

private:
  friend class FramePool;
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

}  // namespace rnicsim::fabric
