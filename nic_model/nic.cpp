#include "nic_model/nic.hpp"

#include <algorithm>
#include <cstring>

namespace rnicsim::nic {

Nic::Nic(sim::Simulator& sim, fabric::FramePool& pool, HostMemory& memory, NicConfig config)
    : sim_(sim),
      pool_(pool),
      config_(std::move(config)),
      clock_(config_.params.clock_hz),
      pcie_(config_.params.pcie),
      dma_(sim, pcie_, memory),
      doorbell_(*this),
      fetcher_(*this),
      requester_(*this),
      responder_(*this),
      completer_(*this),
      cqe_writer_(*this),
      rx_(*this),
      tx_(*this),
      qpc_cache_(config_.params.qpc_cache_entries),
      loopback_event_([this] { deliver_loopback(); }, "nic.loopback") {
  translation_.set_cache(config_.params.mtt_cache_entries, config_.params.mtt_page_bytes);
  dma_.set_fault_listener(this);
}

Nic::~Nic() = default;

void Nic::dma_fault(uint32_t qpn, uint64_t addr, uint64_t length, bool write) {
  ++counters_.dma_faults;
  sim_.log().log(sim::LogLevel::Warn, config_.name, [&](std::ostream& os) {
    os << "DMA " << (write ? "write" : "read") << " of " << length << " bytes at 0x" << std::hex << addr << std::dec;
    if (qpn != 0) os << " for QP " << qpn;
    os << " failed: the registered memory is not there any more";
  });
  QpContext* q = write && qpn != 0 ? qp(qpn) : nullptr;
  if (q == nullptr || q->state == QpState::Err || q->state == QpState::Reset) return;
  async_event(AsyncEvent::QpAccessErr, qpn);
  qp_fatal(*q, WcStatus::LocProtErr);
}

void Nic::attach(fabric::Port& port) {
  port_ = &port;
  port.set_receiver(this);
  port.set_tx_ready([this] { tx_space_available(); });
  congestion_ = make_congestion_control(config_.params.congestion, port.params().rate_bps);
}

uint32_t Nic::create_cq(uint64_t ring_base, uint32_t entries, CompletionListener* listener, uint32_t capacity) {
  const uint32_t cqn = next_cqn_++;
  CqContext& c = cqs_[cqn];
  c.cqn = cqn;
  c.base = ring_base;
  c.entries = entries;
  c.capacity = capacity == 0 ? entries : std::min(capacity, entries);
  c.listener = listener;
  c.event_timer = std::make_unique<sim::Event>([this, cqn] { cqe_writer_.fire_event(cqn); }, "cq.event");
  return cqn;
}

bool Nic::resize_cq(uint32_t cqn, uint32_t capacity) {
  CqContext* c = cq(cqn);
  if (c == nullptr || capacity == 0 || capacity > c->entries) return false;
  c->capacity = capacity;
  return true;
}

Qpn Nic::create_qp(const QpInit& init) {
  // The only special QP modelled is the GSI QP (QP0, the SMI, carries IB subnet management).
  if (init.special_qpn != 0 && (init.special_qpn != 1 || qps_.contains(init.special_qpn))) return Qpn(0);
  auto qp = std::make_unique<QpContext>();
  qp->qpn = Qpn(init.special_qpn != 0 ? init.special_qpn : next_qpn_++);
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
  QpContext* raw = qp.get();
  qp->retransmit_timer = std::make_unique<sim::Event>([this, raw] { completer_.on_timer(*raw); }, "qp.timer");
  const Qpn qpn = qp->qpn;
  qps_.emplace(qpn.value(), std::move(qp));
  return qpn;
}

int Nic::modify_qp(Qpn qpn, const QpAttr& attr, uint32_t mask) {
  QpContext* q = qp(qpn.value());
  if (q == nullptr) return EINVAL;
  const QpState before = q->state;
  q->header_template.valid = false;  // the path, MTU or peer may change
  const int rc = apply_modify(*q, attr, mask);
  if (rc == 0 && q->state != before) {
    sim_.log().log(sim::LogLevel::Debug, config_.name, [&](std::ostream& os) {
      os << "QP " << qpn.value() << ' ' << to_string(before) << " -> " << to_string(q->state);
    });
    if (q->state == QpState::Err) enter_error(*q, WcStatus::WrFlushErr, /*entering=*/true);
    if (q->state == QpState::Reset) reset_qp(*q);
    if (q->state == QpState::Rts) requester_.kick(*q);
  }
  return rc;
}

void Nic::reset_qp(QpContext& qp) {
  // RESET empties the work queues (their indices start again from 0) and
  // forgets the connection's progress, as a QP fresh from creation.
  scheduler().cancel(*qp.retransmit_timer);
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
  qp.response_gap_rewound = false;
  qp.msn = 0;
  qp.nak_outstanding = false;
  qp.unacked_packets = 0;
  qp.write_remaining = 0;
  qp.recv_offset = 0;
}

bool Nic::destroy_qp(Qpn qpn) {
  qpc_cache_.erase(qpn.value());
  QpContext*& slot = qp_slots_[qpn.value() % kQpSlots];
  if (slot != nullptr && slot->qpn == qpn) slot = nullptr;
  return qps_.erase(qpn.value()) > 0;
}

sim::Time Nic::context_ready(uint32_t qpn) {
  if (qpc_cache_.access(qpn)) return now();
  return pcie_.read(now(), config_.params.qpc_entry_bytes);
}

sim::Duration Nic::translation_stall() {
  sim::Time ready = now();
  for (uint32_t m = translation_.take_misses(); m > 0; --m)
    ready = std::max(ready, pcie_.read(now(), config_.params.mtt_entry_bytes));
  return ready - now();
}

bool Nic::arm_cq(uint32_t cqn, bool solicited_only, uint64_t seen) {
  CqContext* c = cq(cqn);
  if (c == nullptr) return false;
  c->armed = true;
  c->solicited_only = solicited_only;
  if ((solicited_only ? c->written_notify : c->written) > seen) cqe_writer_.fire_event(cqn);
  return true;
}

bool Nic::arm_cq(uint32_t cqn, bool solicited_only) {
  const CqContext* c = cq(cqn);
  return c != nullptr && arm_cq(cqn, solicited_only, c->written);
}

uint32_t Nic::create_srq(uint32_t pd, const WorkRing& ring) {
  auto srq = std::make_unique<SrqContext>();
  srq->srqn = next_srqn_++;
  srq->pd = pd;
  srq->ring = WorkRing{ring.base, ring.entries};
  const uint32_t n = srq->srqn;
  srqs_.emplace(n, std::move(srq));
  return n;
}

bool Nic::arm_srq_limit(uint32_t srqn, uint32_t limit) {
  SrqContext* s = srq(srqn);
  if (s == nullptr || limit > s->ring.entries) return false;
  s->limit = limit;
  return true;
}

SrqContext* Nic::srq(uint32_t srqn) {
  auto it = srqs_.find(srqn);
  return it == srqs_.end() ? nullptr : it->second.get();
}

uint32_t Nic::create_ah(const AddressVector& av) {
  if (!free_address_handles_.empty()) {
    const uint32_t index = free_address_handles_.back();
    free_address_handles_.pop_back();
    address_handles_[index] = av;
    return index;
  }
  address_handles_.push_back(av);
  return static_cast<uint32_t>(address_handles_.size() - 1);
}

bool Nic::destroy_ah(uint32_t index) {
  if (index >= address_handles_.size()) return false;
  address_handles_[index] = AddressVector{};
  free_address_handles_.push_back(index);
  return true;
}

bool Nic::destroy_cq(uint32_t cqn) {
  auto it = cqs_.find(cqn);
  if (it == cqs_.end()) return false;
  sim_.scheduler().cancel(*it->second.event_timer);
  cqs_.erase(it);
  return true;
}

bool Nic::destroy_srq(uint32_t srqn) { return srqs_.erase(srqn) > 0; }

const AddressVector* Nic::address_handle(uint32_t index) const {
  return index < address_handles_.size() ? &address_handles_[index] : nullptr;
}

void Nic::async_event(AsyncEvent event, uint32_t id) {
  sim_.log().log(sim::LogLevel::Debug, config_.name,
                 [&](std::ostream& os) { os << "async event " << static_cast<int>(event) << " on " << id; });
  if (async_listener_ != nullptr) async_listener_->on_async_event(event, id);
}

WorkRing* Nic::work_ring(QueueKind kind, uint32_t id) {
  if (kind == QueueKind::Srq) {
    SrqContext* s = srq(id);
    return s == nullptr ? nullptr : &s->ring;
  }
  QpContext* q = qp(id);
  if (q == nullptr) return nullptr;
  return kind == QueueKind::Send ? &q->sq : &q->rq;
}

void Nic::tx_space_available() {
  requester_.resume();
  responder_.resume();
}

QpContext* Nic::qp_slow(uint32_t qpn) {
  auto it = qps_.find(qpn);
  if (it == qps_.end()) return nullptr;
  qp_slots_[qpn % kQpSlots] = it->second.get();
  return it->second.get();
}

CqContext* Nic::cq(uint32_t cqn) {
  auto it = cqs_.find(cqn);
  return it == cqs_.end() ? nullptr : &it->second;
}

packet::PacketFields Nic::packet_template(const QpContext& qp) {
  packet::PacketFields f;
  f.link = config_.link;
  f.eth_src = config_.mac;
  f.eth_dst = qp.remote.mac;
  f.ip_src = config_.ip;
  f.ip_dst = qp.remote.ip;
  f.dscp = static_cast<uint8_t>(qp.remote.traffic_class >> 2);
  f.ecn = 0b10;  // ECT(0): RoCEv2 traffic is ECN-capable
  f.ttl = qp.remote.hop_limit;
  f.ipv4_id = next_ipv4_id();
  f.udp_src_port = qp.udp_src_port;
  if (packet::is_ib(f.link)) {
    // LRH: LIDs, SL from the address vector. VL = SL for now: there is no
    // SL-to-VL table until the fabric models switches and VL arbitration; SL 15
    // goes on VL 0, as VL 15 carries subnet management packets only.
    f.slid = config_.lid;
    f.dlid = qp.remote.lid;
    f.lrh_sl = static_cast<uint8_t>(qp.remote.sl & 0x0F);
    f.lrh_vl = f.lrh_sl == 15 ? 0 : f.lrh_sl;
    // GRH (IbGlobal): GIDs, traffic class and hop limit from the address vector.
    // The address vector has no flow label yet: 0, as an SM path record gives by default.
    f.sgid = config_.ip;
    f.dgid = qp.remote.ip;
    f.grh_tclass = qp.remote.traffic_class;
    f.grh_flow_label = 0;
    f.grh_hop_limit = qp.remote.hop_limit;
  }
  f.dest_qp = qp.dest_qpn.value();
  packet::derive_fields(f);  // LNH from the link kind
  return f;
}

void Nic::send_cnp(QpContext& qp) {
  // RoCEv2 annex A17.9.3: BTH with opcode CNP, the destination QP, BECN set, the
  // P_Key; PSN and the rest zero; 16 reserved bytes. Sent not ECN-capable, with
  // the DSCP and priority congestion control gives CNPs.
  if (!packet::is_roce(config_.link) || congestion_ == nullptr) return;
  packet::PacketFields f = packet_template(qp);
  f.opcode = packet::Opcode::Cnp;
  f.psn = 0;
  f.becn = true;
  f.dscp = static_cast<uint8_t>(congestion_->params().cnp_dscp & 0x3F);
  f.ecn = 0;
  packet::derive_fields(f);
  fabric::Frame frame = pool_.acquire(packet::frame_length(f));
  if (!packet::build(f, {}, frame.bytes())) return;
  frame.meta().priority = static_cast<uint8_t>(congestion_->params().cnp_802p_prio & 7);
  frame.meta().flow_id = qp.qpn.value();
  frame.meta().created = now();
  transmit(std::move(frame));
  ++counters_.cnps_sent;
}

void Nic::enable_pfc(const fabric::PfcParams& params, uint64_t rx_buffer_bytes) {
  if (port_ == nullptr || !params.enabled()) return;
  const uint32_t frame = config_.params.mtu + 128;
  const uint64_t headroom = params.headroom_bytes > 0 ? params.headroom_bytes
                                                      : fabric::default_headroom(port_->params(), frame);
  pfc_xoff_ = rx_buffer_bytes > 2 * headroom ? rx_buffer_bytes - headroom : rx_buffer_bytes / 2;
  pfc_xon_ = pfc_xoff_ > 2 * frame ? pfc_xoff_ - 2 * frame : 0;
  pfc_ = std::make_unique<fabric::PfcGenerator>(sim_, pool_, *port_, config_.mac, params);
}

void Nic::rx_buffered(uint8_t priority, int64_t delta) {
  priority &= 7;
  rx_bytes_[priority] = static_cast<uint64_t>(static_cast<int64_t>(rx_bytes_[priority]) + delta);
  rx_total_ = static_cast<uint64_t>(static_cast<int64_t>(rx_total_) + delta);
  rx_peak_ = std::max(rx_peak_, rx_total_);
  if (delta < 0 && port_ != nullptr) port_->return_credit(priority, static_cast<uint64_t>(-delta));  // IB credits
  if (pfc_ == nullptr) return;
  if (rx_bytes_[priority] > pfc_xoff_) {
    pfc_->set_congested(priority, true);
  } else if (rx_bytes_[priority] <= pfc_xon_) {
    pfc_->set_congested(priority, false);
  }
}

bool Nic::tx_has_room(size_t bytes) const {
  return port_ != nullptr && port_->queued_total() + bytes <= params().tx_buffer_bytes && port_->has_room_total(bytes);
}

bool Nic::addressed_to_self(const fabric::Frame& frame) const {
  const auto b = frame.bytes_as_built();  // headers only: no need for the CRCs
  if (packet::is_roce(config_.link))
    return b.size() >= 6 && std::memcmp(b.data(), config_.mac.data(), 6) == 0;
  // IB: the LRH's DLID (bytes 2..3, big-endian).
  return b.size() >= 4 && ((static_cast<uint16_t>(b[2]) << 8) | static_cast<uint16_t>(b[3])) == config_.lid;
}

void Nic::deliver_loopback() {
  fabric::Frame f = loopback_.pop_front();
  if (!loopback_.empty()) scheduler().schedule(loopback_event_, now());
  receive(std::move(f));
}

void Nic::transmit(fabric::Frame&& frame) {
  if (addressed_to_self(frame)) {
    ++counters_.loopback;
    loopback_.push_back(std::move(frame));
    if (!loopback_event_.scheduled()) scheduler().schedule(loopback_event_, now());
    return;
  }
  if (port_ == nullptr) return;
  ++counters_.tx_packets;
  counters_.tx_bytes += frame.size();
  if (!port_->send(std::move(frame))) ++counters_.tx_drops;
}

void Nic::qp_fatal(QpContext& qp, WcStatus status) {
  if (qp.state == QpState::Err && status != WcStatus::WrFlushErr) return;
  enter_error(qp, status, qp.state != QpState::Err);
}

void Nic::enter_error(QpContext& qp, WcStatus status, bool entering) {
  qp.state = QpState::Err;
  scheduler().cancel(*qp.retransmit_timer);
  bool first = true;
  while (!qp.send_entries.empty()) {
    const SendEntry e = qp.send_entries.pop_front();
    cqe_writer_.complete_send(qp, e, first ? status : WcStatus::WrFlushErr);
    first = false;
  }
  qp.next_entry = 0;
  qp.next_packet = 0;
  qp.rd_atomic_inflight = 0;
  qp.responses_queued = 0;
  while (!qp.recv_wqes.empty()) flush_recv(qp, qp.recv_wqes.pop_front());
  // A QP on an SRQ will take no more of its WQEs: IBTA's Last WQE Reached event.
  if (entering && qp.srq != 0) async_event(AsyncEvent::QpLastWqeReached, qp.qpn.value());
  sim_.log().log(sim::LogLevel::Info, config_.name, [&](std::ostream& os) {
    os << "QP " << qp.qpn.value() << " -> ERR (" << to_string(status) << ')';
  });
}

void Nic::flush_recv(QpContext& qp, const RecvWqe& w) {
  Cqe c{};
  c.wr_id = w.wr_id;
  c.status = WcStatus::WrFlushErr;
  c.opcode = WcOpcode::Recv;
  c.qp_num = qp.qpn.value();
  cqe_writer_.post(qp, qp.recv_cq, c);
}

}  // namespace rnicsim::nic
