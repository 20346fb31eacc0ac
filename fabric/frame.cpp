#include "fabric/frame.hpp"

#include <new>
#include <stdexcept>

namespace rnicsim::fabric {

void Frame::resize(size_t n) {
  if (n > capacity()) throw std::length_error("frame longer than its buffer");
  if (n_ == nullptr) return;  // an empty frame stays empty
  complete_seal();
  n_->length = static_cast<uint32_t>(n);
  n_->elided = 0;
}

void Frame::elide_from(size_t kept) {
  if (kept > bytes_as_built().size()) throw std::length_error("elided part starts after the frame's end");
  if (n_ == nullptr) return;
  n_->sealer = nullptr;  // what is left has no CRCs to compute
  n_->elided += n_->length - static_cast<uint32_t>(kept);
  n_->length = static_cast<uint32_t>(kept);
}

void Frame::return_buffer() noexcept {
  n_->pool->give_back(n_);
  n_ = nullptr;
}

Frame FramePool::acquire(size_t length) {
  if (length > buffer_size_) throw std::length_error("frame larger than the pool's buffers");
  if (free_.empty()) {
    storage_.push_back(std::make_unique<std::byte[]>(sizeof(Frame::Node) + buffer_size_));
    free_.push_back(::new (static_cast<void*>(storage_.back().get())) Frame::Node);
  }
  Frame::Node* n = free_.back();
  free_.pop_back();
  n->pool = this;
  n->length = static_cast<uint32_t>(length);
  n->elided = 0;
  n->capacity = static_cast<uint32_t>(buffer_size_);
  n->sealer = nullptr;
  n->meta = FrameMeta{};
  return Frame(n);
}

}  // namespace rnicsim::fabric
