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

RxPipeline::RxPipeline(NicContext& ctx)
    : ctx_(ctx), process_([this] { process(); }, "rx.process", ctx.actor()), units_(ctx.params().responder_units) {}

sim::Time RxPipeline::next_start() const {
  sim::Time unit = units_[0].free;
  for (const Unit& u : units_) unit = std::min(unit, u.free);
  return std::max(busy_until_, unit);
}

void RxPipeline::receive(fabric::Frame&& frame) {
  const sim::Time effective = ctx_.now() + ctx_.cycles(ctx_.params().rx_latency_cycles);
  ports_.rx_buffer->buffered(frame.meta().priority, static_cast<int64_t>(frame.size()));
  queue_.push_back(std::move(frame));
  effective_.push_back(effective);
  if (!stalled_ && !process_.scheduled()) ctx_.scheduler().schedule(process_, std::max(effective, next_start()));
}

void RxPipeline::resume(std::optional<Qpn> qpn) {
  if (!stalled_ || (qpn && *qpn != stalled_qpn_)) return;
  stalled_ = false;
  if (!(queue_.empty() && reinjected_.empty()) && !process_.scheduled())
    ctx_.scheduler().schedule(process_, std::max(ctx_.now(), next_start()));
}

void RxPipeline::reinject(fabric::Frame&& frame) {
  reinjected_.push_back(std::move(frame));
  if (!stalled_ && !process_.scheduled()) ctx_.scheduler().schedule(process_, std::max(ctx_.now(), next_start()));
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

void RxPipeline::process() {
  // Frames given back by the responder go first: they are next in PSN order.
  sim::RingQueue<fabric::Frame>& source = reinjected_.empty() ? queue_ : reinjected_;
  if (source.empty() || stalled_) return;
  if (&source == &queue_ && effective_.front() > ctx_.now()) {  // still in the receive pipeline
    ctx_.scheduler().schedule(process_, effective_.front());
    return;
  }
  fabric::Frame& frame = source.front();
  const auto frame_size = static_cast<int64_t>(frame.size());  // the responder may take the frame
  const uint8_t frame_priority = frame.meta().priority;
  Outcome o{ctx_.params().rx_parse_cycles};
  const std::span<const std::byte> bytes = frame.bytes_as_built();
  const auto& parsed = prediction_.parse(bytes, ctx_.capture_link_type(), frame.size(), /*read_crcs=*/!frame.intact());
  Unit* unit = nullptr;  // none for a packet dropped before its QP is known
  if (!parsed) {
    ++counters_.malformed;
  } else if (crc_fails(frame, bytes, *parsed)) {
    ++counters_.bad_icrc;
  } else if (unit = &units_.of(parsed->fields.dest_qp); unit->free > ctx_.now()) {
    ctx_.scheduler().schedule(process_, unit->free);  // its unit is busy: it waits at the head
    return;
  } else if (!deliver(*parsed, frame, o)) {
    return;  // waits at the head for its QP's context
  }
  // The front is taken for the parse, the packet's unit for all of it.
  const sim::Time done = ctx_.now() + ctx_.cycles(o.cycles) + ctx_.translation_stall();
  if (unit != nullptr) {
    unit->free = done;
    busy_until_ = ctx_.now() + ctx_.cycles(ctx_.params().rx_parse_cycles);
  } else {
    busy_until_ = done;
  }
  if (o.done) {
    source.pop_front();
    if (&source == &queue_) {
      effective_.pop_front();
      ports_.rx_buffer->buffered(frame_priority, -frame_size);
    }
  }
  if (!stalled_ && !(queue_.empty() && reinjected_.empty())) ctx_.scheduler().reschedule(process_, next_start());
}

bool RxPipeline::deliver(const packet::ParsedPacket& p, fabric::Frame& frame, Outcome& o) {
  const packet::PacketFields& f = p.fields;
  QpContext* qp = ctx_.qp(f.dest_qp);
  const sim::Time ctx = qp != nullptr ? ctx_.context_ready(f.dest_qp) : ctx_.now();
  if (ctx > ctx_.now()) {
    // QP-context miss: the packet waits at the head until the context is on the NIC.
    busy_until_ = ctx;
    ctx_.scheduler().schedule(process_, ctx);
    return false;
  }
  ++counters_.packets;
  if (!admit(qp, p)) return true;  // dropped silently by a header check, and counted
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
    o.cycles += ctx_.params().responder_cycles_per_packet + payload_cycles(f.payload_length);
    o.done = to_responder(*qp, p, frame);
  }
  return true;
}

// Reaction point: the peer saw our packets marked.
void RxPipeline::on_cnp(QpContext& qp) {
  ++counters_.cnps;
  ++qp.cnps_received;
  if (auto* t = ctx_.timeline) t->record({.kind = TimelineKind::CnpReceived, .qpn = qp.qpn, .start = ctx_.now()});
  if (CongestionControl* cc = ctx_.congestion) cc->on_cnp(*qp.cc, ctx_.now());
}

bool RxPipeline::to_responder(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame) {
  switch (ports_.requests->receive(qp, p, frame)) {
    case RequestVerdict::Done: return true;
    case RequestVerdict::Stall:  // keep the packet, retry it on resume
      stalled_ = true;
      stalled_qpn_ = p.fields.dest_qp;
      return false;
    case RequestVerdict::Wait:  // consumed; take nothing until resume
      stalled_ = true;
      stalled_qpn_ = p.fields.dest_qp;
      return true;
  }
  return true;
}

}  // namespace rnicsim::nic
