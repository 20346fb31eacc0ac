// Congestion control's notification point: for a CE-marked packet it sends a CNP
// to the sender of the QP's requests (RoCEv2 annex A17.9.3), with the DSCP and
// priority the congestion-control parameters give CNPs.
#pragma once

#include "nic_model/nic_context.hpp"
#include "nic_model/ports.hpp"

namespace rnicsim::nic {

class NotificationPoint final : public CnpPort {
public:
  explicit NotificationPoint(NicContext& ctx) : ctx_(ctx) {}
  void connect(WirePort& wire) { wire_ = &wire; }
  void send_cnp(QpContext& qp) override;

private:
  NicContext& ctx_;
  WirePort* wire_ = nullptr;
};

}  // namespace rnicsim::nic
