#include "fabric/frame.hpp"

#include <cstring>
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
  if (n_->lender != nullptr) n_->copy_in();
  n_->sealer = nullptr;  // what is left has no CRCs to compute
  n_->elided += n_->length - static_cast<uint32_t>(kept);
  n_->length = static_cast<uint32_t>(kept);
}

void Frame::complete() const {
  if (n_->lender != nullptr) n_->copy_in();
  if (n_->sealer != nullptr) {
    const Sealer s = n_->sealer;
    n_->sealer = nullptr;
    s({n_->data(), n_->length});
  }
}

void Frame::Node::copy_in() {
  lender->await();
  std::memcpy(data() + lent_offset, lent, lent_length);
  lender->remove(this);
}

void Frame::lend_payload(BorrowList& lender, uint32_t offset, const std::byte* src, uint32_t length) {
  if (n_ == nullptr || n_->lender != nullptr || offset > n_->length || length > n_->length - offset)
    throw std::logic_error("payload lent to a frame that cannot take it");
  n_->lent = src;
  n_->lent_offset = offset;
  n_->lent_length = length;
  lender.add(n_);
}

std::span<const std::byte> Frame::source_of(std::span<const std::byte> part) {
  if (n_ != nullptr && n_->lender != nullptr) n_->lender->await();
  return source_in_order(part);
}

std::span<const std::byte> Frame::source_in_order(std::span<const std::byte> part) {
  if (n_ == nullptr || n_->lender == nullptr) return part;
  const std::byte* lent_begin = n_->data() + n_->lent_offset;
  if (part.data() >= lent_begin && part.data() + part.size() <= lent_begin + n_->lent_length)
    return {n_->lent + (part.data() - lent_begin), part.size()};
  n_->copy_in();
  return part;
}

void Frame::return_buffer() noexcept {
  if (n_->lender != nullptr) n_->lender->remove(n_);
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

BorrowList::~BorrowList() {
  while (head_ != nullptr) head_->copy_in();
}

void BorrowList::settle_all() {
  for (; head_ != nullptr; ++settled_) head_->copy_in();
}

void BorrowList::add(Frame::Node* n) {
  n->lender = this;
  n->lend_prev = nullptr;
  n->lend_next = head_;
  if (head_ != nullptr) head_->lend_prev = n;
  head_ = n;
  const std::byte* end = n->lent + n->lent_length;
  if (count_++ == 0) {
    lo_ = n->lent;
    hi_ = end;
  } else {
    if (n->lent < lo_) lo_ = n->lent;
    if (end > hi_) hi_ = end;
  }
}

void BorrowList::remove(Frame::Node* n) {
  if (n->lend_prev != nullptr) n->lend_prev->lend_next = n->lend_next; else head_ = n->lend_next;
  if (n->lend_next != nullptr) n->lend_next->lend_prev = n->lend_prev;
  n->lender = nullptr;
  n->lent = nullptr;
  n->lend_prev = n->lend_next = nullptr;
  if (--count_ == 0) lo_ = hi_ = nullptr;
}

void BorrowList::settle_range(const std::byte* from, const std::byte* to) {
  for (Frame::Node* n = head_; n != nullptr;) {
    Frame::Node* next = n->lend_next;
    if (n->lent < to && from < n->lent + n->lent_length) {
      n->copy_in();
      ++settled_;
    }
    n = next;
  }
}

}  // namespace rnicsim::fabric
