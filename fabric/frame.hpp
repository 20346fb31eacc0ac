// A frame on the fabric: owned bytes (an Ethernet frame for RoCEv2, an IB packet for
// native IB, without FCS) plus metadata. Buffers come from a FramePool and return to
// it when the Frame dies, so steady-state traffic allocates nothing.
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
};

class Frame {
public:
  Frame() = default;
  Frame(Frame&& o) noexcept { *this = std::move(o); }
  Frame& operator=(Frame&& o) noexcept;
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  ~Frame() { release(); }

  explicit operator bool() const { return buf_ != nullptr; }
  std::span<std::byte> bytes() { return {buf_, length_}; }
  std::span<const std::byte> bytes() const { return {buf_, length_}; }
  size_t size() const { return length_; }
  size_t capacity() const { return capacity_; }
  // Sets the frame length (<= capacity).
  void resize(size_t n);
  // The writable area of the whole buffer, for builders that learn the length later.
  std::span<std::byte> buffer() { return {buf_, capacity_}; }
  FrameMeta& meta() { return meta_; }
  const FrameMeta& meta() const { return meta_; }

private:
  friend class FramePool;
  void release();
  std::byte* buf_ = nullptr;
  size_t length_ = 0;
  size_t capacity_ = 0;
  FramePool* pool_ = nullptr;
  FrameMeta meta_;
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
  void give_back(std::byte* b) { free_.push_back(b); }
  size_t buffer_size_;
  std::vector<std::unique_ptr<std::byte[]>> storage_;
  std::vector<std::byte*> free_;
};

}  // namespace rnicsim::fabric
