#include "nic_model/rx_buffer.hpp"

#include <algorithm>

namespace rnicsim::nic {

void RxBuffer::enable_pfc(const fabric::PfcParams& params, uint64_t rx_buffer_bytes) {
  if (port_ == nullptr || !params.enabled()) return;
  const uint32_t frame = ctx_.params().mtu + 128;
  headroom_ = fabric::headroom_for(params, port_->params(), ethernet_mtu(ctx_.params()));
  xoff_ = rx_buffer_bytes > 2 * headroom_ ? rx_buffer_bytes - headroom_ : rx_buffer_bytes / 2;
  xon_ = xoff_ > 2 * frame ? xoff_ - 2 * frame : 0;
  pfc_ = std::make_unique<fabric::PfcGenerator>(ctx_.sim, ctx_.pool, *port_, ctx_.config.mac, params);
}

void RxBuffer::buffered(uint8_t priority, int64_t delta) {
  priority &= 7;
  bytes_[priority] = static_cast<uint64_t>(static_cast<int64_t>(bytes_[priority]) + delta);
  total_ = static_cast<uint64_t>(static_cast<int64_t>(total_) + delta);
  peak_ = std::max(peak_, total_);
  if (delta < 0 && port_ != nullptr) port_->return_credit(priority, static_cast<uint64_t>(-delta));  // IB credits
  if (pfc_ == nullptr) return;
  if (bytes_[priority] > xoff_) {
    pfc_->set_congested(priority, true);
  } else if (bytes_[priority] <= xon_) {
    pfc_->set_congested(priority, false);
  }
}

}  // namespace rnicsim::nic
