#include "nic_model/rx_pipeline.hpp"

#include <algorithm>
#include <array>


namespace rnicsim::nic {
namespace {
constexpr uint8_t kEcnCongestionExperienced = 0b11;

// The opcodes' services each QP type takes (rows: the columns of kQpTypes; columns: packet::Transport).
using packet::Transport;
constexpr size_t kTransports = static_cast<size_t>(Transport::Invalid) + 1;
constexpr std::array<std::array<bool, kTransports>, kQpTypeCount> kServiceAccepts{{
    //  Rc     Uc     Rd     Ud     Cnp    Invalid
    {{true, false, false, false, true, false}},   // RC
    {{false, true, false, false, true, false}},   // UC
    {{false, false, false, true, false, false}},  // UD
}};

bool service_accepts(QpType type, Transport t) {
  return kServiceAccepts[column_of(type)][static_cast<size_t>(t)];
}

// The port's P_Key table holds the default P_Key 0xFFFF (full member): a packet
// matches with its low 15 bits all ones, as a full or a limited member.
bool pkey_matches(uint16_t pkey) { return (pkey & 0x7FFF) == 0x7FFF; }

// A connected QP takes packets from its peer only: the source IP (RoCEv2) or
// source LID (InfiniBand) of its address vector.
bool from_peer(const QpContext& qp, const packet::ParsedPacket& p) {
  if (qp.type == QpType::Ud) return true;
  switch (p.layout.link) {
    case packet::LinkKind::RoceV2Ipv4:
    case packet::LinkKind::RoceV2Ipv6: return p.fields.ip_src == qp.remote.ip;
    case packet::LinkKind::IbLocal:
    case packet::LinkKind::IbGlobal: return p.fields.slid == qp.remote.lid;
  }
  return false;
}

// An intact frame (sealed by a correct builder, untouched since) has no CRCs
// computed and needs no check; a size-only frame has none to check, and says
// whether a fault changed it; every other frame is checked.
bool crc_fails(const fabric::Frame& frame, std::span<const std::byte> bytes, const packet::ParsedPacket& p) {
  if (frame.elided() > 0) return frame.meta().corrupted || p.missing != frame.elided();
  return !frame.intact() && (!packet::icrc_ok(bytes, p) || !packet::vcrc_ok(bytes, p));
}
}  // namespace

RxPipeline::RxPipeline(NicContext& ctx) : ctx_(ctx), units_(ctx.params().responder_units, this) {}

std::optional<packet::ConstBth> RxPipeline::peek(const fabric::Frame& frame) const {
  if (units_.count() == 1 && ctx_.params().rkey_check_cycles == 0) return std::nullopt;
  return packet::bth_of(frame.bytes_as_built(), ctx_.capture_link_type());
}

RxPipeline::Unit& RxPipeline::unit_for(const std::optional<packet::ConstBth>& bth) {
  // A frame with no BTH to read goes to the first unit, which drops it.
  return bth ? units_.of(bth->dest_qp()) : units_[0];
}

sim::Duration RxPipeline::latency_of(const std::optional<packet::ConstBth>& bth) {
  const NicParams& params = ctx_.params();
  const auto names_remote = [](const packet::OpcodeInfo& info) {
    return info.has(packet::Hdr::Reth) || info.has(packet::Hdr::AtomicEth);
  };
  const uint32_t cycles =
      params.rx_latency_cycles + (bth && names_remote(packet::opcode_info(bth->opcode())) ? params.rkey_check_cycles : 0);
  return ctx_.cycles(cycles) + ctx_.jitter.draw();
}

void RxPipeline::wake(Unit& u, sim::Time earliest) {
  if (!u.may_go() || u.process.scheduled()) return;
  ctx_.scheduler().schedule(u.process, std::max(earliest, u.busy_until));
}

void RxPipeline::receive(fabric::Frame&& frame) {
  const std::optional<packet::ConstBth> bth = peek(frame);
  const sim::Time effective = ctx_.now() + latency_of(bth);
  ports_.rx_buffer->buffered(frame.meta().priority, static_cast<int64_t>(frame.size()));
  Unit& u = unit_for(bth);
  u.queue.push_back(std::move(frame));
  u.effective.push_back(effective);
  wake(u, effective);
}

void RxPipeline::atomic_done() {
  for (Unit& u : units_) {
    if (u.waits != Unit::Waits::Atomic) continue;
    u.waits = Unit::Waits::Nothing;
    wake(u, ctx_.now());
  }
}

void RxPipeline::resume(std::optional<Qpn> qpn) {
  // Receive WQEs arriving free a unit that waits for one, never one that waits for an atomic.
  for (Unit& u : units_) {
    if (u.waits != Unit::Waits::RecvWqe || (qpn && *qpn != u.stalled_qpn)) continue;
    u.waits = Unit::Waits::Nothing;
    wake(u, ctx_.now());
  }
}

void RxPipeline::reinject(fabric::Frame&& frame) {
  Unit& u = unit_for(peek(frame));
  u.reinjected.push_back(std::move(frame));
  wake(u, ctx_.now());
}

void RxPipeline::notify_congestion(QpContext& qp) {
  // Notification point: a packet of `qp`'s peer went through a congested queue.
  if (CongestionControl* cc = ctx_.congestion; cc != nullptr && cc->on_marked_packet(*qp.cc, ctx_.now()))
    ports_.cnp->send_cnp(qp);
}

bool RxPipeline::admit(const QpContext* qp, const packet::ParsedPacket& p) {
  if (qp == nullptr) {
    ++counters_.unknown_qp;
    return false;
  }
  if (!service_accepts(qp->type, packet::opcode_info(p.fields.opcode).transport)) {
    ++counters_.wrong_transport;
    return false;
  }
  if (!pkey_matches(p.fields.pkey)) {
    ++counters_.bad_pkey;
    return false;
  }
  if (!from_peer(*qp, p)) {
    ++counters_.wrong_source;
    return false;
  }
  return true;
}

uint32_t RxPipeline::payload_cycles(uint32_t bytes) const {
  const uint32_t width = std::max(ctx_.params().datapath_bytes_per_cycle, 1u);
  return (bytes + width - 1) / width;
}

uint32_t RxPipeline::request_cycles(packet::Opcode op) const {
  const NicParams& p = ctx_.params();
  const packet::Position pos = packet::opcode_info(op).position;
  const bool segment = pos == packet::Position::Middle || pos == packet::Position::Last;
  return segment && p.responder_cycles_per_segment > 0 ? p.responder_cycles_per_segment : p.responder_cycles_per_packet;
}

void RxPipeline::process(Unit& u) {
  // Frames given back by the responder go first: they are next in PSN order.
  sim::RingQueue<fabric::Frame>& source = u.reinjected.empty() ? u.queue : u.reinjected;
  if (source.empty() || u.waits != Unit::Waits::Nothing) return;
  if (&source == &u.queue && u.effective.front() > ctx_.now()) {  // still in the receive pipeline
    ctx_.scheduler().schedule(u.process, u.effective.front());
    return;
  }
  fabric::Frame& frame = source.front();
  const auto frame_size = static_cast<int64_t>(frame.size());  // the responder may take the frame
  const uint8_t frame_priority = frame.meta().priority;
  Outcome o{ctx_.params().rx_parse_cycles};
  const std::span<const std::byte> bytes = frame.bytes_as_built();
  const auto& parsed = prediction_.parse(bytes, ctx_.capture_link_type(), frame.size(), /*read_crcs=*/!frame.intact());
  if (!parsed) {
    ++counters_.malformed;
  } else if (crc_fails(frame, bytes, *parsed)) {
    ++counters_.bad_icrc;
  } else if (!deliver(u, *parsed, frame, o)) {
    return;  // waits at the head for its QP's context
  }
  u.busy_until = ctx_.now() + ctx_.cycles(o.cycles) + ctx_.translation_stall();
  if (o.done) {
    source.pop_front();
    if (&source == &u.queue) {
      u.effective.pop_front();
      ports_.rx_buffer->buffered(frame_priority, -frame_size);
    }
  }
  if (u.may_go()) ctx_.scheduler().reschedule(u.process, u.busy_until);
}

bool RxPipeline::deliver(Unit& u, const packet::ParsedPacket& p, fabric::Frame& frame, Outcome& o) {
  const packet::PacketFields& f = p.fields;
  QpContext* qp = ctx_.qp(f.dest_qp);
  const sim::Time ctx = qp != nullptr ? ctx_.context_ready(f.dest_qp) : ctx_.now();
  if (ctx > ctx_.now()) {
    // QP-context miss: the packet waits at the head until the context is on the
    // NIC, and those of the packets behind it are read meanwhile.
    ctx_.prefetch_contexts(u.queue.size(), [&](size_t i) {
      return packet::dest_qp_of(u.queue[i].bytes_as_built(), ctx_.capture_link_type());
    });
    u.busy_until = ctx;
    ctx_.scheduler().schedule(u.process, ctx);
    return false;
  }
  if (!admit(qp, p)) {  // dropped silently by a header check, and counted
    ++counters_.packets;
    return true;
  }
  if (!answer_wqe_on_nic(u, *qp, f)) return false;  // tried again when the WQE is here
  ++counters_.packets;
  if (f.ecn == kEcnCongestionExperienced || f.fecn) {
    ++counters_.ecn_ce;
    ++qp->ecn_ce_received;
    notify_congestion(*qp);
  }
  if (packet::opcode_info(f.opcode).is_response()) {
    o.cycles += ctx_.params().completer_cycles_per_packet + payload_cycles(f.payload_length);
    ports_.responses->receive(*qp, p, frame);
  } else if (f.opcode == packet::Opcode::Cnp) {
    on_cnp(*qp);
  } else {
    o.cycles += request_cycles(f.opcode) + payload_cycles(f.payload_length);
    o.done = to_responder(u, *qp, p, frame);
  }
  return true;
}

// A READ's first response and an atomic's ACK: their data goes where their WQE says.
bool RxPipeline::places_by_wqe(packet::Opcode op) {
  return op == packet::Opcode::RcRdmaReadResponseFirst || op == packet::Opcode::RcRdmaReadResponseOnly ||
         op == packet::Opcode::RcAtomicAcknowledge;
}

bool RxPipeline::answer_wqe_on_nic(Unit& u, const QpContext& qp, const packet::PacketFields& f) {
  if (!places_by_wqe(f.opcode)) return true;
  const uint64_t key = ContextCache::wqe_key(qp.qpn, f.psn);
  if (u.refetched_wqe == key) {  // read again for it: it is here now
    u.refetched_wqe = kNoWqe;
    return true;
  }
  const sim::Time ready = ctx_.cache.wqe_ready(key, ctx_.now());
  if (ready <= ctx_.now()) return true;
  ++counters_.wqe_refetches;
  prefetch_answer_wqes(u);
  u.refetched_wqe = key;
  u.busy_until = ready;
  ctx_.scheduler().schedule(u.process, ready);
  return false;
}

void RxPipeline::prefetch_answer_wqes(const Unit& u) {
  uint32_t left = ctx_.cache.wqe_prefetch_depth();
  for (size_t i = 1; i < u.queue.size() && left > 0; ++i) {
    const std::optional<packet::ConstBth> bth = packet::bth_of(u.queue[i].bytes_as_built(), ctx_.capture_link_type());
    if (!bth || !places_by_wqe(static_cast<packet::Opcode>(bth->opcode()))) continue;
    ctx_.cache.prefetch_wqe(ContextCache::wqe_key(bth->dest_qp(), bth->psn()), ctx_.now());
    --left;
  }
}

// Reaction point: the peer saw our packets marked.
void RxPipeline::on_cnp(QpContext& qp) {
  ++counters_.cnps;
  ++qp.cnps_received;
  if (auto* t = ctx_.timeline) t->record({.kind = TimelineKind::CnpReceived, .qpn = qp.qpn, .start = ctx_.now()});
  if (CongestionControl* cc = ctx_.congestion) cc->on_cnp(*qp.cc, ctx_.now());
}

bool RxPipeline::to_responder(Unit& u, QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame) {
  switch (ports_.requests->receive(qp, p, frame)) {
    case RequestVerdict::Done: return true;
    case RequestVerdict::Stall:  // keep the packet, retry it on resume
      u.waits = Unit::Waits::RecvWqe;
      u.stalled_qpn = p.fields.dest_qp;
      return false;
    case RequestVerdict::Wait:  // keep the packet, retry it when an atomic is done
      u.waits = Unit::Waits::Atomic;
      return false;
  }
  return true;
}

}  // namespace rnicsim::nic
