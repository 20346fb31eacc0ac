#include "nic_model/nic_context.hpp"

namespace rnicsim::nic {

packet::PacketFields NicContext::packet_template(const QpContext& qp) {
  packet::PacketFields f;
  f.link = config.link;
  f.eth_src = config.mac;
  f.eth_dst = qp.remote.mac;
  f.ip_src = config.ip;
  f.ip_dst = qp.remote.ip;
  f.dscp = static_cast<uint8_t>(qp.remote.traffic_class >> 2);
  f.ecn = 0b10;  // ECT(0): RoCEv2 traffic is ECN-capable
  f.ttl = qp.remote.hop_limit;
  f.ipv4_id = ipv4_id++;
  f.udp_src_port = qp.udp_src_port;
  if (packet::is_ib(f.link)) {
    // LRH: LIDs, SL from the address vector. VL = SL: there is no SL-to-VL
    // table; SL 15 goes on VL 0, as VL 15 carries subnet management packets only.
    f.slid = config.lid;
    f.dlid = qp.remote.lid;
    f.lrh_sl = static_cast<uint8_t>(qp.remote.sl & 0x0F);
    f.lrh_vl = f.lrh_sl == 15 ? 0 : f.lrh_sl;
    // GRH (IbGlobal): GIDs, traffic class and hop limit from the address vector.
    // The address vector has no flow label: 0, as an SM path record gives by default.
    f.sgid = config.ip;
    f.dgid = qp.remote.ip;
    f.grh_tclass = qp.remote.traffic_class;
    f.grh_flow_label = 0;
    f.grh_hop_limit = qp.remote.hop_limit;
  }
  f.dest_qp = qp.dest_qpn;
  packet::derive_fields(f);  // LNH from the link kind
  return f;
}

uint8_t NicContext::egress_priority(const QpContext& qp) const {
  fabric::Markings m;
  m.dscp = static_cast<uint8_t>(qp.remote.traffic_class >> 2);
  m.sl = qp.remote.sl;
  return fabric::priority_of(packet::link_type(config.link), config.priorities, m);
}

}  // namespace rnicsim::nic
