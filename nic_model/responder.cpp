#include "nic_model/responder.hpp"

#include <algorithm>
#include <cstring>

#include "nic_model/nic.hpp"

namespace rnicsim::nic {

using packet::Operation;
using packet::Position;

namespace {
enum class Outcome : uint8_t { Ok, Drop, Stall, Wait };
constexpr uint32_t kUdGrhBytes = 40;
}  // namespace

Responder::Responder(Nic& nic) : nic_(nic), respond_([this] { step_responses(); }, "responder.respond") {}

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

void Responder::nak(QpContext& qp, NakCode code, Psn psn) {
  if (code == NakCode::RemoteAccessError) ++counters_.access_errors;
  else if (code != NakCode::PsnSequenceError) ++counters_.invalid_requests;
  if (qp.type != QpType::Rc || qp.nak_outstanding) return;
  qp.nak_outstanding = true;
  send_ack(qp, aeth_nak(code), psn);
}

void Responder::class_c_error(QpContext& qp, NakCode code, Psn psn) {
  nak(qp, code, psn);
  if (qp.type != QpType::Rc) return;
  nic_.async_event(code == NakCode::RemoteAccessError ? AsyncEvent::QpAccessErr : AsyncEvent::QpReqErr,
                   qp.qpn.value());
  nic_.qp_fatal(qp, WcStatus::WrFlushErr);
}

sim::RingQueue<RecvWqe>& Responder::recv_queue(QpContext& qp) {
  if (qp.srq != 0) {
    if (SrqContext* s = nic_.srq(qp.srq)) return s->wqes;
  }
  return qp.recv_wqes;
}

Responder::Verdict Responder::need_recv_wqe(QpContext& qp) {
  if (!recv_queue(qp).empty()) return Verdict::Done;
  SrqContext* srq = qp.srq != 0 ? nic_.srq(qp.srq) : nullptr;
  const WorkRing& ring = srq != nullptr ? srq->ring : qp.rq;
  const QueueKind kind = srq != nullptr ? QueueKind::Srq : QueueKind::Recv;
  const uint32_t id = srq != nullptr ? srq->srqn : qp.qpn.value();
  if (ring.fetched < ring.producer || nic_.wqe_fetcher().recv_fetch_pending(kind, id)) {
    if (ring.fetched < ring.producer) nic_.wqe_fetcher().kick(kind, id);
    return Verdict::Stall;
  }
  return Verdict::Done;  // none posted: the caller answers RNR
}

void Responder::consume_recv_wqe(QpContext& qp) {
  recv_queue(qp).pop_front();
  qp.recv_offset = 0;
  if (qp.srq == 0) return;
  SrqContext* srq = nic_.srq(qp.srq);
  if (srq == nullptr) return;
  ++srq->consumed;
  // SRQ limit: armed once, fires when fewer WQEs than the limit remain posted.
  if (srq->limit != 0 && srq->ring.producer - srq->consumed < srq->limit) {
    srq->limit = 0;
    nic_.async_event(AsyncEvent::SrqLimitReached, srq->srqn);
  }
}

void Responder::complete_recv(QpContext& qp, const packet::ParsedPacket& p, WcOpcode op, uint32_t byte_len,
                              WcStatus status) {
  const RecvWqe w = recv_queue(qp).front();
  consume_recv_wqe(qp);
  Cqe c{};
  c.wr_id = w.wr_id;
  c.status = status;
  c.opcode = op;
  c.byte_len = status == WcStatus::Success ? byte_len : 0;
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
  if (qp.type == QpType::Ud && p.layout.link != packet::LinkKind::IbLocal) c.wc_flags |= kWcGrh;
  nic_.cqe_writer().post(qp, qp.recv_cq, c, p.fields.solicited);
}

Responder::Verdict Responder::execute_send(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame,
                                           bool ends) {
  const RecvWqe& w = recv_queue(qp).front();
  const bool ud = qp.type == QpType::Ud;
  // UD receive buffers start with 40 bytes for the GRH (IBTA 11.4.1.2).
  const uint32_t offset = ud ? kUdGrhBytes : qp.recv_offset;
  const uint32_t len = p.fields.payload_length;
  SgeMap map;
  const AccessCheck c = nic_.translation().map_sges(std::span(w.sge.data(), std::min<uint32_t>(w.num_sge, kMaxSge)),
                                                    qp.pd, offset, len, kAccessLocalWrite, map);
  SgeMap grh_map;
  const AccessCheck g = ud ? nic_.translation().map_sges(std::span(w.sge.data(), std::min<uint32_t>(w.num_sge, kMaxSge)),
                                                         qp.pd, 0, kUdGrhBytes, kAccessLocalWrite, grh_map)
                           : AccessCheck::Ok;
  if (c != AccessCheck::Ok || g != AccessCheck::Ok) {
    const bool short_buffer = c == AccessCheck::TooShort || g == AccessCheck::TooShort;
    complete_recv(qp, p, WcOpcode::Recv, 0, short_buffer ? WcStatus::LocLenErr : WcStatus::LocProtErr);
    if (ud) return Verdict::Done;
    // A receive buffer too short is the requester's error (Invalid Request); a
    // protection error on it is the responder's own (Remote Operational Error),
    // as ConnectX reports them.
    nak(qp, short_buffer ? NakCode::InvalidRequest : NakCode::RemoteOperationalError, Psn(p.fields.psn));
    nic_.qp_fatal(qp, WcStatus::WrFlushErr);
    return Verdict::Wait;  // nothing more for this QP; the caller must not advance it
  }
  if (ud) {
    // The GRH area: the IPv6 header or GRH as received; for IPv4, the IPv4 header
    // in its last 20 bytes; nothing for IB without GRH.
    std::array<std::byte, kUdGrhBytes> grh{};
    const auto bytes = frame.bytes();
    switch (p.layout.link) {
      case packet::LinkKind::RoceV2Ipv4:
        std::memcpy(grh.data() + 20, bytes.data() + p.layout.l3_offset, 20);
        break;
      case packet::LinkKind::RoceV2Ipv6:
        std::memcpy(grh.data(), bytes.data() + p.layout.l3_offset, 40);
        break;
      case packet::LinkKind::IbGlobal:
        std::memcpy(grh.data(), bytes.data() + p.layout.l3_offset + 8, 40);
        break;
      case packet::LinkKind::IbLocal:
        break;
    }
    nic_.dma().scatter(std::span(grh_map.pieces.data(), grh_map.count), grh, fabric::Frame(), qp.qpn.value());
  }
  nic_.dma().scatter(std::span(map.pieces.data(), map.count), p.payload, std::move(frame), qp.qpn.value());
  qp.recv_offset = offset + len;
  if (ends) {
    if (p.fields.ieth) nic_.translation().invalidate_rkey(p.fields.ieth->rkey);
    complete_recv(qp, p, WcOpcode::Recv, qp.recv_offset);
  }
  return Verdict::Done;
}

bool Responder::execute_write(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame, bool starts,
                              bool ends) {
  const Psn psn(p.fields.psn);
  if (starts) {
    uint64_t host = 0;
    const auto& r = *p.fields.reth;
    if (!(qp.access_flags & kAccessRemoteWrite) ||
        nic_.translation().check_remote(r.rkey, qp.pd, r.va, r.dma_length, kAccessRemoteWrite, host) !=
            AccessCheck::Ok) {
      class_c_error(qp, NakCode::RemoteAccessError, psn);
      return false;
    }
    qp.write_addr = host;
    qp.write_remaining = r.dma_length;
    qp.write_length = r.dma_length;
  }
  const uint32_t len = p.fields.payload_length;
  if (len > qp.write_remaining || (ends && len != qp.write_remaining)) {
    class_c_error(qp, NakCode::InvalidRequest, psn);
    return false;
  }
  const DmaPiece piece{qp.write_addr, 0, len};
  if (len > 0) nic_.dma().scatter(std::span(&piece, 1), p.payload, std::move(frame), qp.qpn.value());
  qp.write_addr += len;
  qp.write_remaining -= len;
  if (ends && p.fields.imm) complete_recv(qp, p, WcOpcode::RecvRdmaWithImm, qp.write_length);
  return true;
}

bool Responder::queue_read(QpContext& qp, const packet::ParsedPacket& p) {
  const Psn psn(p.fields.psn);
  const auto& r = *p.fields.reth;
  uint64_t host = 0;
  if (!(qp.access_flags & kAccessRemoteRead) ||
      nic_.translation().check_remote(r.rkey, qp.pd, r.va, r.dma_length, kAccessRemoteRead, host) != AccessCheck::Ok) {
    class_c_error(qp, NakCode::RemoteAccessError, psn);
    return false;
  }
  if (qp.responses_queued >= qp.max_dest_rd_atomic) {  // more than IRD outstanding
    class_c_error(qp, NakCode::InvalidRequest, psn);
    return false;
  }
  ResponseJob job;
  job.qpn = qp.qpn.value();
  job.host_addr = host;
  job.length = r.dma_length;
  job.first_psn = psn;
  job.packets = std::max<uint32_t>(1, (r.dma_length + qp.path_mtu - 1) / qp.path_mtu);
  job.msn = qp.msn;
  ++qp.responses_queued;
  responses_.push_back(job);
  resume();
  return true;
}

const AtomicReplay* Responder::replayed_atomic(const QpContext& qp, Psn psn) const {
  for (const AtomicReplay& r : qp.atomic_replay)
    if (r.valid && r.psn == psn) return &r;
  return nullptr;
}

Responder::Verdict Responder::start_atomic(QpContext& qp, const packet::ParsedPacket& p) {
  const Psn psn(p.fields.psn);
  const auto& a = *p.fields.atomic_eth;
  if ((a.va & 7) != 0) {  // atomics need natural alignment
    class_c_error(qp, NakCode::InvalidRequest, psn);
    return Verdict::Done;
  }
  uint64_t host = 0;
  if (!(qp.access_flags & kAccessRemoteAtomic) ||
      nic_.translation().check_remote(a.rkey, qp.pd, a.va, 8, kAccessRemoteAtomic, host) != AccessCheck::Ok) {
    class_c_error(qp, NakCode::RemoteAccessError, psn);
    return Verdict::Done;
  }
  if (qp.responses_queued >= qp.max_dest_rd_atomic) {
    class_c_error(qp, NakCode::InvalidRequest, psn);
    return Verdict::Done;
  }
  atomic_.qpn = qp.qpn.value();
  atomic_.psn = psn;
  atomic_.host_addr = host;
  atomic_.compare_swap = p.fields.opcode == packet::Opcode::RcCompareSwap;
  atomic_.swap_add = a.swap_add;
  atomic_.compare = a.compare;
  ++qp.responses_queued;
  ++counters_.atomics;
  // Read, modify, write while the receive pipeline waits: the atomic is atomic
  // with respect to every other request this NIC executes.
  nic_.dma().read(host, atomic_.value, this, 0, ReadMode::Now);
  return Verdict::Wait;
}

void Responder::queue_atomic_answer(QpContext& qp, Psn psn, uint64_t original) {
  ResponseJob job;
  job.qpn = qp.qpn.value();
  job.atomic = true;
  job.first_psn = psn;
  job.atomic_original = original;
  job.msn = qp.msn;
  responses_.push_back(job);
  resume();
}

void Responder::dma_done(uint64_t, bool ok) {
  QpContext* qp = nic_.qp(atomic_.qpn);
  if (qp != nullptr && ok) {
    uint64_t orig = 0;
    std::memcpy(&orig, atomic_.value.data(), 8);
    const uint64_t next = atomic_.compare_swap ? (orig == atomic_.compare ? atomic_.swap_add : orig)
                                               : orig + atomic_.swap_add;
    std::array<std::byte, 8> bytes;
    std::memcpy(bytes.data(), &next, 8);
    nic_.dma().write_small(atomic_.host_addr, bytes, nullptr, 0, atomic_.qpn);
    qp->atomic_replay[qp->atomic_replay_next++ % qp->atomic_replay.size()] = AtomicReplay{atomic_.psn, orig, true};
    qp->epsn = atomic_.psn + 1;
    qp->msn = (qp->msn + 1) & 0xFFFFFF;
    qp->nak_outstanding = false;
    queue_atomic_answer(*qp, atomic_.psn, orig);  // counted in responses_queued at start_atomic
  } else if (qp != nullptr) {
    --qp->responses_queued;
    nak(*qp, NakCode::RemoteOperationalError, atomic_.psn);
  }
  nic_.rx_pipeline().resume(atomic_.qpn);
}

void Responder::release_reordered(QpContext& qp) {
  // Packets now behind the expected PSN are duplicates; the expected one, if
  // kept, goes back through the receive pipeline next.
  while (!qp.reorder.empty()) {
    auto it = qp.reorder.begin();
    const int32_t d = Psn::distance(qp.epsn, Psn(it->first));
    if (d < 0) {
      qp.reorder.erase(it);
      continue;
    }
    if (d == 0) {
      nic_.rx_pipeline().reinject(std::move(it->second));
      qp.reorder.erase(it);
    } else if (!qp.nak_outstanding) {
      // Another gap before the next kept packet: ask for it too.
      nak(qp, NakCode::PsnSequenceError, qp.epsn);
    }
    return;
  }
}

void Responder::recv_wqes_arrived(uint32_t qpn) { nic_.rx_pipeline().resume(qpn); }

void Responder::resume() {
  if (!responses_.empty() && !respond_.scheduled())
    nic_.scheduler().schedule(respond_, std::max(nic_.now(), next_free_));
}

void Responder::cancel_responses_from(QpContext& qp, Psn psn) {
  for (size_t i = 0; i < responses_.size(); ++i) {
    ResponseJob& job = responses_[i];
    if (job.qpn != qp.qpn.value() || job.cancelled || Psn::distance(psn, job.first_psn + job.packets) <= 0) continue;
    job.cancelled = true;
    if (qp.responses_queued > 0) --qp.responses_queued;
  }
}

void Responder::step_responses() {
  while (!responses_.empty()) {
    ResponseJob& job = responses_.front();
    QpContext* qp = nic_.qp(job.qpn);
    if (job.cancelled || qp == nullptr || qp->state == QpState::Err || qp->state == QpState::Reset) {
      responses_.pop_front();
      continue;
    }
    if (!nic_.tx_pipeline().has_room(qp->path_mtu + 128)) return;  // resumed when room frees
    packet::PacketFields f = nic_.packet_template(*qp);
    const uint32_t i = job.next_packet;
    const uint32_t offset = i * qp->path_mtu;
    uint32_t len = 0;
    if (job.atomic) {
      f.opcode = packet::Opcode::RcAtomicAcknowledge;
      f.atomic_ack_eth = packet::AtomicAckEthFields{job.atomic_original};
    } else {
      len = std::min(qp->path_mtu, job.length - std::min(job.length, offset));
      const Position pos = job.packets == 1 ? Position::Only
                           : i == 0 ? Position::First
                           : i + 1 == job.packets ? Position::Last : Position::Middle;
      static constexpr packet::Opcode kRead[] = {packet::Opcode::RcRdmaReadResponseOnly,
                                                 packet::Opcode::RcRdmaReadResponseFirst,
                                                 packet::Opcode::RcRdmaReadResponseMiddle,
                                                 packet::Opcode::RcRdmaReadResponseLast,
                                                 packet::Opcode::RcRdmaReadResponseOnly};
      f.opcode = kRead[static_cast<size_t>(pos)];
      ++counters_.read_responses;
    }
    if (packet::opcode_info(f.opcode).has(packet::Hdr::Aeth)) f.aeth = packet::AethFields{aeth_ack(), job.msn};
    f.psn = (job.first_psn + i).value();
    f.payload_length = len;
    packet::derive_fields(f);
    fabric::Frame frame = nic_.frame_pool().acquire(packet::frame_length(f));
    const auto layout = packet::write_headers(f, frame.bytes());
    if (len > 0 && nic_.config().elide_payload) frame.elide_from(layout->payload_offset);
    frame.meta().priority = qp->remote.sl;
    frame.meta().created = nic_.now();
    const DmaPiece piece{job.host_addr + offset, 0, len};
    const uint32_t qpn = job.qpn;
    if (++job.next_packet >= job.packets) {
      responses_.pop_front();
      if (qp->responses_queued > 0) --qp->responses_queued;
    }
    nic_.tx_pipeline().submit(std::move(frame), *layout, std::span(&piece, len > 0 ? 1 : 0), qpn, TxOrigin::Response);
    next_free_ = nic_.now() + nic_.cycles(nic_.params().responder_cycles_per_packet);
    if (!responses_.empty() && !respond_.scheduled() && nic_.tx_pipeline().has_room(qp->path_mtu + 128))
      nic_.scheduler().schedule(respond_, next_free_);
    return;
  }
}

namespace {
// The message a connected QP's responder is in the middle of: a SEND has placed
// its FIRST (recv_offset moved), a WRITE its FIRST (bytes still to come).
Operation in_progress(const QpContext& qp) {
  if (qp.recv_offset != 0) return Operation::Send;
  if (qp.write_remaining != 0) return Operation::RdmaWrite;
  return Operation::None;
}
}  // namespace

bool Responder::sequence_ok(const QpContext& qp, const packet::OpcodeInfo& info) {
  const bool continues = info.position == Position::Middle || info.position == Position::Last;
  const Operation current = in_progress(qp);
  if (current == Operation::None) return !continues;
  return continues && info.operation == current;
}

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
  const bool ends = info.position == Position::Last || info.position == Position::Only;
  const bool starts = info.position == Position::First || info.position == Position::Only;

