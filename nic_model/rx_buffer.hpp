// The NIC's receive buffer: frames waiting in the receive pipeline fill it. With
// PFC, above its XOFF level (the buffer less the link's headroom) the NIC pauses
// the priority, and resumes it once two frames' worth below; on IB, bytes let
// go of return the link's credits.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "fabric/pfc.hpp"
#include "fabric/port.hpp"
#include "nic_model/nic_context.hpp"
#include "nic_model/ports.hpp"

namespace rnicsim::nic {

class RxBuffer final : public RxBufferPort {
public:
  explicit RxBuffer(NicContext& ctx) : ctx_(ctx) {}
  void attach(fabric::Port& port) { port_ = &port; }
  void enable_pfc(const fabric::PfcParams& params, uint64_t rx_buffer_bytes);
  void buffered(uint8_t priority, int64_t delta) override;
  const fabric::PfcGenerator* pfc() const { return pfc_.get(); }
  uint64_t peak() const { return peak_; }
  uint64_t headroom() const { return headroom_; }  // 0 without PFC

private:
  NicContext& ctx_;
  fabric::Port* port_ = nullptr;
  std::unique_ptr<fabric::PfcGenerator> pfc_;
  uint64_t headroom_ = 0, xoff_ = 0, xon_ = 0;
  std::array<uint64_t, 8> bytes_{};
  uint64_t total_ = 0, peak_ = 0;
};

}  // namespace rnicsim::nic
