#include "fabric/frame.hpp"

#include <stdexcept>

namespace rnicsim::fabric {

Frame& Frame::operator=(Frame&& o) noexcept {
  if (this != &o) {
    release();
    buf_ = o.buf_;
    length_ = o.length_;
    capacity_ = o.capacity_;
    pool_ = o.pool_;
    meta_ = o.meta_;
    o.buf_ = nullptr;
    o.length_ = o.capacity_ = 0;
    o.pool_ = nullptr;
  }
  return *this;
}

void Frame::resize(size_t n) {
  if (n > capacity_) throw std::length_error("frame longer than its buffer");
  length_ = n;
}

void Frame::release() {
  if (buf_ != nullptr && pool_ != nullptr) pool_->give_back(buf_);
  buf_ = nullptr;
  length_ = capacity_ = 0;
  pool_ = nullptr;
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
  f.capacity_ = buffer_size_;
  f.length_ = length;
  f.pool_ = this;
  return f;
}

}  // namespace rnicsim::fabric