  if (qp.type == QpType::Ud) {
    if (!p.fields.deth || p.fields.deth->qkey != qp.qkey) {
      ++counters_.dropped;
      return Verdict::Done;
    }
  } else if (rc) {
    const int32_t d = Psn::distance(qp.epsn, psn);
    if (d < 0) {  // duplicate: executed before
      ++counters_.duplicates;
      // The requester went back to this PSN: what is still queued from here on
      // is asked for again and answered again, in order, so it is not sent now.
      if (info.operation == Operation::RdmaReadRequest || info.operation == Operation::Atomic)
        cancel_responses_from(qp, psn);
      if (info.operation == Operation::RdmaReadRequest) {
        queue_read(qp, p);  // READs are executed again
      } else if (info.operation == Operation::Atomic) {
        if (const AtomicReplay* r = replayed_atomic(qp, psn)) {  // atomics are answered, not executed again
          ++qp.responses_queued;
          queue_atomic_answer(qp, psn, r->original);
        }
      } else {
        send_ack(qp, aeth_ack(), qp.epsn - 1);
      }
      return Verdict::Done;
    }
    if (d > 0) {  // a gap: NAK once; drop (go-back-N) or keep for later (selective repeat)
      ++counters_.out_of_sequence;
      if (nic_.params().selective_repeat != 0 && static_cast<uint32_t>(d) < nic_.params().reorder_window_packets &&
          qp.reorder.size() < nic_.params().reorder_window_packets) {
        qp.reorder.emplace(psn.value(), std::move(frame));
        // Each missing PSN before this one is asked for once.
        if (!qp.nak_outstanding) nak(qp, NakCode::PsnSequenceError, qp.epsn);
        return Verdict::Done;
      }
      nak(qp, NakCode::PsnSequenceError, qp.epsn);
      return Verdict::Done;
    }
  } else if (psn != qp.epsn) {  // UC: a lost packet drops the message in progress
    qp.epsn = psn;
    qp.recv_offset = 0;
    qp.write_remaining = 0;
    if (!starts) {
      ++qp.epsn;
      ++counters_.out_of_sequence;
      return Verdict::Done;
    }
  }

