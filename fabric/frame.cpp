#include "fabric/frame.hpp"

#include <stdexcept>

namespace rnicsim::fabric {

void Frame::resize(size_t n) {
  if (n > capacity_) throw std::length_error("frame longer than its buffer");
  complete_seal();
  length_ = static_cast<uint32_t>(n);
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
  f.pool_ = this;
  return f;
}

}  // namespace rnicsim::fabric
