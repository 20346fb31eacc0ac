#include "fabric/frame.hpp"

#include <stdexcept>

namespace rnicsim::fabric {

void Frame::resize(size_t n) {
  if (n > capacity_) throw std::length_error("frame longer than its buffer");
  complete_seal();
  length_ = static_cast<uint32_t>(n);
  elided_ = 0;
}

void Frame::elide_from(size_t kept) {
  if (kept > length_) throw std::length_error("elided part starts after the frame's end");
  sealer_ = nullptr;  // what is left has no CRCs to compute
  elided_ += length_ - static_cast<uint32_t>(kept);
  length_ = static_cast<uint32_t>(kept);
}

void Frame::return_buffer() noexcept {
  if (pool_ != nullptr) pool_->give_back(buf_);
  buf_ = nullptr;
  pool_ = nullptr;
  length_ = elided_ = capacity_ = 0;
  sealer_ = nullptr;
}

Frame FramePool::acquire(size_t length) {
  if (length > buffer_size_) throw std::length_error("frame larger than the pool's buffers");
  if (free_.empty()) {
    storage_.push_back(std::make_unique<std::byte[]>(buffer_size_));
    free_.push_back(storage_.back().get());
  }
  Frame f;
  f.buf_ = free_.back();
  free_.pop_back();
  f.capacity_ = static_cast<uint32_t>(buffer_size_);
  f.length_ = static_cast<uint32_t>(length);
  f.elided_ = 0;
  f.pool_ = this;
  return f;
}

}  // namespace rnicsim::fabric
