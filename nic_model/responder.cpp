#include "nic_model/responder.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

namespace rnicsim::nic {

using packet::Operation;
using packet::Position;

namespace {
enum class Outcome : uint8_t { Ok, Drop, Stall, Wait };
constexpr uint32_t kUdGrhBytes = 40;

// What a UD receive is told of the packet's L3 header, by link (IBTA 11.4.1.2,
// RoCEv2 annex A17.4.5): where in the 40-byte GRH area the header goes, how far
// past l3_offset it starts in the frame (an IB GRH follows the 8-byte LRH),
// and its length. On RoCE the CQE's SL is the packet type, as mlx5 reports it
// (bit 3: a UDP header; bits 2:0: 1 IPv6, 2 IPv4): UCX's UD transport reads it
// to find the destination address in the area. On IB the SL is the LRH's.
struct UdL3 {
  uint8_t area_offset, frame_skip, bytes;
  std::optional<uint8_t> roce_sl;
};
constexpr UdL3 kUdL3[] = {
    {20, 0, 20, 0x8 | 0x2},      // RoceV2Ipv4: the IPv4 header in the area's last 20 bytes
    {0, 0, 40, 0x8 | 0x1},       // RoceV2Ipv6
    {0, 0, 0, std::nullopt},     // IbLocal: no GRH, nothing written
    {0, 8, 40, std::nullopt},    // IbGlobal
};
static_assert(static_cast<int>(packet::LinkKind::RoceV2Ipv4) == 0 && static_cast<int>(packet::LinkKind::IbGlobal) == 3);
constexpr const UdL3& ud_l3(packet::LinkKind k) { return kUdL3[static_cast<int>(k)]; }
}  // namespace

Responder::Responder(NicContext& ctx)
    : ctx_(ctx), units_(ctx.params().responder_units, this), bucket_locked_(std::max(ctx.params().atomic_buckets, 1u)) {}

// Every answer of a QP leaves in PSN order (IBTA 9.7.5.1.1): an ACK or NAK
// behind READ responses or an atomic's answer still queued waits for them,
// or the requester takes the READ as lost (an ACK beyond it) and asks again.
void Responder::send_ack(QpContext& qp, Syndrome syndrome, Psn psn) {
  if (qp.responses_queued > 0 || qp.acks_queued > 0) {
    ++qp.acks_queued;
    queue_answer(qp, {.first_psn = psn, .ack = true, .syndrome = syndrome});
    ++counters_.acks_sent;
    qp.unacked_packets = 0;
    return;
  }
  packet::PacketFields f = ctx_.packet_template(qp);
  f.opcode = packet::Opcode::RcAcknowledge;
  f.psn = psn;
  f.aeth = packet::AethFields{syndrome, qp.msn.value()};
  packet::derive_fields(f);
  fabric::Frame frame = ctx_.pool.acquire(packet::frame_length(f));
  if (!packet::build(f, {}, frame.bytes())) return;
  frame.meta().priority = ctx_.egress_priority(qp);
  frame.meta().created = ctx_.now();
  ports_.wire->transmit(std::move(frame));
  ++counters_.acks_sent;
  qp.unacked_packets = 0;
}

void Responder::nak(QpContext& qp, NakCode code, Psn psn) {
  if (code == NakCode::RemoteAccessError) ++counters_.access_errors;
  else if (code != NakCode::PsnSequenceError) ++counters_.invalid_requests;
  if (qp.type != QpType::Rc || qp.nak_outstanding) return;
  outstanding_nak(qp, psn);
  if (code == NakCode::PsnSequenceError) {
    ++counters_.sequence_naks;
    qp.gap_nak = true;
    arm_nak_timer(qp);
  }
  send_ack(qp, Syndrome::nak(code), psn);
}

void Responder::outstanding_nak(QpContext& qp, Psn highest) {
  qp.nak_outstanding = true;
  qp.gap_nak = false;
  qp.nak_highest = highest;
}

void Responder::arm_nak_timer(QpContext& qp) {
  const sim::Duration interval = ctx_.params().nak_repeat_interval;
  if (!qp.nak_timer || interval <= sim::Duration::zero()) return;
  ctx_.scheduler().reschedule(*qp.nak_timer,
                              ctx_.now() + interval * (int64_t{1} << std::min<uint8_t>(qp.nak_repeats, 20)));
}

void Responder::on_nak_timer(QpContext& qp) {
  if (!qp.nak_outstanding || !qp.gap_nak || qp.state == QpState::Err || qp.state == QpState::Reset) return;
  qp.nak_outstanding = false;
  ++qp.nak_repeats;
  ++counters_.repeated_naks;
  nak(qp, NakCode::PsnSequenceError, qp.epsn);
}

void Responder::sequence_nak(QpContext& qp, Psn seen) {
  if (!qp.nak_outstanding) {
    qp.nak_repeats = 0;  // a new gap
  } else {
    // A packet below the highest one seen since the NAK is the requester going
    // back, and the expected PSN was not in front of it: that resend was lost.
    // (A NAK lost on its way is the NAK timer's.)
    const bool went_back_past_it = Psn::distance(seen, qp.nak_highest) > 0;
    if (Psn::distance(qp.nak_highest, seen) > 0) qp.nak_highest = seen;
    if (!went_back_past_it) return;
    qp.nak_outstanding = false;
    ++counters_.repeated_naks;
  }
  nak(qp, NakCode::PsnSequenceError, qp.epsn);
  if (qp.nak_outstanding) qp.nak_highest = seen;  // RC
}

void Responder::class_c_error(QpContext& qp, NakCode code, Psn psn) {
  nak(qp, code, psn);
  if (qp.type != QpType::Rc) return;
  ports_.errors->async_event(code == NakCode::RemoteAccessError ? AsyncEvent::QpAccessErr : AsyncEvent::QpReqErr,
                             qp.qpn);
  ports_.errors->qp_fatal(qp, WcStatus::WrFlushErr);
}

// A QP on an SRQ reads the SRQ until a message takes a WQE from it
// (take_recv_wqe); from then to the message's end the WQE is the QP's own.
sim::RingQueue<RecvWqe>& Responder::recv_queue(QpContext& qp) {
  if (qp.uses_srq() && qp.recv_wqes.empty()) {
    if (SrqContext* s = ctx_.tables.srq(qp.srq)) return s->wqes;
  }
  return qp.recv_wqes;
}

// A message's first packet takes the SRQ's next WQE for its QP, so that a
// message of another QP on the same SRQ, arriving between its packets, takes
// the one after (IBTA 10.2.9.4: the WQE is the QP's until it completes). The
// SRQ's limit counts what is left on it.
void Responder::take_recv_wqe(QpContext& qp) {
  if (!qp.uses_srq() || !qp.recv_wqes.empty()) return;
  SrqContext* srq = ctx_.tables.srq(qp.srq);
  if (srq == nullptr || srq->wqes.empty()) return;
  qp.recv_wqes.push_back(srq->wqes.pop_front());
  ++srq->consumed;
  // SRQ limit: armed once, fires when fewer WQEs than the limit remain posted.
  if (srq->limit != 0 && srq->ring.producer - srq->consumed < srq->limit) {
    srq->limit = 0;
    ports_.errors->async_event(AsyncEvent::SrqLimitReached, srq->srqn);
  }
}

Responder::Verdict Responder::need_recv_wqe(QpContext& qp) {
  if (!recv_queue(qp).empty()) return Verdict::Done;
  SrqContext* srq = qp.uses_srq() ? ctx_.tables.srq(qp.srq) : nullptr;
  WorkRing& ring = srq != nullptr ? srq->ring : qp.rq;
  const WorkQueue queue = srq != nullptr ? WorkQueue::srq(srq->srqn) : WorkQueue::recv(qp.qpn);
  const bool fetching = ports_.fetch->recv_fetch_pending(queue);
  if (ring.fetched == ring.producer && !fetching) read_doorbell_record(queue, ring);
  if (ring.fetched < ring.producer || fetching) {
    if (ring.fetched < ring.producer) ports_.fetch->kick(queue);
    return Verdict::Stall;
  }
  return Verdict::Done;  // none posted: the caller answers RNR
}

// Receives posted but not rung yet are in the record. Its read is taken as part
// of the WQE fetch that follows (one PCIe read fewer than hardware's).
void Responder::read_doorbell_record(WorkQueue queue, WorkRing& ring) {
  if (records_ == nullptr) return;
  const std::optional<uint64_t> producer = records_->recv_producer(queue);
  if (!producer || *producer <= ring.producer) return;
  ring.producer = *producer;
  ++counters_.record_reads;
}

void Responder::consume_recv_wqe(QpContext& qp) {
  take_recv_wqe(qp);
  qp.recv_wqes.pop_front();
  qp.recv_offset = 0;
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
  c.qp_num = qp.qpn;
  c.src_qp = p.fields.deth ? p.fields.deth->src_qp : qp.dest_qpn;
  c.slid = p.fields.slid;
  c.sl = qp.type == QpType::Ud ? ud_l3(p.layout.link).roce_sl.value_or(p.fields.lrh_sl) : p.fields.lrh_sl;
  if (p.fields.imm) {
    c.wc_flags |= kWcWithImm;
    c.imm_data = __builtin_bswap32(*p.fields.imm);  // CQEs keep immediate data in network order
  }
  if (p.fields.ieth) {
    c.wc_flags |= kWcWithInv;
    c.imm_data = p.fields.ieth->rkey.value();
  }
  if (qp.type == QpType::Ud && p.layout.link != packet::LinkKind::IbLocal) c.wc_flags |= kWcGrh;
  ports_.completions->post(qp, qp.recv_cq, c, p.fields.solicited);
}

Responder::Verdict Responder::execute_send(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame,
                                           bool ends) {
  const RecvWqe& w = recv_queue(qp).front();
  const bool ud = qp.type == QpType::Ud;
  // UD receive buffers start with 40 bytes for the GRH (IBTA 11.4.1.2).
  const uint32_t offset = ud ? kUdGrhBytes : qp.recv_offset;
  const uint32_t len = p.fields.payload_length;
  SgeMap map;
  const AccessCheck c = ctx_.translation.map_sges(std::span(w.sge.data(), std::min<uint32_t>(w.num_sge, kMaxSge)),
                                                    qp.pd, offset, len, kAccessLocalWrite, map);
  SgeMap grh_map;
  const AccessCheck g = ud ? ctx_.translation.map_sges(std::span(w.sge.data(), std::min<uint32_t>(w.num_sge, kMaxSge)),
                                                         qp.pd, 0, kUdGrhBytes, kAccessLocalWrite, grh_map)
                           : AccessCheck::Ok;
  if (c != AccessCheck::Ok || g != AccessCheck::Ok) {
    const bool short_buffer = c == AccessCheck::TooShort || g == AccessCheck::TooShort;
    complete_recv(qp, p, WcOpcode::Recv, 0, short_buffer ? WcStatus::LocLenErr : WcStatus::LocProtErr);
    if (ud) return Verdict::Done;
    // A receive buffer too short is the requester's error (Invalid Request); a
    // protection error on it is the responder's own (Remote Operational Error),
    // as ConnectX reports them.
    nak(qp, short_buffer ? NakCode::InvalidRequest : NakCode::RemoteOperationalError, p.fields.psn);
    ports_.errors->qp_fatal(qp, WcStatus::WrFlushErr);
    return Verdict::Wait;  // nothing more for this QP; the caller must not advance it
  }
  if (ud) {
    // The GRH area, laid out as kUdL3 says.
    std::array<std::byte, kUdGrhBytes> grh{};
    const UdL3& l3 = ud_l3(p.layout.link);
    std::memcpy(grh.data() + l3.area_offset, frame.bytes().data() + p.layout.l3_offset + l3.frame_skip, l3.bytes);
    ctx_.dma.scatter(std::span(grh_map.pieces.data(), grh_map.count), grh, fabric::Frame(), qp.qpn);
  }
  ctx_.dma.scatter(std::span(map.pieces.data(), map.count), p.payload, std::move(frame), qp.qpn);
  qp.recv_offset = offset + len;
  if (ends) {
    if (p.fields.ieth) ctx_.translation.invalidate_rkey(p.fields.ieth->rkey);
    complete_recv(qp, p, WcOpcode::Recv, qp.recv_offset);
  }
  return Verdict::Done;
}

// A zero-length READ or WRITE names no memory: its R_Key and VA are not
// checked, as the IBTA specifies, and programs rely on it (UCX flushes an RC QP with a
// zero-byte WRITE whose R_Key is 0). The QP must still allow the operation.
bool Responder::remote_access_ok(const QpContext& qp, const packet::RethFields& r, uint32_t needed,
                                 uint64_t& host) const {
  if (!(qp.access_flags & needed)) return false;
  if (r.dma_length == 0) return true;
  return ctx_.translation.check_remote(r.rkey, qp.pd, r.va, r.dma_length, needed, host) == AccessCheck::Ok;
}

bool Responder::execute_write(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame, bool starts,
                              bool ends) {
  const Psn psn(p.fields.psn);
  if (starts) {
    uint64_t host = 0;
    const auto& r = *p.fields.reth;
    if (!remote_access_ok(qp, r, kAccessRemoteWrite, host)) {
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
  if (len > 0) ctx_.dma.scatter(std::span(&piece, 1), p.payload, std::move(frame), qp.qpn);
  qp.write_addr += len;
  qp.write_remaining -= len;
  if (ends && p.fields.imm) complete_recv(qp, p, WcOpcode::RecvRdmaWithImm, qp.write_length);
  return true;
}

// Room for one more READ or atomic answer within the IRD. A READ executed
// again for a duplicate whose answer the requester has since had (it went back
// twice, and got the first answers before the second request) holds a slot
// the requester no longer counts: the oldest such answer gives its slot up, as
// a responder's ring of IRD answer slots overwrites its oldest.
bool Responder::answer_slot(QpContext& qp) {
  if (qp.responses_queued < qp.max_dest_rd_atomic) return true;
  sim::RingQueue<ResponseJob>& responses = answers(qp);
  for (size_t i = 0; i < responses.size(); ++i) {
    ResponseJob& job = responses[i];
    if (job.qpn != qp.qpn || job.cancelled || job.ack || !job.replay) continue;
    job.cancelled = true;
    --qp.responses_queued;
    return true;
  }
  return false;
}

bool Responder::queue_read(QpContext& qp, const packet::ParsedPacket& p, bool replay) {
  const Psn psn(p.fields.psn);
  const auto& r = *p.fields.reth;
  uint64_t host = 0;
  if (!remote_access_ok(qp, r, kAccessRemoteRead, host)) {
    class_c_error(qp, NakCode::RemoteAccessError, psn);
    return false;
  }
  if (!answer_slot(qp)) {  // more than IRD outstanding
    class_c_error(qp, NakCode::InvalidRequest, psn);
    return false;
  }
  ++qp.responses_queued;
  queue_answer(qp, {.host_addr = host,
                    .length = r.dma_length,
                    .first_psn = psn,
                    .packets = std::max<uint32_t>(1, (r.dma_length + qp.path_mtu - 1) / qp.path_mtu),
                    .replay = replay});
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
      ctx_.translation.check_remote(a.rkey, qp.pd, a.va, 8, kAccessRemoteAtomic, host) != AccessCheck::Ok) {
    class_c_error(qp, NakCode::RemoteAccessError, psn);
    return Verdict::Done;
  }
  if (!answer_slot(qp)) {
    class_c_error(qp, NakCode::InvalidRequest, psn);
    return Verdict::Done;
  }
  // Read, modify, write with the bucket locked: the atomic is atomic with
  // respect to every other on its bucket. The QP goes on at once; its answer
  // takes its place in the QP's answers now and leaves once the value is read.
  uint32_t tag = static_cast<uint32_t>(atomics_.size());
  if (free_atomics_.empty()) {
    atomics_.emplace_back();
  } else {
    tag = free_atomics_.back();
    free_atomics_.pop_back();
  }
  PendingAtomic& op = atomics_[tag];
  op = PendingAtomic{.qpn = qp.qpn, .psn = psn, .host_addr = host,
                     .compare_swap = p.fields.opcode == packet::Opcode::RcCompareSwap, .swap_add = a.swap_add,
                     .compare = a.compare, .bucket = bucket_of(a.va)};
  bucket_locked_[op.bucket] = true;
  ++qp.atomics_executing;
  ++qp.responses_queued;
  ++counters_.atomics;
  qp.epsn = qp.message_start = psn + 1;
  ++qp.msn;
  qp.nak_outstanding = false;
  queue_answer(qp, {.atomic = true, .first_psn = psn, .pending = true});
  ctx_.dma.read(host, op.value, this, tag, ReadMode::Now);
  return Verdict::Done;
}

void Responder::queue_atomic_answer(QpContext& qp, Psn psn, uint64_t original) {
  queue_answer(qp, {.atomic = true, .first_psn = psn, .atomic_original = original});
}

// Every answer of `qp` joins its unit's queue, behind all that are waiting, and
// carries the MSN of the moment it was queued.
void Responder::queue_answer(QpContext& qp, ResponseJob job) {
  job.qpn = qp.qpn;
  job.msn = qp.msn;
  Unit& unit = units_.of(qp.qpn);
  unit.responses.push_back(job);
  wake(unit);
}

void Responder::dma_done(uint64_t tag, bool ok) {
  const PendingAtomic op = atomics_[tag];
  free_atomics_.push_back(static_cast<uint32_t>(tag));
  bucket_locked_[op.bucket] = false;
  QpContext* qp = ctx_.qp(op.qpn);
  if (qp != nullptr && qp->atomics_executing > 0) --qp->atomics_executing;
  ResponseJob* job = qp != nullptr ? pending_answer(*qp, op.psn) : nullptr;
  if (qp != nullptr && ok) {
    uint64_t orig = 0;
    std::memcpy(&orig, op.value.data(), 8);
    const uint64_t next = op.compare_swap ? (orig == op.compare ? op.swap_add : orig) : orig + op.swap_add;
    std::array<std::byte, 8> bytes;
    std::memcpy(bytes.data(), &next, 8);
    ctx_.dma.write_small(op.host_addr, bytes, nullptr, 0, op.qpn);
    qp->atomic_replay[qp->atomic_replay_next++ % qp->atomic_replay.size()] = AtomicReplay{op.psn, orig, true};
    if (job != nullptr) {  // else a duplicate request cancelled it: the replay answers
      job->atomic_original = orig;
      job->pending = false;
    }
  } else if (job != nullptr) {
    job->cancelled = true;
    if (qp->responses_queued > 0) --qp->responses_queued;
  }
  if (job != nullptr) wake(units_.of(op.qpn));  // the answer, or those behind it, may go
  if (qp != nullptr && !ok) nak(*qp, NakCode::RemoteOperationalError, op.psn);
  ports_.receive->atomic_done();
}

// The answer of `qp`'s atomic of `psn` still waiting for its value, if queued.
ResponseJob* Responder::pending_answer(QpContext& qp, Psn psn) {
  sim::RingQueue<ResponseJob>& responses = answers(qp);
  for (size_t i = 0; i < responses.size(); ++i) {
    ResponseJob& job = responses[i];
    if (job.qpn == qp.qpn && job.atomic && job.pending && !job.cancelled && job.first_psn == psn) return &job;
  }
  return nullptr;
}

void Responder::release_reordered(QpContext& qp) {
  // Packets now behind the expected PSN are duplicates; the expected one, if
  // kept, goes back through the receive pipeline next.
  while (!qp.reorder.empty()) {
    auto it = qp.reorder.begin();
    const int32_t d = Psn::distance(qp.epsn, it->first);
    if (d < 0) {
      qp.reorder.erase(it);
      continue;
    }
    if (d == 0) {
      ports_.receive->reinject(std::move(it->second));
      qp.reorder.erase(it);
    } else {
      sequence_nak(qp, it->first);  // another gap before the next kept packet: ask for it too
    }
    return;
  }
}

void Responder::recv_wqes_arrived(std::optional<Qpn> qpn) { ports_.receive->resume(qpn); }

void Responder::room_available() {
  for (Unit& unit : units_) wake(unit);
}

void Responder::wake(Unit& unit) {
  if (!unit.responses.empty() && !unit.respond.scheduled())
    ctx_.scheduler().schedule(unit.respond, std::max(ctx_.now(), unit.next_free));
}

void Responder::cancel_responses_from(QpContext& qp, Psn psn) {
  sim::RingQueue<ResponseJob>& responses = answers(qp);
  for (size_t i = 0; i < responses.size(); ++i) {
    ResponseJob& job = responses[i];
    if (job.qpn != qp.qpn || job.cancelled || Psn::distance(psn, job.first_psn + job.packets) <= 0) continue;
    job.cancelled = true;
    if (!job.ack && qp.responses_queued > 0) --qp.responses_queued;
  }
}

void Responder::step_responses(Unit& unit) {
  sim::RingQueue<ResponseJob>& responses = unit.responses;
  while (!responses.empty()) {
    ResponseJob& job = responses.front();
    QpContext* qp = ctx_.qp(job.qpn);
    // A NAK still goes out from a QP it broke; answers do not.
    if (job.cancelled || qp == nullptr || qp->state == QpState::Reset || (qp->state == QpState::Err && !job.ack)) {
      if (qp != nullptr && job.ack) --qp->acks_queued;
      responses.pop_front();
      continue;
    }
    if (job.pending) return;  // an atomic's value is still being read: woken by dma_done
    if (!ports_.transmit->has_room(qp->path_mtu + 128)) return;  // resumed when room frees
    packet::PacketFields f = ctx_.packet_template(*qp);
    const uint32_t i = job.next_packet;
    const uint32_t offset = i * qp->path_mtu;
    uint32_t len = 0;
    if (job.ack) {
      f.opcode = packet::Opcode::RcAcknowledge;
    } else if (job.atomic) {
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
    if (packet::opcode_info(f.opcode).has(packet::Hdr::Aeth))
      f.aeth = packet::AethFields{job.ack ? job.syndrome : Syndrome::ack(), job.msn.value()};
    f.psn = job.first_psn + i;
    f.payload_length = len;
    packet::derive_fields(f);
    fabric::Frame frame = ctx_.pool.acquire(packet::frame_length(f));
    const auto layout = packet::write_headers(f, frame.bytes());
    if (len > 0 && ctx_.config.elide_payload) frame.elide_from(layout->payload_offset);
    frame.meta().priority = ctx_.egress_priority(*qp);
    frame.meta().created = ctx_.now();
    const DmaPiece piece{job.host_addr + offset, 0, len};
    const Qpn qpn = job.qpn;
    if (++job.next_packet >= job.packets) {
      if (job.ack) --qp->acks_queued;
      else if (qp->responses_queued > 0) --qp->responses_queued;
      responses.pop_front();
    }
    ports_.transmit->submit(std::move(frame), *layout, std::span(&piece, len > 0 ? 1 : 0), qpn, TxOrigin::Response,
                              ChunkRead{});
    unit.next_free = ctx_.now() + ctx_.cycles(ctx_.params().responder_cycles_per_packet);
    if (!responses.empty() && !unit.respond.scheduled() && ports_.transmit->has_room(qp->path_mtu + 128))
      ctx_.scheduler().schedule(unit.respond, unit.next_free);
    return;
  }
}

uint32_t Responder::bucket_of(uint64_t va) const { return static_cast<uint32_t>((va >> 3) % bucket_locked_.size()); }

// A request waits while an atomic of its QP executes (the atomic's write must
// land first), and an atomic while another one holds its bucket.
bool Responder::waits_for_atomic(const QpContext& qp, const packet::ParsedPacket& p) const {
  const auto& a = p.fields.atomic_eth;
  if (!a.has_value()) return qp.atomics_executing > 0;
  return bucket_locked_[bucket_of(a->va)];
}

// The steps of a request, in order, as rxe's responder has one function per
// state: each one either lets the request go on (nullopt) or ends it.
Responder::Verdict Responder::receive(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame) {
  using Step = std::optional<Verdict> (Responder::*)(Request&);
  static constexpr Step kSteps[] = {&Responder::check_state, &Responder::check_psn, &Responder::check_sequence,
                                    &Responder::check_resources, &Responder::execute, &Responder::acknowledge};
  if (waits_for_atomic(qp, p)) {  // kept, and tried again when an atomic is done
    ++counters_.atomic_waits;
    return Verdict::Wait;
  }
  ++counters_.requests;
  ++qp.rx_packets;
  const auto& info = packet::opcode_info(p.fields.opcode);
  Request r{qp, p, frame, info, p.fields.psn, info.position == Position::First || info.position == Position::Only,
            info.position == Position::Last || info.position == Position::Only};
  for (const Step step : kSteps)
    if (const std::optional<Verdict> v = (this->*step)(r)) return *v;
  return Verdict::Done;
}

std::optional<Responder::Verdict> Responder::check_state(Request& r) {
  const QpState s = r.qp.state;
  if (s != QpState::Reset && s != QpState::Init && s != QpState::Err) return std::nullopt;
  ++counters_.dropped;
  return Verdict::Done;
}

// The PSN check of the QP's service, a column of kQpTypes.
std::optional<Responder::Verdict> Responder::check_psn(Request& r) {
  using Check = std::optional<Verdict> (Responder::*)(Request&);
  static constexpr Check kByService[kQpTypeCount] = {&Responder::check_psn_rc, &Responder::check_psn_uc,
                                                     &Responder::check_qkey_ud};
  static_assert(kQpTypes[0].type == QpType::Rc && kQpTypes[1].type == QpType::Uc && kQpTypes[2].type == QpType::Ud);
  return (this->*kByService[column_of(r.qp.type)])(r);
}

std::optional<Responder::Verdict> Responder::check_qkey_ud(Request& r) {
  if (r.p.fields.deth && r.p.fields.deth->qkey == r.qp.qkey) return std::nullopt;
  ++counters_.dropped;
  return Verdict::Done;
}

std::optional<Responder::Verdict> Responder::check_psn_rc(Request& r) {
  const int32_t d = Psn::distance(r.qp.epsn, r.psn);
  if (d < 0) {
    duplicate(r);
    return Verdict::Done;
  }
  if (d == 0) return std::nullopt;
  // A gap: NAK once; drop (go-back-N), keep for later (selective repeat), or
  // drop the message in progress and ask for all of it (go-back-0).
  QpContext& qp = r.qp;
  ++counters_.out_of_sequence;
  const NicParams& params = ctx_.params();
  if (params.loss_recovery == LossRecovery::GoBack0 && qp.epsn != qp.message_start) {
    qp.epsn = qp.message_start;
    qp.take_back_payload(qp.message_bytes_placed);  // they will be placed again
    qp.message_bytes_placed = 0;
    qp.recv_offset = 0;
    qp.write_remaining = 0;
  }
  if (params.loss_recovery == LossRecovery::SelectiveRepeat && static_cast<uint32_t>(d) < params.reorder_window_packets &&
      qp.reorder.size() < params.reorder_window_packets) {
    qp.reorder.emplace(r.psn, std::move(r.frame));
    sequence_nak(qp, r.psn);  // each missing PSN before this one is asked for
    return Verdict::Done;
  }
  sequence_nak(qp, r.psn);
  return Verdict::Done;
}

// A request executed before: the requester went back to its PSN.
void Responder::duplicate(Request& r) {
  QpContext& qp = r.qp;
  const Operation op = r.info.operation;
  ++counters_.duplicates;
  // What is still queued from here on is asked for again and answered again,
  // in order, so it is not sent now.
  if (op == Operation::RdmaReadRequest || op == Operation::Atomic) cancel_responses_from(qp, r.psn);
  if (op == Operation::RdmaReadRequest) {
    queue_read(qp, r.p, /*replay=*/true);  // READs are executed again
  } else if (op == Operation::Atomic) {
    if (const AtomicReplay* a = replayed_atomic(qp, r.psn)) {  // atomics are answered, not executed again
      ++qp.responses_queued;
      queue_atomic_answer(qp, r.psn, a->original);
    }
  } else {
    send_ack(qp, Syndrome::ack(), qp.epsn - 1);
  }
}

// UC: a lost packet drops the message in progress.
std::optional<Responder::Verdict> Responder::check_psn_uc(Request& r) {
  QpContext& qp = r.qp;
  if (r.psn == qp.epsn) return std::nullopt;
  qp.epsn = r.psn;
  qp.recv_offset = 0;
  qp.write_remaining = 0;
  if (r.starts) return std::nullopt;
  ++qp.epsn;
  ++counters_.out_of_sequence;
  return Verdict::Done;
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

// After a FIRST or MIDDLE only a MIDDLE or LAST of the same operation, otherwise
// only a FIRST or ONLY. RC: an invalid request (a SEND MIDDLE with no SEND in
// progress would complete a receive WQE never taken). UC: the packet is
// dropped, and a FIRST or ONLY abandons the message in progress for its own.
std::optional<Responder::Verdict> Responder::check_sequence(Request& r) {
  QpContext& qp = r.qp;
  if (qp.type == QpType::Ud || sequence_ok(qp, r.info)) return std::nullopt;
  ++counters_.dropped;
  ++counters_.bad_opcode_sequence;
  if (qp.type == QpType::Rc) {
    class_c_error(qp, NakCode::InvalidRequest, r.psn);
    return Verdict::Done;
  }
  if (!r.starts) {
    ++qp.epsn;
    return Verdict::Done;
  }
  qp.recv_offset = 0;
  qp.write_remaining = 0;
  return std::nullopt;
}

// A message that completes into a receive WQE needs one before anything is written.
std::optional<Responder::Verdict> Responder::check_resources(Request& r) {
  QpContext& qp = r.qp;
  const Operation op = r.info.operation;
  const bool consumes_wqe = op == Operation::Send || (op == Operation::RdmaWrite && r.p.fields.imm.has_value());
  if (!consumes_wqe || !(op == Operation::Send ? r.starts : r.ends)) return std::nullopt;
  if (need_recv_wqe(qp) == Verdict::Stall) return Verdict::Stall;
  if (!recv_queue(qp).empty()) {
    take_recv_wqe(qp);
    return std::nullopt;
  }
  ++counters_.rnr_naks;
  ++counters_.dropped;
  if (qp.type == QpType::Rc) {
    outstanding_nak(qp, r.psn);
    send_ack(qp, Syndrome::rnr_nak(qp.min_rnr_timer), r.psn);
  }
  return Verdict::Done;
}

std::optional<Responder::Verdict> Responder::execute(Request& r) {
  QpContext& qp = r.qp;
  const bool rc = qp.type == QpType::Rc;
  switch (r.info.operation) {
    case Operation::Send:
      // Wait: it failed and the QP broke; the caller must not advance it.
      if (execute_send(qp, r.p, r.frame, r.ends) == Verdict::Wait) return Verdict::Done;
      break;
    case Operation::RdmaWrite:
      if (!execute_write(qp, r.p, r.frame, r.starts, r.ends)) return Verdict::Done;
      break;
    case Operation::RdmaReadRequest:
      if (!rc || !queue_read(qp, r.p)) return Verdict::Done;
      r.psns = answers(qp).back().packets;
      break;
    case Operation::Atomic:
      if (!rc) return Verdict::Done;
      return start_atomic(qp, r.p);  // advances the QP when the atomic is done
    default:
      class_c_error(qp, NakCode::InvalidRequest, r.psn);
      return Verdict::Done;
  }
  // Its completion found the CQ overrun and broke the QP: nothing is acknowledged.
  if (qp.state == QpState::Err) return Verdict::Done;
  return std::nullopt;
}

// The request is done: the QP expects the next PSN, and an ACK goes back when
// asked for or when enough packets wait for one.
std::optional<Responder::Verdict> Responder::acknowledge(Request& r) {
  QpContext& qp = r.qp;
  const Operation op = r.info.operation;
  if (op == Operation::Send || op == Operation::RdmaWrite) {
    qp.accept_payload(r.p.fields.payload_length);
    qp.message_bytes_placed += r.p.fields.payload_length;
  }
  qp.nak_outstanding = false;
  qp.epsn = r.psn + r.psns;
  if (r.ends) {
    qp.message_start = qp.epsn;
    qp.message_bytes_placed = 0;
  }
  if (r.ends) ++qp.msn;
  if (!qp.reorder.empty()) release_reordered(qp);
  if (op == Operation::RdmaReadRequest) {
    answers(qp).back().msn = qp.msn;  // the responses acknowledge this request
    return Verdict::Done;
  }
  if (qp.type == QpType::Rc) {
    ++qp.unacked_packets;
    // Go-back-0 acknowledges whole messages only: it may yet go back to the first packet.
    const bool may_ack = ctx_.params().loss_recovery != LossRecovery::GoBack0 || r.ends;
    if (may_ack && (r.p.fields.ack_req || qp.unacked_packets >= ctx_.params().ack_coalesce_packets))
      send_ack(qp, Syndrome::ack(), r.psn);
  }
  return Verdict::Done;
}

}  // namespace rnicsim::nic