  // The opcode sequence check: after a FIRST or MIDDLE only a MIDDLE or LAST of
  // the same operation, otherwise only a FIRST or ONLY. RC: an invalid request
  // (executing a SEND MIDDLE with no SEND in progress would complete a receive
  // WQE never taken). UC: the packet is dropped, and a FIRST or ONLY abandons
  // the message in progress and starts its own.
  if (qp.type != QpType::Ud && !sequence_ok(qp, info)) {
    ++counters_.dropped;
    ++counters_.bad_opcode_sequence;
    if (rc) {
      class_c_error(qp, NakCode::InvalidRequest, psn);
      return Verdict::Done;
    }
    if (!starts) {
      ++qp.epsn;
      return Verdict::Done;
    }
    qp.recv_offset = 0;
    qp.write_remaining = 0;
  }

  // A message that completes into a receive WQE needs one before anything is written.
  const bool consumes_wqe =
      info.operation == Operation::Send || (info.operation == Operation::RdmaWrite && p.fields.imm.has_value());
  if (consumes_wqe && (info.operation == Operation::Send ? starts : ends)) {
    if (need_recv_wqe(qp) == Verdict::Stall) return Verdict::Stall;
    if (recv_queue(qp).empty()) {
      ++counters_.rnr_naks;
      ++counters_.dropped;
      if (rc) {
        qp.nak_outstanding = true;
        send_ack(qp, aeth_rnr_nak(qp.min_rnr_timer), psn);
      }
      return Verdict::Done;
    }
  }

