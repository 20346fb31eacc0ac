#include "nic_model/notification_point.hpp"

namespace rnicsim::nic {

void NotificationPoint::send_cnp(QpContext& qp) {
  // A17.9.3: BTH with opcode CNP, the destination QP, BECN set, the P_Key; PSN
  // and the rest zero; 16 reserved bytes. Not ECN-capable.
  const CongestionControl* cc = ctx_.congestion;
  if (!packet::is_roce(ctx_.config.link) || cc == nullptr) return;
  packet::PacketFields f = ctx_.packet_template(qp);
  f.opcode = packet::Opcode::Cnp;
  f.psn = Psn(0);
  f.becn = true;
  f.dscp = static_cast<uint8_t>(cc->params().cnp_dscp & 0x3F);
  f.ecn = 0;
  packet::derive_fields(f);
  fabric::Frame frame = ctx_.pool.acquire(packet::frame_length(f));
  if (!packet::build(f, {}, frame.bytes())) return;
  frame.meta().priority = static_cast<uint8_t>(cc->params().cnp_802p_prio & 7);
  frame.meta().flow_id = qp.qpn.value();
  frame.meta().created = ctx_.now();
  wire_->transmit(std::move(frame));
  ++ctx_.stats.cnps_sent;
  if (ctx_.timeline != nullptr) ctx_.timeline->record({.kind = TimelineKind::CnpSent, .qpn = qp.qpn, .start = ctx_.now()});
}

}  // namespace rnicsim::nic
