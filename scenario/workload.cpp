#include "scenario/workload.hpp"

#include <stdexcept>

#include "nic_model/qp_state.hpp"

namespace rnicsim::scenario {

uint32_t ring_entries(uint64_t n) {
  uint32_t s = 1;
  while (s < n) s <<= 1;
  return s;
}

void Workload::write_results(sim::ByteWriter& out) const {
  out.put(start_), out.put(end_), out.put(messages_), out.put(bytes_), out.put(counts_), out.put(send_completions_);
  latency_.write(out);
  const uint8_t flags[] = {completion_order_ok_, started_, finished_, failed_, data_verified_, data_checked_};
  out.put(flags);
  out.put_string(failure_);
  out.put_vector(rows_);
}

void Workload::read_results(sim::ByteReader& in) {
  start_ = in.take<sim::Time>(), end_ = in.take<sim::Time>();
  messages_ = in.take<uint64_t>(), bytes_ = in.take<uint64_t>();
  counts_ = in.take<WorkloadCounts>();
  send_completions_ = in.take<std::array<uint64_t, kCompletionStatuses>>();
  latency_.read(in);
  const auto flags = in.take<std::array<uint8_t, 6>>();
  completion_order_ok_ = flags[0], started_ = flags[1], finished_ = flags[2], failed_ = flags[3];
  data_verified_ = flags[4], data_checked_ = flags[5];
  failure_ = in.take_string();
  rows_ = in.take_vector<PerftestRow>();
}

void Workload::begin(PartDone on_part_done) {
  on_part_done_ = std::move(on_part_done);
  clock_ = &part_hosts(0).front()->nic->scheduler();
  // The world's time, not its first part's clock: across ranks that part's
  // partition may be another rank's, whose clock stands still here.
  start_ = world_.now();
  started_ = true;
}

void Workload::finish() {
  if (finished_) return;
  finished_ = true;
  end_ = now();
  if (on_part_done_) on_part_done_(0);
}

void Workload::fail(const std::string& why) {
  if (finished_) return;
  failed_ = true;
  data_verified_ = false;
  failure_ = why;
  finish();
}

// --- HostSide ---------------------------------------------------------------------

HostSide::HostSide(Host& host, const HostTiming& timing, uint32_t send_cq_entries, uint32_t recv_cq_entries,
                   uint64_t buffer_bytes, uint32_t cores)
    : host_(host),
      timing_(timing),
      poll_([this] { poll(); }, "host.poll_cq", host.actor()),
      mem_poll_([this] { mem_poll(); }, "host.poll_mem", host.actor()),
      mem_act_(
          [this] {
            auto fn = std::move(watch_fn_);
            watch_fn_ = nullptr;
            fn();
          },
          "host.poll_mem_seen", host.actor()),
      cores_(*host.nic, host.actor(), cores, {timing.post_cost, timing.mmio_cost, timing.blueflame_wqe_size}),
      buffer_bytes_(buffer_bytes) {
  nic::Nic& n = *host.nic;
  pd_ = n.alloc_pd();
  tally_ = n.open_tally();
  const uint64_t scq = host.memory.allocate(size_t{send_cq_entries} * sizeof(nic::Cqe), 4096);
  send_cq_.emplace(host.memory.span(scq, size_t{send_cq_entries} * sizeof(nic::Cqe)), send_cq_entries);
  send_cqn_ = n.create_cq(scq, send_cq_entries, this);
  if (recv_cq_entries > 0) {
    const uint64_t rcq = host.memory.allocate(size_t{recv_cq_entries} * sizeof(nic::Cqe), 4096);
    recv_cq_.emplace(host.memory.span(rcq, size_t{recv_cq_entries} * sizeof(nic::Cqe)), recv_cq_entries);
    recv_cqn_ = n.create_cq(rcq, recv_cq_entries, this);
  } else {
    recv_cqn_ = send_cqn_;
  }
  buffer_ = host.memory.allocate(buffer_bytes, 4096);
  mr_ = n.reg_mr(pd_, buffer_, buffer_bytes,
                 nic::kAccessLocalWrite | nic::kAccessRemoteWrite | nic::kAccessRemoteRead | nic::kAccessRemoteAtomic);
}

HostSide::~HostSide() = default;

uint32_t HostSide::add_qp(uint32_t sq_entries, uint32_t rq_entries, nic::QpType type) {
  nic::SimulatedHostMemory& mem = host_.memory;
  const uint64_t sq = mem.allocate(size_t{sq_entries} * nic::kMinWqeStride, 4096);
  const uint64_t rq = mem.allocate(size_t{rq_entries} * nic::kMinWqeStride, 4096);
  nic::QpInit init;
  init.type = type;
  init.pd = pd_;
  init.send_cq = send_cqn_;
  init.recv_cq = recv_cqn_;
  init.sq = nic::WorkRing{sq, sq_entries};
  init.rq = nic::WorkRing{rq, rq_entries};
  init.tally = tally_;
  const nic::Qpn qpn = host_.nic->create_qp(init);
  qps_.push_back(Qp{qpn, type, nic::WqeRingWriter<nic::SendWqe>(mem.span(sq, size_t{sq_entries} * nic::kMinWqeStride), sq_entries),
                    nic::WqeRingWriter<nic::RecvWqe>(mem.span(rq, size_t{rq_entries} * nic::kMinWqeStride), rq_entries)});
  return static_cast<uint32_t>(qps_.size() - 1);
}

uint64_t HostSide::payload_placed() const { return host_.nic->payload_placed_in(tally_); }

HostSide::Connection HostSide::connection_of(const WorkloadSpec& spec, uint32_t path_mtu, uint8_t rd_atomic) {
  return {path_mtu, rd_atomic, spec.priority, spec.timeout, spec.retry_cnt, spec.rnr_retry, spec.ack_timeout,
          spec.connection};
}

void HostSide::connect(uint32_t qp, const HostSide& peer, uint32_t peer_qp, const Connection& c) {
  connect_to(qp, peer.host_.address, peer.qps_[peer_qp].qpn, nic::Psn(0), nic::Psn(0), c);
}

namespace {

// The remote access a peer gets, by the columns of nic::kQpTypes: UC has no
// READ or atomics, UD no remote access at all.
constexpr uint32_t kRemoteAccess[] = {nic::kAccessRemoteWrite | nic::kAccessRemoteRead | nic::kAccessRemoteAtomic,
                                      nic::kAccessRemoteWrite, 0};
static_assert(std::size(kRemoteAccess) == nic::kQpTypeCount);

}  // namespace

void HostSide::connect_to(uint32_t qp, const nic::AddressVector& peer, nic::Qpn peer_qpn, nic::Psn rq_psn,
                          nic::Psn sq_psn, const Connection& c) {
  nic::Nic& n = *host_.nic;
  Qp& q = qps_[qp];
  // Each transition with the attributes the IBTA requires of it for the QP's
  // transport (table 91, as the state machine has them), as a verbs program does.
  nic::QpAttr a;
  auto go = [&](nic::QpState from, nic::QpState to) {
    a.state = to;
    if (n.modify_qp(q.qpn, a, nic::transition_rule(c.type, from, to).required) != 0)
      throw std::logic_error("modify_qp failed");
  };
  a.access_flags = kRemoteAccess[nic::column_of(c.type)];
  a.qkey = kQkey;
  go(nic::QpState::Reset, nic::QpState::Init);
  a.path_mtu = c.path_mtu;
  a.dest_qpn = peer_qpn;
  a.rq_psn = rq_psn;
  a.av = peer;
  a.av.sl = c.priority;
  a.av.traffic_class = static_cast<uint8_t>(c.priority << 5);  // DSCP 8 x priority, ECN bits 0
  a.max_dest_rd_atomic = c.rd_atomic;
  go(nic::QpState::Init, nic::QpState::Rtr);
  a.sq_psn = sq_psn;
  a.max_rd_atomic = c.rd_atomic;
  a.timeout = c.timeout;
  a.ack_timeout = c.ack_timeout;
  a.retry_cnt = c.retry_cnt;
  a.rnr_retry = c.rnr_retry;
  go(nic::QpState::Rtr, nic::QpState::Rts);
  if (c.type == nic::QpType::Ud) {
    q.ud_ah = n.create_ah(a.av);  // where the QP's SENDs go (perftest makes one AH per peer)
    q.ud_peer = peer_qpn;
  }
}

void HostSide::address_datagram(uint32_t qp, nic::SendWqe& w) const {
  const Qp& q = qps_[qp];
  w.ud_ah = q.ud_ah;
  w.ud_remote_qpn = q.ud_peer;
  w.ud_remote_qkey = kQkey;
}

sim::Time HostSide::post_send(uint32_t qp, const nic::SendWqe& w, bool ring, bool alone) {
  Qp& q = qps_[qp];
  const uint64_t producer = q.sq.post(w);
  const bool blueflame = ring && alone && timing_.blueflame;
  return cores_.post(qp, nic::WorkQueue::send(q.qpn), producer, ring, blueflame ? &w : nullptr, q.type);
}

void HostSide::post_recv(uint32_t qp, const nic::RecvWqe& w) {
  Qp& q = qps_[qp];
  cores_.post_recv(qp, nic::WorkQueue::recv(q.qpn), q.rq.post(w));
}

void HostSide::on_completion(nic::Cqn) {
  if (!poll_.scheduled()) host_.nic->scheduler().schedule_in(poll_, timing_.poll_delay);
}

std::optional<uint64_t> HostSide::consumer_index(nic::Cqn cqn) const {
  if (cqn == send_cqn_ && send_cq_) return send_cq_->consumer();
  if (cqn == recv_cqn_ && recv_cq_) return recv_cq_->consumer();
  return std::nullopt;
}

void HostSide::poll() {
  auto count = [this](const nic::Cqe& c) {
    ++host_.completions[std::min<size_t>(static_cast<size_t>(c.status), kCompletionStatuses - 1)];
    if (auto* t = host_.nic->timeline())
      t->record({.kind = nic::TimelineKind::Poll, .qpn = c.qp_num, .wr_id = c.wr_id,
                 .flag = c.opcode < nic::WcOpcode::Recv, .start = host_.nic->now()});
  };
  while (auto c = send_cq_->poll()) {
    count(*c);
    handler_(*c, false);
  }
  if (recv_cq_)
    while (auto c = recv_cq_->poll()) {
      count(*c);
      handler_(*c, true);
    }
}

void HostSide::watch_byte(uint64_t addr, uint8_t value, std::function<void()> fn) {
  watch_addr_ = addr;
  watch_value_ = value;
  watch_fn_ = std::move(fn);
  if (host_.nic->config().elide_payload) host_.memory.watch(addr);
  mem_poll();
}

void HostSide::mem_poll() {
  if (!watch_fn_ || mem_act_.scheduled()) return;
  // Size-only: no byte changes; the writes that would have changed it are counted
  // (each of the peer's messages writes the next value).
  const uint8_t b = static_cast<uint8_t>(host_.nic->config().elide_payload ? host_.memory.writes_seen(watch_addr_)
                                                                           : std::to_integer<uint64_t>(host_.memory.access(watch_addr_, 1)[0]));
  if (b == watch_value_) {
    host_.nic->scheduler().schedule_in(mem_act_, timing_.poll_delay);
    return;
  }
  host_.nic->scheduler().schedule_in(mem_poll_, timing_.mem_poll_interval);
}

}  // namespace rnicsim::scenario
