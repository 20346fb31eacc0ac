#include "fabric/shared_buffer.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace rnicsim::fabric {

SharedBuffer::SharedBuffer(const BufferParams& params, const PfcParams& pfc, std::vector<uint64_t> headroom)
    : params_(params),
      pfc_(pfc),
      headroom_(std::move(headroom)),
      in_shared_(headroom_.size()),
      in_headroom_(headroom_.size()),
      egress_(headroom_.size()) {
  uint64_t reserved = 0;
  const auto lossless = static_cast<uint64_t>(std::popcount(pfc.priorities));
  for (uint64_t h : headroom_) reserved += h * lossless;
  if (reserved >= params.size_bytes)
    throw std::invalid_argument("switch buffer of " + std::to_string(params.size_bytes) +
                                " bytes is smaller than its PFC headroom (" + std::to_string(reserved) + " bytes)");
  shared_size_ = params.size_bytes - reserved;
}

uint64_t SharedBuffer::xoff_threshold() const {
  if (pfc_.xoff_bytes > 0) return pfc_.xoff_bytes;
  return static_cast<uint64_t>(pfc_.alpha * static_cast<double>(free_shared()));
}

SharedBuffer::Verdict SharedBuffer::admit(size_t in, size_t out, uint8_t prio, uint64_t bytes) {
  Verdict v;
  if (params_.credit_based) {
    v.charge = Charge::Shared;
  } else if (pfc_.lossless(prio)) {
    if (in_headroom_[in][prio] == 0 && in_shared_[in][prio] + bytes <= xoff_threshold() &&
        shared_used_ + bytes <= shared_size_) {
      v.charge = Charge::Shared;
    } else if (in_headroom_[in][prio] + bytes <= headroom_[in]) {
      v.charge = Charge::Headroom;
    } else {
      v.cause = DropCause::HeadroomOverflow;
      return v;
    }
  } else {
    if (shared_used_ + bytes > shared_size_) {
      v.cause = DropCause::BufferFull;
      return v;
    }
    if (static_cast<double>(egress_[out][prio] + bytes) > params_.alpha * static_cast<double>(free_shared())) {
      v.cause = DropCause::EgressThreshold;
      return v;
    }
    v.charge = Charge::Shared;
  }
  v.admitted = true;
  if (v.charge == Charge::Shared) {
    in_shared_[in][prio] += bytes;
    shared_used_ += bytes;
  } else {
    in_headroom_[in][prio] += bytes;
    headroom_used_ += bytes;
  }
  egress_[out][prio] += bytes;
  peak_used_ = std::max(peak_used_, shared_used_ + headroom_used_);
  return v;
}

void SharedBuffer::release(size_t in, size_t out, uint8_t prio, uint64_t bytes) {
  const uint64_t from_headroom = std::min(bytes, in_headroom_[in][prio]);
  in_headroom_[in][prio] -= from_headroom;
  headroom_used_ -= from_headroom;
  in_shared_[in][prio] -= bytes - from_headroom;
  shared_used_ -= bytes - from_headroom;
  egress_[out][prio] -= bytes;
}

bool SharedBuffer::over_xoff(size_t in, uint8_t prio) const {
  return in_headroom_[in][prio] > 0 || in_shared_[in][prio] > xoff_threshold();
}

bool SharedBuffer::under_xon(size_t in, uint8_t prio) const {
  if (in_headroom_[in][prio] > 0) return false;
  const uint64_t level = pfc_.xoff_bytes > 0 ? pfc_.xon_bytes
                         : xoff_threshold() > pfc_.xon_offset_bytes ? xoff_threshold() - pfc_.xon_offset_bytes
                                                                     : 0;
  return in_shared_[in][prio] <= level;
}

}  // namespace rnicsim::fabric