  uint32_t psns = 1;  // PSNs this request takes
  switch (info.operation) {
    case Operation::Send: {
      const Verdict v = execute_send(qp, p, frame, ends);
      if (v == Verdict::Wait) return Verdict::Done;  // failed and the QP broke
      break;
    }
    case Operation::RdmaWrite:
      if (!execute_write(qp, p, frame, starts, ends)) return Verdict::Done;
      break;
    case Operation::RdmaReadRequest:
      if (!rc || !queue_read(qp, p)) return Verdict::Done;
      psns = responses_.back().packets;
      break;
    case Operation::Atomic:
      if (!rc) return Verdict::Done;
      return start_atomic(qp, p);  // advances the QP when the atomic is done
    default:
      class_c_error(qp, NakCode::InvalidRequest, psn);
      return Verdict::Done;
  }
  // Its completion found the CQ overrun and broke the QP: nothing is acknowledged.
  if (qp.state == QpState::Err) return Verdict::Done;

  if (info.operation == Operation::Send || info.operation == Operation::RdmaWrite)
    qp.payload_bytes_placed += p.fields.payload_length;
  qp.nak_outstanding = false;
  qp.epsn = psn + psns;
  if (ends) qp.msn = (qp.msn + 1) & 0xFFFFFF;
  if (!qp.reorder.empty()) release_reordered(qp);
  if (info.operation == Operation::RdmaReadRequest) {
    responses_.back().msn = qp.msn;  // the responses acknowledge this request
    return Verdict::Done;
  }
  if (rc) {
    ++qp.unacked_packets;
    if (p.fields.ack_req || qp.unacked_packets >= nic_.params().ack_coalesce_packets) send_ack(qp, aeth_ack(), psn);
  }
  return Verdict::Done;
}

}  // namespace rnicsim::nic
