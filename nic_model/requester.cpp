#include "nic_model/requester.hpp"

#include <algorithm>
#include <cstring>


namespace rnicsim::nic {
namespace {

using packet::Opcode;
using packet::Position;

// Packet opcode of a work request at a position in its message, RC numbering.
// A UC opcode is the RC one in the UC transport's range (IBTA 9.2: bits 7-5
// name the transport, 000 RC and 001 UC; the operation bits are the same).
struct OpcodeRow {
  WrOpcode wr;
  Opcode first, middle, last, only;
};
constexpr OpcodeRow kOpcodes[] = {
    {WrOpcode::Send, Opcode::RcSendFirst, Opcode::RcSendMiddle, Opcode::RcSendLast, Opcode::RcSendOnly},
    {WrOpcode::SendWithImm, Opcode::RcSendFirst, Opcode::RcSendMiddle, Opcode::RcSendLastWithImmediate,
     Opcode::RcSendOnlyWithImmediate},
    {WrOpcode::SendWithInv, Opcode::RcSendFirst, Opcode::RcSendMiddle, Opcode::RcSendLastWithInvalidate,
     Opcode::RcSendOnlyWithInvalidate},
    {WrOpcode::RdmaWrite, Opcode::RcRdmaWriteFirst, Opcode::RcRdmaWriteMiddle, Opcode::RcRdmaWriteLast,
     Opcode::RcRdmaWriteOnly},
    {WrOpcode::RdmaWriteWithImm, Opcode::RcRdmaWriteFirst, Opcode::RcRdmaWriteMiddle,
     Opcode::RcRdmaWriteLastWithImmediate, Opcode::RcRdmaWriteOnlyWithImmediate},
    {WrOpcode::RdmaRead, Opcode::RcRdmaReadRequest, Opcode::RcRdmaReadRequest, Opcode::RcRdmaReadRequest,
     Opcode::RcRdmaReadRequest},
    {WrOpcode::AtomicCmpSwap, Opcode::RcCompareSwap, Opcode::RcCompareSwap, Opcode::RcCompareSwap,
     Opcode::RcCompareSwap},
    {WrOpcode::AtomicFetchAdd, Opcode::RcFetchAdd, Opcode::RcFetchAdd, Opcode::RcFetchAdd, Opcode::RcFetchAdd},
};
constexpr uint8_t kUcTransport = 0x20;

Opcode packet_opcode(QpType type, WrOpcode wr, Position pos) {
  if (type == QpType::Ud) return wr == WrOpcode::SendWithImm ? Opcode::UdSendOnlyWithImmediate : Opcode::UdSendOnly;
  for (const OpcodeRow& r : kOpcodes) {
    if (r.wr != wr) continue;
    const Opcode rc = pos == Position::First ? r.first : pos == Position::Middle ? r.middle
                    : pos == Position::Last ? r.last : r.only;
    return type == QpType::Uc ? static_cast<Opcode>(static_cast<uint8_t>(rc) | kUcTransport) : rc;
  }
  return Opcode::RcSendOnly;
}

bool reads_remote(WrOpcode wr) {
  return wr == WrOpcode::RdmaRead || wr == WrOpcode::AtomicCmpSwap || wr == WrOpcode::AtomicFetchAdd;
}
bool is_atomic(WrOpcode wr) { return wr == WrOpcode::AtomicCmpSwap || wr == WrOpcode::AtomicFetchAdd; }

uint32_t message_length(const SendWqe& w) {
  if (w.send_flags & kSendInline) return w.inline_len;
  uint32_t n = 0;
  for (uint32_t i = 0; i < std::min<uint32_t>(w.num_sge, kMaxSge); ++i) n += w.sge[i].length;
  return n;
}

}  // namespace

Requester::Requester(NicContext& ctx)
    : ctx_(ctx), units_(ctx.params().requester_units, this),
      pace_([this] { release_paced(); }, "requester.pace", ctx.actor()) {}

void Requester::accept_wqe(QpContext& qp, const SendWqe& wqe) {
  SendEntry e;
  e.wqe = wqe;
  e.length = message_length(wqe);
  e.signaled = qp.sq_sig_all || (wqe.send_flags & kSendSignaled);
  e.reads_remote = reads_remote(wqe.opcode);
  const uint32_t mtu = qp.path_mtu;
  e.packets = (qp.type == QpType::Ud || is_atomic(wqe.opcode)) ? 1 : std::max<uint32_t>(1, (e.length + mtu - 1) / mtu);
  e.first_psn = qp.assign_psn;
  qp.assign_psn = qp.assign_psn + e.packets;
  if (auto* t = ctx_.timeline) t->record({.kind = TimelineKind::WqeAccepted, .qpn = qp.qpn, .psn = e.first_psn,
                                            .count = e.packets, .wr_id = wqe.wr_id,
                                            .code = static_cast<uint8_t>(wqe.opcode), .flag = e.signaled,
                                            .start = ctx_.now()});
  if (qp.state == QpState::Err) {  // posted to (or fetched for) a broken QP
    ports_.completions->complete_send(qp, e, WcStatus::WrFlushErr);
    return;
  }
  WcStatus bad = WcStatus::Success;
  // Its slot bounds what a WQE can carry: more SGEs or inline bytes than that
  // were never in the ring.
  if (!carries(qp.type, wqe.opcode) || wqe.num_sge > slot_sges(qp.sq.stride)) bad = WcStatus::LocQpOpErr;
  else if ((wqe.send_flags & kSendInline) && (wqe.inline_len > slot_inline(qp.sq.stride) || e.reads_remote))
    bad = WcStatus::LocQpOpErr;
  else if (qp.type == QpType::Ud && e.length > qp.path_mtu) bad = WcStatus::LocLenErr;
  else if (is_atomic(wqe.opcode) && (e.length != 8 || (wqe.remote_addr & 7) != 0)) bad = WcStatus::LocLenErr;
  if (bad != WcStatus::Success) {
    // The WQE cannot be executed: it completes in error and the QP breaks.
    ports_.completions->complete_send(qp, e, bad);
    ports_.errors->qp_fatal(qp, WcStatus::WrFlushErr);
    return;
  }
  qp.send_entries.push_back(e);
  kick(qp);
}

bool Requester::can_send(const QpContext& qp) const {
  if (qp.state != QpState::Rts || qp.rnr_waiting) return false;
  if (!qp.resend.empty()) return true;
  if (qp.next_entry >= qp.send_entries.size()) return false;
  if (qp.type != QpType::Rc) return true;
  const SendEntry& e = qp.send_entries[qp.next_entry];
  if (e.reads_remote && qp.rd_atomic_inflight >= qp.max_rd_atomic) return false;  // ORD
  // Fence: wait until every earlier READ and atomic has its answer.
  if ((e.wqe.send_flags & kSendFence) && qp.rd_atomic_inflight > 0) return false;
  return Psn::distance(qp.una, qp.next_psn) < static_cast<int32_t>(ctx_.params().max_inflight_psns);
}

void Requester::kick(QpContext& qp) {
  Unit& unit = units_.of(qp.qpn);
  if (!qp.in_requester_list && !qp.cc_paced && can_send(qp)) {
    qp.in_requester_list = true;
    unit.ready.push_back(qp.qpn);
  }
  wake(unit);
}

void Requester::room_available() {
  for (Unit& unit : units_) wake(unit);
}

void Requester::wake(Unit& unit) {
  if (unit.ready.empty() || unit.step.scheduled()) return;
  // A step only when the pipeline can take the first ready QP's packet: has_room()
  // remembers a refusal, and the pipeline's or the port's wake-up resumes us.
  if (const QpContext* qp = ctx_.qp(unit.ready.front());
      qp != nullptr && !ports_.transmit->has_room(qp->path_mtu + 128))
    return;
  ctx_.scheduler().schedule(unit.step, std::max(ctx_.now(), unit.next_free));
}

uint32_t Requester::requests_sent_from(const QpContext& qp, size_t entry, Psn psn) {
  uint32_t n = 0;
  for (size_t k = entry; k < qp.send_entries.size(); ++k) {
    const SendEntry& e = qp.send_entries[k];
    const Psn from = k == entry ? psn : e.first_psn;
    const int32_t sent = Psn::distance(from, qp.next_psn);  // this entry's PSNs and later ones, sent
    if (sent <= 0) break;
    n += e.reads_remote ? 1u : static_cast<uint32_t>(std::min(sent, Psn::distance(from, e.last_psn()) + 1));
  }
  return n;
}

void Requester::rewind(QpContext& qp, Psn psn) {
  for (size_t i = 0; i < qp.send_entries.size(); ++i) {
    const SendEntry& e = qp.send_entries[i];
    if (Psn::distance(e.first_psn, psn) < 0 || Psn::distance(psn, e.last_psn()) < 0) continue;
    // What still waits for the wire is taken back: only what was sent is sent again.
    const uint32_t withdrawn = ports_.transmit->withdraw(qp.qpn, ctx_.egress_priority(qp), psn);
    const uint32_t resent = static_cast<uint32_t>(std::max<int64_t>(0, int64_t{requests_sent_from(qp, i, psn)} - withdrawn));
    qp.retransmitted_packets += resent;
    ctx_.stats.retransmitted_packets += resent;
    if (auto* t = ctx_.timeline) t->record({.kind = TimelineKind::Retransmit, .qpn = qp.qpn, .psn = psn,
                                              .count = resent, .start = ctx_.now()});
    qp.next_entry = i;
    qp.next_packet = static_cast<uint32_t>(Psn::distance(e.first_psn, psn));
    qp.next_psn = psn;
    qp.read_ahead_left = 0;  // a chunk read ahead is not kept for packets sent again
    // READs and atomics from here on will be asked again.
    qp.rd_atomic_inflight = 0;
    for (size_t k = 0; k < i; ++k)
      if (!qp.send_entries[k].responses_complete()) ++qp.rd_atomic_inflight;
    kick(qp);
    return;
  }
}

void Requester::resend(QpContext& qp, Psn psn) {
  for (size_t i = 0; i < qp.resend.size(); ++i)
    if (qp.resend[i] == psn) return;  // already queued
  qp.resend.push_back(psn);
  if (auto* t = ctx_.timeline) t->record({.kind = TimelineKind::Retransmit, .qpn = qp.qpn, .psn = psn, .count = 1,
                                            .start = ctx_.now()});
  kick(qp);
}

void Requester::step(Unit& unit) {
  while (!unit.ready.empty()) {
    QpContext* qp = ctx_.qp(unit.ready.front());
    if (qp == nullptr || !can_send(*qp)) {
      if (qp != nullptr) qp->in_requester_list = false;
      unit.ready.pop_front();
      continue;
    }
    if (!ports_.transmit->has_room(qp->path_mtu + 128)) return;  // resumed when room frees
    // The QP's context must be on the NIC: a miss stalls the requester until it is.
    const sim::Time ctx = ctx_.context_ready(qp->qpn);
    if (ctx > ctx_.now()) {
      ctx_.prefetch_contexts(unit.ready.size(), [&](size_t i) { return std::optional<Qpn>(unit.ready[i]); });
      unit.next_free = ctx;
      ctx_.scheduler().schedule(unit.step, ctx);
      return;
    }
    unit.ready.pop_front();
    qp->in_requester_list = false;
    if (CongestionControl* cc = ctx_.congestion) {
      const sim::Time when = cc->send_time(*qp->cc, ctx_.now());
      if (when > ctx_.now()) {
        pace(*qp, when);
        continue;
      }
    }
    uint32_t cycles = 0;
    if (!qp->resend.empty()) {
      // Selective repeat: one NAKed packet, sent again as it was (a READ asked
      // again from the PSN named: only what is still missing). It may lie in
      // the message still being sent.
      const Psn psn = qp->resend.pop_front();
      const size_t started = std::min(qp->send_entries.size(), size_t{qp->next_entry} + (qp->next_packet > 0 ? 1 : 0));
      for (size_t i = 0; i < started && Psn::distance(psn, qp->next_psn) > 0; ++i) {
        const SendEntry& e = qp->send_entries[i];
        if (Psn::distance(e.first_psn, psn) < 0 || Psn::distance(psn, e.last_psn()) < 0) continue;
        cycles = emit(*qp, i, static_cast<uint32_t>(Psn::distance(e.first_psn, psn)), psn, false);
        ++qp->retransmitted_packets;
        ++ctx_.stats.retransmitted_packets;
        break;
      }
    } else {
      cycles = build_packet(*qp);
    }
    // The QP goes back into the ready list and the next step (if the pipeline
    // has room) comes at once; the packet's cycles delay a step that waits for
    // work or room (room_available()).
    kick(*qp);
    unit.next_free = ctx_.now() + ctx_.cycles(cycles) + ctx_.translation_stall();
    return;
  }
}

uint32_t Requester::build_packet(QpContext& qp) {
  const size_t entry = qp.next_entry;
  const SendEntry& e = qp.send_entries[entry];
  const uint32_t index = qp.next_packet;
  const Psn psn = qp.next_psn;
  bool ends_unreliable = false;
  if (e.reads_remote) {
    // One request; the answer takes the rest of the message's PSNs.
    qp.next_psn = qp.next_psn + (e.packets - index);
    qp.next_packet = 0;
    ++qp.next_entry;
    ++qp.rd_atomic_inflight;
  } else {
    ++qp.next_psn;
    if (++qp.next_packet == e.packets) {
      qp.next_packet = 0;
      ++qp.next_entry;
      ends_unreliable = qp.type != QpType::Rc;
    }
  }
  return emit(qp, entry, index, psn, ends_unreliable);
}

uint32_t Requester::emit(QpContext& qp, size_t entry, uint32_t index, Psn psn, bool ends_unreliable) {
  const SendEntry& e = qp.send_entries[entry];
  const uint32_t offset = index * qp.path_mtu;
  const uint32_t len = e.reads_remote ? 0 : std::min(qp.path_mtu, e.length - std::min(e.length, offset));
  const Position pos = e.packets == 1 || e.reads_remote ? Position::Only
                       : index == 0 ? Position::First
                       : index + 1 == e.packets ? Position::Last : Position::Middle;

  const packet::Opcode opcode = packet_opcode(qp.type, e.wqe.opcode, pos);
  const bool solicited = (e.wqe.send_flags & kSendSolicited) && (pos == Position::Last || pos == Position::Only);
  // Ask for an ACK at the end of each message, and at least every N packets.
  const bool ack_req = qp.type == QpType::Rc && !e.reads_remote &&
                       (pos == Position::Last || pos == Position::Only ||
                        (index + 1) % ctx_.params().ack_coalesce_packets == 0);
  fabric::Frame frame;
  packet::FrameLayout layout;
  HeaderTemplate& t = qp.header_template;
  if (t.valid && t.opcode == opcode && t.layout.payload_length == len) {
    frame = ctx_.pool.acquire(t.layout.frame_length);
    const std::span<std::byte> bytes = frame.bytes();
    std::memcpy(bytes.data(), t.bytes.data(), t.layout.payload_offset);
    layout = t.layout;
    packet::patch_headers(bytes, layout, packet::PerPacketFields{psn, ack_req, solicited, ctx_.next_ipv4_id()});
  } else {
    layout = build_headers(qp, e, opcode, psn, len, offset, solicited, ack_req, frame);
  }
  return send_packet(qp, e, index, len, offset, layout, std::move(frame), ends_unreliable);
}

packet::FrameLayout Requester::build_headers(QpContext& qp, const SendEntry& e, packet::Opcode opcode, Psn psn,
                                             uint32_t len, uint32_t offset, bool solicited, bool ack_req,
                                             fabric::Frame& frame) {
  const bool read = e.wqe.opcode == WrOpcode::RdmaRead;
  const bool atomic = is_atomic(e.wqe.opcode);
  packet::PacketFields f = ctx_.packet_template(qp);
  if (qp.type == QpType::Ud) {
    const AddressVector* av = ctx_.tables.address_handle(e.wqe.ud_ah);
    if (av != nullptr) {
      f.eth_dst = av->mac;
      f.ip_dst = av->ip;
      f.dlid = av->lid;
      f.lrh_sl = av->sl;
      f.dgid = av->ip;
    }
    f.dest_qp = Qpn(e.wqe.ud_remote_qpn);
  }
  f.opcode = opcode;
  f.psn = psn;
  f.payload_length = len;
  f.solicited = solicited;
  const auto& info = packet::opcode_info(f.opcode);
  if (info.has(packet::Hdr::Reth)) {
    // A READ asked again from the middle asks only for what is still missing.
    f.reth = read ? packet::RethFields{e.wqe.remote_addr + offset, Rkey(e.wqe.rkey), e.length - std::min(e.length, offset)}
                  : packet::RethFields{e.wqe.remote_addr, Rkey(e.wqe.rkey), e.length};
  }
  if (read || atomic) ctx_.cache.wqe_sent(qp.qpn, psn);  // its answer is placed by it
  if (atomic) {
    const bool cas = e.wqe.opcode == WrOpcode::AtomicCmpSwap;
    f.atomic_eth = packet::AtomicEthFields{e.wqe.remote_addr, Rkey(e.wqe.rkey), cas ? e.wqe.swap : e.wqe.compare_add,
                                           cas ? e.wqe.compare_add : 0};
  }
  if (info.has(packet::Hdr::ImmDt)) f.imm = __builtin_bswap32(e.wqe.imm_data);  // WQE keeps network order
  if (info.has(packet::Hdr::Ieth)) f.ieth = packet::IethFields{Rkey(e.wqe.imm_data)};
  if (info.has(packet::Hdr::Deth)) f.deth = packet::DethFields{Qkey(e.wqe.ud_remote_qkey), qp.qpn};
  f.ack_req = ack_req;
  packet::derive_fields(f);

  frame = ctx_.pool.acquire(packet::frame_length(f));
  const packet::FrameLayout layout = *packet::write_headers(f, frame.bytes());
  // Headers with nothing after the BTH become the QP's template (UD's carry
  // each WR's address; every other opcode has an extension header).
  HeaderTemplate& t = qp.header_template;
  t.valid = qp.type != QpType::Ud && info.header_length == packet::kBthSize &&
            layout.payload_offset <= HeaderTemplate::kBytes;
  if (t.valid) {
    std::memcpy(t.bytes.data(), frame.bytes().data(), layout.payload_offset);
    t.layout = layout;
    t.opcode = opcode;
  }
  return layout;
}

uint32_t Requester::send_packet(QpContext& qp, const SendEntry& e, uint32_t index, uint32_t len, uint32_t offset,
                                const packet::FrameLayout& layout, fabric::Frame&& frame, bool ends_unreliable) {
  frame.meta().priority = ctx_.egress_priority(qp);
  frame.meta().flow_id = qp.qpn.value();
  frame.meta().psn = e.first_psn + index;
  frame.meta().request = true;
  frame.meta().created = ctx_.now();

  if (len > 0 && ctx_.config.elide_payload) frame.elide_from(layout.payload_offset);
  SgeMap map;
  bool failed = false;
  if (len > 0 && frame.elided() > 0) {
    if (!(e.wqe.send_flags & kSendInline))
      failed = ctx_.translation.map_sges(std::span(e.wqe.sge.data(), e.wqe.num_sge), qp.pd, offset, len, 0, map) !=
               AccessCheck::Ok;
  } else if (len > 0 && (e.wqe.send_flags & kSendInline)) {
    std::memcpy(frame.bytes().data() + layout.payload_offset, e.wqe.inline_data.data() + offset, len);
  } else if (len > 0) {
    failed = ctx_.translation.map_sges(std::span(e.wqe.sge.data(), e.wqe.num_sge), qp.pd, offset, len, 0, map) !=
             AccessCheck::Ok;
  }
  ++qp.tx_packets;
  ++packets_;
  const NicParams& params = ctx_.params();
  const uint32_t cycles = params.requester_cycles_per_packet + (index == 0 ? params.requester_cycles_per_wqe : 0) +
                          (len + params.datapath_bytes_per_cycle - 1) / std::max(params.datapath_bytes_per_cycle, 1u);
  if (failed) {
    ports_.errors->qp_fatal(qp, WcStatus::LocProtErr);
    return cycles;
  }
  if (qp.type == QpType::Rc) ports_.responses->arm_timer(qp);
  if (CongestionControl* cc = ctx_.congestion)
    sent(*cc, qp, e, index, e.first_psn + index, static_cast<uint32_t>(frame.size()));
  SgeMap ahead;
  const ChunkRead chunk = map.count > 0 ? chunk_read(qp, e, e.first_psn + index, offset + len, ahead) : ChunkRead{};
  ports_.transmit->submit(std::move(frame), layout, std::span(map.pieces.data(), map.count), qp.qpn,
                            ends_unreliable ? TxOrigin::RequestEndsUnreliableWqe : TxOrigin::Request, chunk);
  return cycles;
}

ChunkRead Requester::chunk_read(QpContext& qp, const SendEntry& e, Psn psn, uint32_t end, SgeMap& ahead) {
  if (qp.read_ahead_left > 0 && psn == qp.read_ahead_next) {
    --qp.read_ahead_left;
    qp.read_ahead_next = psn + 1;
    return ChunkRead{.ahead = {}, .buffered = true};
  }
  // A packet sent again behind the newest reads its own bytes. A chunk starts
  // at a new packet: it reads as many whole packets more as fit, up to the
  // message's end.
  if (psn + 1 != qp.next_psn) return ChunkRead{};
  qp.read_ahead_left = 0;
  const uint32_t per_chunk = ctx_.params().tx_read_chunk_bytes / qp.path_mtu;
  const uint32_t rest = std::min<uint64_t>(uint64_t{per_chunk > 0 ? per_chunk - 1 : 0} * qp.path_mtu, e.length - end);
  if (rest == 0 || ctx_.translation.map_sges(std::span(e.wqe.sge.data(), e.wqe.num_sge), qp.pd, end, rest, 0,
                                             ahead) != AccessCheck::Ok)
    return ChunkRead{};  // a piece out of bounds fails with the packet that carries it
  qp.read_ahead_left = (rest + qp.path_mtu - 1) / qp.path_mtu;
  qp.read_ahead_next = psn + 1;
  return ChunkRead{.ahead = std::span(ahead.pieces.data(), ahead.count), .buffered = false};
}

// Tells congestion control of a packet, and times it as the RTT probe if none
// is out and it was never sent before (Karn: a resent packet's ACK could be
// the first copy's).
void Requester::sent(CongestionControl& cc, QpContext& qp, const SendEntry& e, uint32_t index, Psn psn,
                     uint32_t bytes) {
  const bool resent = qp.sent_any && Psn::distance(psn, qp.sent_up_to) > 0;
  if (!resent) {
    qp.sent_any = true;
    qp.sent_up_to = psn + (e.reads_remote ? e.packets - index : 1);
    // READs and atomics are answered by responses, not ACKs: never probes.
    if (!qp.rtt_probe && qp.type == QpType::Rc && !e.reads_remote) {
      qp.rtt_probe = true;
      qp.rtt_probe_psn = psn;
      qp.rtt_probe_sent = ctx_.now();
    }
  }
  cc.on_sent(*qp.cc, CcSent{psn, bytes, resent}, ctx_.now());
}

void Requester::pace(QpContext& qp, sim::Time when) {
  qp.cc_paced = true;
  paced_.emplace(when, qp.qpn);
  if (!pace_.scheduled() || pace_.when() > paced_.top().first) ctx_.scheduler().reschedule(pace_, paced_.top().first);
}

void Requester::release_paced() {
  while (!paced_.empty() && paced_.top().first <= ctx_.now()) {
    const Qpn qpn = paced_.top().second;
    paced_.pop();
    if (QpContext* qp = ctx_.qp(qpn)) {
      qp->cc_paced = false;
      kick(*qp);
    }
  }
  if (!paced_.empty()) ctx_.scheduler().schedule(pace_, paced_.top().first);
}

void Requester::unreliable_wqe_sent(QpContext& qp) {
  if (qp.send_entries.empty()) return;
  const SendEntry done = qp.send_entries.pop_front();
  if (qp.next_entry > 0) --qp.next_entry;
  ports_.completions->complete_send(qp, done, WcStatus::Success);
}

}  // namespace rnicsim::nic
