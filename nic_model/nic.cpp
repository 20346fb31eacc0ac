#include "nic_model/nic.hpp"

#include <algorithm>
#include <cstring>

namespace rnicsim::nic {

Nic::Nic(sim::Simulator& sim, fabric::FramePool& pool, HostMemory& memory, NicConfig config)
    : config_(std::move(config)),
      pcie_(config_.params.pcie),
      dma_(sim, pcie_, memory, config_.actor),
      cache_(config_.params, pcie_, translation_),
      jitter_(config_.params.jitter_mean, sim.random(config_.name + ".jitter")),
      ctx_{sim, config_, sim::ClockDomain(config_.params.clock_hz), pool, pcie_, dma_, translation_, tables_, cache_,
           counters_, jitter_},
      doorbell_(ctx_),
      fetcher_(ctx_),
      requester_(ctx_),
      responder_(ctx_),
      completer_(ctx_),
      cqe_writer_(ctx_),
      rx_(ctx_),
      tx_(ctx_),
      egress_(ctx_),
      rx_buffer_(ctx_),
      notification_point_(ctx_),
      errors_(ctx_) {
  dma_.set_fault_listener(this);
  connect_blocks();
}

// The one place that says which block sends into which.
void Nic::connect_blocks() {
  doorbell_.connect({.send_queue = &requester_, .fetch = &fetcher_});
  fetcher_.connect({.send_queue = &requester_, .requests = &responder_, .errors = &errors_});
  requester_.connect({.transmit = &tx_, .responses = &completer_, .completions = &cqe_writer_, .errors = &errors_});
  tx_.connect({.wire = &egress_, .send_queue = &requester_, .errors = &errors_, .producers = producers()});
  responder_.connect({.completions = &cqe_writer_, .errors = &errors_, .fetch = &fetcher_, .transmit = &tx_,
                      .receive = &rx_, .wire = &egress_});
  completer_.connect({.send_queue = &requester_, .completions = &cqe_writer_, .errors = &errors_});
  cqe_writer_.connect({.errors = &errors_});
  rx_.connect({.responses = &completer_, .requests = &responder_, .cnp = &notification_point_, .rx_buffer = &rx_buffer_});
  egress_.connect(*this);
  notification_point_.connect(egress_);
  errors_.connect(cqe_writer_);
}

Nic::~Nic() = default;

void Nic::dma_fault(std::optional<Qpn> qpn, uint64_t addr, uint64_t length, bool write) {
  ++counters_.dma_faults;
  ctx_.sim.log().log(sim::LogLevel::Warn, config_.name, [&](std::ostream& os) {
    os << "DMA " << (write ? "write" : "read") << " of " << length << " bytes at 0x" << std::hex << addr << std::dec;
    if (qpn) os << " for QP " << qpn->value();
    os << " failed: the registered memory is not there any more";
  });
  QpContext* q = write && qpn ? qp(*qpn) : nullptr;
  if (q == nullptr || q->state == QpState::Err || q->state == QpState::Reset) return;
  errors_.async_event(AsyncEvent::QpAccessErr, *qpn);
  errors_.qp_fatal(*q, WcStatus::LocProtErr);
}

void Nic::attach(fabric::Port& port) {
  port_ = &port;
  egress_.attach(port);
  rx_buffer_.attach(port);
  port.set_receiver(this);
  port.set_tx_ready([this] {
    for (RoomPort* p : producers()) p->room_available();
  });
  set_congestion(make_congestion_control(config_.params.congestion, port.params().rate_bps, config_.cc_table));
}

Cqn Nic::create_cq(uint64_t ring_base, uint32_t entries, CompletionListener* listener, uint32_t capacity) {
  const Cqn cqn(next_cqn_++);
  CqContext& c = tables_.add_cq(cqn);
  c.cqn = cqn;
  c.base = ring_base;
  c.entries = entries;
  c.capacity = capacity == 0 ? entries : std::min(capacity, entries);
  c.listener = listener;
  c.event_timer = std::make_unique<sim::Event>([this, cqn] { cqe_writer_.fire_event(cqn); }, "cq.event", config_.actor);
  return cqn;
}

bool Nic::resize_cq(Cqn cqn, uint32_t capacity) {
  CqContext* c = cq(cqn);
  if (c == nullptr || capacity == 0 || capacity > c->entries) return false;
  c->capacity = capacity;
  return true;
}

Qpn Nic::create_qp(const QpInit& init) {
  // The only special QP modelled is the GSI QP (QP0, the SMI, carries IB subnet management).
  if (init.special_qpn && (*init.special_qpn != packet::kGsiQpn || tables_.has_qp(packet::kGsiQpn))) return Qpn(0);
  auto qp = std::make_unique<QpContext>();
  qp->qpn = init.special_qpn.value_or(Qpn(next_qpn_++));
  qp->type = init.type;
  qp->pd = init.pd;
  qp->send_cq = init.send_cq;
  qp->recv_cq = init.recv_cq;
  qp->sq = init.sq;
  qp->rq = init.rq;
  qp->sq_sig_all = init.sq_sig_all;
  qp->srq = init.srq;
  qp->path_mtu = config_.params.mtu;  // UD uses the port MTU; RC/UC set theirs at RTR
  // RoCEv2 flow entropy: the UDP source port comes from the QPN.
  qp->udp_src_port = static_cast<uint16_t>(0xC000 | ((qp->qpn.value() * 2654435761u) >> 18));
  if (init.tally != 0 && init.tally <= tallies_.size()) qp->tally = &tallies_[init.tally - 1];
  QpContext* raw = qp.get();
  if (congestion_ != nullptr) {
    qp->cc = congestion_->new_qp_state();
    qp->cc->timer = std::make_unique<sim::Event>([this, raw] {
      congestion_->on_timer(*raw->cc, now());
      requester_.kick(*raw);
    }, "qp.cc_timer", config_.actor);
  }
  qp->retransmit_timer = std::make_unique<sim::Event>([this, raw] { completer_.on_timer(*raw); }, "qp.timer", config_.actor);
  if (raw->type == QpType::Rc)
    qp->nak_timer = std::make_unique<sim::Event>([this, raw] { responder_.on_nak_timer(*raw); }, "qp.nak_timer",
                                                 config_.actor);
  return tables_.add_qp(std::move(qp)).qpn;
}

uint32_t Nic::open_tally() {
  tallies_.push_back(0);
  return static_cast<uint32_t>(tallies_.size());
}

uint64_t Nic::payload_placed_in(uint32_t tally) {
  if (tally == 0 || tally > tallies_.size()) return 0;
  // The sum over the tally's QPs of accepted - min(accepted, writing): all
  // they accepted, less for each QP with writes in flight.
  uint64_t& accepted = tallies_[tally - 1];
  uint64_t placed = accepted;
  dma_.for_each_writing([&](Qpn qpn, uint64_t bytes) {
    if (const QpContext* q = qp(qpn); q != nullptr && q->tally == &accepted)
      placed -= std::min(q->payload_bytes_accepted, bytes);
  });
  return placed;
}

int Nic::modify_qp(Qpn qpn, const QpAttr& attr, uint32_t mask) {
  QpContext* q = qp(qpn);
  if (q == nullptr) return EINVAL;
  const QpState before = q->state;
  q->header_template.valid = false;  // the path, MTU or peer may change
  const int rc = apply_modify(*q, attr, mask);
  if (rc == 0 && q->state != before) {
    ctx_.sim.log().log(sim::LogLevel::Debug, config_.name, [&](std::ostream& os) {
      os << "QP " << qpn.value() << ' ' << to_string(before) << " -> " << to_string(q->state);
    });
    if (q->state == QpState::Err) errors_.enter_error(*q, WcStatus::WrFlushErr, /*entering=*/true);
    if (q->state == QpState::Reset) reset_qp(*q);
    if (q->state == QpState::Rts) requester_.kick(*q);
  }
  return rc;
}

void Nic::reset_qp(QpContext& qp) {
  // RESET empties the work queues (their indices start again from 0) and
  // forgets the connection's progress, as a QP fresh from creation.
  scheduler().cancel(*qp.retransmit_timer);
  if (qp.nak_timer) scheduler().cancel(*qp.nak_timer);
  qp.sq.producer = qp.sq.fetched = 0;
  qp.rq.producer = qp.rq.fetched = 0;
  while (!qp.send_entries.empty()) qp.send_entries.pop_front();
  while (!qp.recv_wqes.empty()) qp.recv_wqes.pop_front();
  while (!qp.resend.empty()) qp.resend.pop_front();
  qp.reorder.clear();
  qp.next_entry = 0;
  qp.next_packet = 0;
  qp.rd_atomic_inflight = 0;
  qp.responses_queued = 0;
  qp.rnr_waiting = false;
  qp.sent_any = qp.rtt_probe = false;
  qp.response_gap_rewound = false;
  qp.msn = Msn();
  qp.message_bytes_placed = 0;
  qp.nak_outstanding = false;
  qp.unacked_packets = 0;
  qp.write_remaining = 0;
  qp.recv_offset = 0;
}

bool Nic::destroy_qp(Qpn qpn) {
  cache_.forget(qpn);
  if (QpContext* q = qp(qpn)) q->take_back_payload(q->payload_bytes_accepted);  // its bytes leave its tally
  return tables_.erase_qp(qpn);
}

bool Nic::arm_cq(Cqn cqn, bool solicited_only, uint64_t seen) {
  CqContext* c = cq(cqn);
  if (c == nullptr) return false;
  c->armed = true;
  c->solicited_only = solicited_only;
  if ((solicited_only ? c->written_notify : c->written) > seen) cqe_writer_.fire_event(cqn);
  return true;
}

bool Nic::arm_cq(Cqn cqn, bool solicited_only) {
  const CqContext* c = cq(cqn);
  return c != nullptr && arm_cq(cqn, solicited_only, c->written);
}

Srqn Nic::create_srq(Pdn pd, const WorkRing& ring) {
  auto srq = std::make_unique<SrqContext>();
  srq->srqn = Srqn(next_srqn_++);
  srq->pd = pd;
  srq->ring = WorkRing{ring.base, ring.entries, ring.stride};
  return tables_.add_srq(std::move(srq)).srqn;
}

bool Nic::arm_srq_limit(Srqn srqn, uint32_t limit) {
  SrqContext* s = srq(srqn);
  if (s == nullptr || limit > s->ring.entries) return false;
  s->limit = limit;
  return true;
}

uint32_t Nic::create_ah(const AddressVector& av) { return tables_.add_ah(av); }

bool Nic::destroy_ah(uint32_t index) { return tables_.erase_ah(index); }

bool Nic::destroy_cq(Cqn cqn) {
  CqContext* c = tables_.cq(cqn);
  if (c == nullptr) return false;
  ctx_.scheduler().cancel(*c->event_timer);
  return tables_.erase_cq(cqn);
}

bool Nic::destroy_srq(Srqn srqn) { return tables_.erase_srq(srqn); }

void Nic::enable_pfc(const fabric::PfcParams& params, uint64_t rx_buffer_bytes) {
  rx_buffer_.enable_pfc(params, rx_buffer_bytes);
}

}  // namespace rnicsim::nic
