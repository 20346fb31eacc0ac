#include "nic_model/responder.hpp"

#include <algorithm>

#include "nic_model/nic.hpp"

namespace rnicsim::nic {

using packet::Operation;
using packet::Position;

void Responder::send_ack(QpContext& qp, uint8_t syndrome, Psn psn) {
  packet::PacketFields f = nic_.packet_template(qp);
  f.opcode = packet::Opcode::RcAcknowledge;
  f.psn = psn.value();
  f.aeth = packet::AethFields{syndrome, qp.msn & 0xFFFFFF};
  packet::derive_fields(f);
  fabric::Frame frame = nic_.frame_pool().acquire(packet::frame_length(f));
  if (!packet::build(f, {}, frame.bytes())) return;
  frame.meta().priority = qp.remote.sl;
  frame.meta().created = nic_.now();
  nic_.transmit(std::move(frame));
  ++counters_.acks_sent;
  qp.unacked_packets = 0;
}

Responder::Verdict Responder::need_recv_wqe(QpContext& qp) {
  if (!qp.recv_wqes.empty()) return Verdict::Done;
  if (qp.rq.fetched < qp.rq.producer || nic_.wqe_fetcher().recv_fetch_pending(qp.qpn.value())) {
    if (qp.rq.fetched < qp.rq.producer) nic_.wqe_fetcher().kick(QueueKind::Recv, qp.qpn.value());
    return Verdict::Stall;
  }
  return Verdict::Done;  // none posted: the caller answers RNR
}

bool Responder::place_send(QpContext& qp, std::span<const std::byte> payload, fabric::Frame& frame) {
  const RecvWqe& w = qp.recv_wqes.front();
  // Check the whole placement before writing anything.
  struct Piece { uint64_t host; size_t from, len; };
  Piece pieces[kMaxSge];
  size_t count = 0, placed = 0;
  uint32_t skip = qp.recv_offset;
  for (uint32_t i = 0; i < std::min<uint32_t>(w.num_sge, kMaxSge) && placed < payload.size(); ++i) {
    const Sge& s = w.sge[i];
    if (skip >= s.length) {
      skip -= s.length;
      continue;
    }
    const size_t n = std::min<size_t>(s.length - skip, payload.size() - placed);
    uint64_t host = 0;
    if (nic_.translation().check_local(s.lkey, qp.pd, s.addr + skip, n, kAccessLocalWrite, host) != AccessCheck::Ok)
      return false;
    pieces[count++] = Piece{host, placed, n};
    placed += n;
    skip = 0;
  }
  if (placed < payload.size()) return false;
  for (size_t i = 0; i < count; ++i) {
    const auto src = payload.subspan(pieces[i].from, pieces[i].len);
    // The last write holds the frame, whose bytes all the writes read.
    if (i + 1 == count)
      nic_.dma().write(pieces[i].host, src, std::move(frame), nullptr, 0);
    else
      nic_.dma().write(pieces[i].host, src, fabric::Frame(), nullptr, 0);
  }
  qp.recv_offset += static_cast<uint32_t>(payload.size());
  return true;
}

void Responder::complete_recv(QpContext& qp, const packet::ParsedPacket& p, WcOpcode op, uint32_t byte_len) {
  const RecvWqe w = qp.recv_wqes.pop_front();
  Cqe c{};
  c.wr_id = w.wr_id;
  c.status = WcStatus::Success;
  c.opcode = op;
  c.byte_len = byte_len;
  c.qp_num = qp.qpn.value();
  c.src_qp = p.fields.deth ? p.fields.deth->src_qp : qp.dest_qpn.value();
  c.slid = p.fields.slid;
  c.sl = p.fields.lrh_sl;
  if (p.fields.imm) {
    c.wc_flags |= kWcWithImm;
    c.imm_data = __builtin_bswap32(*p.fields.imm);  // CQEs keep immediate data in network order
  }
  if (p.fields.ieth) {
    c.wc_flags |= kWcWithInv;
    c.imm_data = p.fields.ieth->rkey;
  }
  if (qp.type == QpType::Ud) c.wc_flags |= kWcGrh;
  qp.recv_offset = 0;
  nic_.cqe_writer().post(qp.recv_cq, c);
}

void Responder::recv_wqes_arrived(uint32_t qpn) { nic_.rx_pipeline().resume(qpn); }

Responder::Verdict Responder::receive(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame) {
  ++counters_.requests;
  ++qp.rx_packets;
  if (qp.state == QpState::Reset || qp.state == QpState::Init || qp.state == QpState::Err) {
    ++counters_.dropped;
    return Verdict::Done;
  }
  const auto& info = packet::opcode_info(p.fields.opcode);
  const Psn psn(p.fields.psn);
  const bool rc = qp.type == QpType::Rc;
  const bool ends_message = info.position == Position::Last || info.position == Position::Only;
  const bool starts_message = info.position == Position::First || info.position == Position::Only;

  if (qp.type == QpType::Ud) {
    if (!p.fields.deth || p.fields.deth->qkey != qp.qkey) {
      ++counters_.dropped;
      return Verdict::Done;
    }
  } else if (rc) {
    const int32_t d = Psn::distance(qp.epsn, psn);
    if (d < 0) {  // duplicate: already executed, acknowledge again
      ++counters_.duplicates;
      send_ack(qp, aeth_ack(), qp.epsn - 1);
      return Verdict::Done;
    }
    if (d > 0) {  // a gap: NAK once, drop until the expected PSN comes
      ++counters_.out_of_sequence;
      if (!qp.nak_outstanding) {
        qp.nak_outstanding = true;
        send_ack(qp, aeth_nak(NakCode::PsnSequenceError), qp.epsn);
      }
      return Verdict::Done;
    }
  } else if (psn != qp.epsn) {  // UC: a lost packet drops the message in progress
    qp.epsn = psn;
    qp.recv_offset = 0;
    qp.write_remaining = 0;
    if (!starts_message) {
      ++qp.epsn;
      ++counters_.out_of_sequence;
      return Verdict::Done;
    }
  }

  // A message that completes into a receive WQE needs one before anything is written.
  const bool consumes_wqe = info.operation == Operation::Send || (info.operation == Operation::RdmaWrite && p.fields.imm);
  if (consumes_wqe && (info.operation == Operation::Send ? starts_message : ends_message)) {
    if (need_recv_wqe(qp) == Verdict::Stall) return Verdict::Stall;
    if (qp.recv_wqes.empty()) {
      ++counters_.rnr_naks;
      ++counters_.dropped;
      if (rc) {
        qp.nak_outstanding = true;
        send_ack(qp, aeth_rnr_nak(qp.min_rnr_timer), psn);
      }
      return Verdict::Done;
    }
  }

  uint32_t nak = 0xFF;  // NAK code to answer with, if the request fails
  switch (info.operation) {
    case Operation::Send: {
      if (!place_send(qp, p.payload, frame)) {
        nak = static_cast<uint32_t>(NakCode::InvalidRequest);
        break;
      }
      if (ends_message) complete_recv(qp, p, WcOpcode::Recv, qp.recv_offset);
      break;
    }
    case Operation::RdmaWrite: {
      if (starts_message) {
        uint64_t host = 0;
        const auto& r = *p.fields.reth;
        if (nic_.translation().check_remote(r.rkey, qp.pd, r.va, r.dma_length, kAccessRemoteWrite, host) !=
            AccessCheck::Ok) {
          ++counters_.access_errors;
          nak = static_cast<uint32_t>(NakCode::RemoteAccessError);
          break;
        }
        qp.write_addr = host;
        qp.write_remaining = r.dma_length;
        qp.write_length = r.dma_length;
      }
      if (p.payload.size() > qp.write_remaining) {
        nak = static_cast<uint32_t>(NakCode::InvalidRequest);
        break;
      }
      if (!p.payload.empty()) nic_.dma().write(qp.write_addr, p.payload, std::move(frame), nullptr, 0);
      qp.write_addr += p.payload.size();
      qp.write_remaining -= static_cast<uint32_t>(p.payload.size());
      if (ends_message && p.fields.imm) complete_recv(qp, p, WcOpcode::RecvRdmaWithImm, qp.write_length);
      break;
    }
    default:
      nak = static_cast<uint32_t>(NakCode::InvalidRequest);
      break;
  }

  if (nak != 0xFF) {
    ++counters_.invalid_requests;
    if (rc && !qp.nak_outstanding) {
      qp.nak_outstanding = true;
      send_ack(qp, aeth_nak(static_cast<NakCode>(nak)), psn);
    }
    return Verdict::Done;
  }

  qp.nak_outstanding = false;
  qp.epsn = psn + 1;
  if (ends_message) qp.msn = (qp.msn + 1) & 0xFFFFFF;
  if (rc) {
    ++qp.unacked_packets;
    if (p.fields.ack_req || qp.unacked_packets >= nic_.params().ack_coalesce_packets) send_ack(qp, aeth_ack(), psn);
  }
  return Verdict::Done;
}

}  // namespace rnicsim::nic
