#include "scenario/workload.hpp"

#include <algorithm>
#include <cstring>

namespace rnicsim::scenario {

using nic::Cqe;
using nic::WcOpcode;
using nic::WcStatus;

// One side of a workload: a CQ, a QP with its rings, and a registered buffer.
class Workload::Endpoint : public nic::CompletionListener {
public:
  Endpoint(Workload& w, Host& host, uint32_t sq_entries, uint32_t rq_entries, uint64_t buffer_size)
      : w_(w), host_(host), poll_([this] { poll(); }, "host.poll") {
    const uint32_t cq_entries = sq_entries + rq_entries;
    cq_base_ = host.memory.allocate(size_t{cq_entries} * sizeof(Cqe), 4096);
    sq_base_ = host.memory.allocate(size_t{sq_entries} * sizeof(nic::SendWqe), 4096);
    rq_base_ = host.memory.allocate(size_t{rq_entries} * sizeof(nic::RecvWqe), 4096);
    buffer_ = host.memory.allocate(buffer_size, 4096);
    cq_reader_.emplace(host.memory.span(cq_base_, size_t{cq_entries} * sizeof(Cqe)), cq_entries);
    sq_.emplace(host.memory.span(sq_base_, size_t{sq_entries} * sizeof(nic::SendWqe)), sq_entries);
    rq_.emplace(host.memory.span(rq_base_, size_t{rq_entries} * sizeof(nic::RecvWqe)), rq_entries);
    nic::Nic& n = *host.nic;
    pd_ = n.alloc_pd();
    cqn_ = n.create_cq(cq_base_, cq_entries, this);
    nic::QpInit init;
    init.type = nic::QpType::Rc;
    init.pd = pd_;
    init.send_cq = init.recv_cq = cqn_;
    init.sq = nic::WorkRing{sq_base_, sq_entries};
    init.rq = nic::WorkRing{rq_base_, rq_entries};
    qpn_ = n.create_qp(init);
    mr_ = n.reg_mr(pd_, buffer_, buffer_size,
                   nic::kAccessLocalWrite | nic::kAccessRemoteWrite | nic::kAccessRemoteRead);
  }

  // RESET -> INIT -> RTR -> RTS towards `peer`, as a verbs program would do it.
  void connect(const Endpoint& peer, uint32_t path_mtu) {
    nic::Nic& n = *host_.nic;
    nic::QpAttr a;
    a.state = nic::QpState::Init;
    a.access_flags = nic::kAccessRemoteWrite | nic::kAccessRemoteRead;
    check(n.modify_qp(qpn_, a, nic::kQpState | nic::kQpPkeyIndex | nic::kQpPort | nic::kQpAccessFlags));
    a.state = nic::QpState::Rtr;
    a.path_mtu = path_mtu;
    a.dest_qpn = peer.qpn_.value();
    a.rq_psn = 0;
    a.av = peer.host_.address;
    check(n.modify_qp(qpn_, a,
                      nic::kQpState | nic::kQpAv | nic::kQpPathMtu | nic::kQpDestQpn | nic::kQpRqPsn |
                          nic::kQpMaxDestRdAtomic | nic::kQpMinRnrTimer));
    a.state = nic::QpState::Rts;
    a.sq_psn = 0;
    check(n.modify_qp(qpn_, a,
                      nic::kQpState | nic::kQpSqPsn | nic::kQpTimeout | nic::kQpRetryCnt | nic::kQpRnrRetry |
                          nic::kQpMaxQpRdAtomic));
  }

  void on_completion(uint32_t) override {
    if (!poll_.scheduled()) host_.nic->scheduler().schedule_in(poll_, w_.host_params_.poll_delay);
  }

  void poll() {
    while (auto c = cq_reader_->poll()) w_.on_cqe(*this, *c);
  }

  void post_send(const nic::SendWqe& wqe) {
    host_.nic->ring_doorbell(nic::QueueKind::Send, qpn_, sq_->post(wqe));
  }
  void post_recv(const nic::RecvWqe& wqe) {
    host_.nic->ring_doorbell(nic::QueueKind::Recv, qpn_, rq_->post(wqe));
  }

  Host& host() { return host_; }
  uint64_t buffer() const { return buffer_; }
  const nic::MemoryRegion& mr() const { return mr_; }
  uint32_t sq_entries() const { return sq_->entries(); }

private:
  static void check(int rc) {
    if (rc != 0) throw std::logic_error("modify_qp failed");
  }
  Workload& w_;
  Host& host_;
  sim::Event poll_;
  uint64_t cq_base_ = 0, sq_base_ = 0, rq_base_ = 0, buffer_ = 0;
  std::optional<nic::CqRingReader> cq_reader_;
  std::optional<nic::WqeRingWriter<nic::SendWqe>> sq_;
  std::optional<nic::WqeRingWriter<nic::RecvWqe>> rq_;
  uint32_t pd_ = 0, cqn_ = 0;
  nic::Qpn qpn_;
  nic::MemoryRegion mr_;
};

namespace {
uint32_t ring_size(uint64_t n) {
  uint32_t s = 16;
  while (s < n) s <<= 1;
  return s;
}
bool needs_recv(WorkloadOp op) { return op != WorkloadOp::Write; }
}  // namespace

Workload::Workload(World& world, const WorkloadSpec& spec, uint32_t path_mtu, uint64_t seed)
    : world_(world), spec_(spec) {
  const bool lat = spec.pattern == WorkloadPattern::Latency;
  const uint32_t depth = lat ? 1 : spec.tx_depth;
  const uint32_t sq_entries = ring_size(depth);
  const uint32_t rq_entries = ring_size(std::min<uint64_t>(spec.count, 512));
  client_ = std::make_unique<Endpoint>(*this, world.host(spec.from), sq_entries, rq_entries, spec.size);
  server_ = std::make_unique<Endpoint>(*this, world.host(spec.to), sq_entries, rq_entries, spec.size);
  client_->connect(*server_, path_mtu);
  server_->connect(*client_, path_mtu);
  post_time_.resize(sq_entries);
  // The message is real bytes: a pattern drawn from the scenario seed.
  sim::RandomStream r(seed, "workload." + spec.name + ".data");
  auto data = client_->host().memory.span(client_->buffer(), spec.size);
  for (size_t i = 0; i < data.size(); i += 8) {
    const uint64_t v = r.next_u64();
    std::memcpy(data.data() + i, &v, std::min<size_t>(8, data.size() - i));
  }
}

Workload::~Workload() = default;

void Workload::start(std::function<void()> on_done) {
  on_done_ = std::move(on_done);
  start_ = world_.sim().now();
  if (needs_recv(spec_.op)) {
    const uint64_t initial = std::min<uint64_t>(spec_.count, 512);
    for (uint64_t i = 0; i < initial; ++i) {
      post_recv(*server_);
      if (spec_.pattern == WorkloadPattern::Latency) post_recv(*client_);
    }
  }
  if (spec_.pattern == WorkloadPattern::Latency) {
    ping_sent_ = world_.sim().now();
    post_send(*client_, posted_++);
  } else {
    while (posted_ < spec_.count && posted_ < spec_.tx_depth) post_send(*client_, posted_++);
  }
}

void Workload::post_send(Endpoint& ep, uint64_t index) {
  nic::SendWqe w{};
  w.wr_id = index;
  w.send_flags = nic::kSendSignaled;
  w.opcode = spec_.op == WorkloadOp::Write      ? nic::WrOpcode::RdmaWrite
             : spec_.op == WorkloadOp::WriteImm ? nic::WrOpcode::RdmaWriteWithImm
                                                : nic::WrOpcode::Send;
  w.imm_data = __builtin_bswap32(static_cast<uint32_t>(index));
  Endpoint& peer = &ep == client_.get() ? *server_ : *client_;
  w.remote_addr = peer.buffer();
  w.rkey = peer.mr().rkey;
  w.num_sge = 1;
  w.sge[0] = nic::Sge{ep.buffer(), static_cast<uint32_t>(spec_.size), ep.mr().lkey};
  if (&ep == client_.get()) post_time_[index % post_time_.size()] = world_.sim().now();
  ep.post_send(w);
}

void Workload::post_recv(Endpoint& ep) {
  nic::RecvWqe r{};
  r.wr_id = received_;
  r.num_sge = 1;
  r.sge[0] = nic::Sge{ep.buffer(), static_cast<uint32_t>(spec_.size), ep.mr().lkey};
  ep.post_recv(r);
}

void Workload::on_cqe(Endpoint& ep, const Cqe& c) {
  if (finished_) return;
  if (c.status != WcStatus::Success) {
    fail(std::string("completion error on ") + ep.host().name + ": " + nic::to_string(c.status));
    return;
  }
  const bool is_recv = c.opcode == WcOpcode::Recv || c.opcode == WcOpcode::RecvRdmaWithImm;
  const sim::Time now = world_.sim().now();
  if (spec_.pattern == WorkloadPattern::Latency) {
    if (!is_recv) return;
    post_recv(ep);  // keep the receive queue full
    if (&ep == server_.get()) {
      post_send(*server_, c.wr_id);  // pong
      return;
    }
    latency_.record(static_cast<uint64_t>((now - ping_sent_).picoseconds() / 2));
    if (++completed_ == spec_.count) return finish();
    ping_sent_ = now;
    post_send(*client_, posted_++);
    return;
  }
  // Bandwidth.
  if (is_recv) {
    ++received_;
    if (received_ + std::min<uint64_t>(spec_.count, 512) <= spec_.count) post_recv(*server_);
  } else {
    latency_.record(static_cast<uint64_t>((now - post_time_[c.wr_id % post_time_.size()]).picoseconds()));
    ++completed_;
    if (posted_ < spec_.count) post_send(*client_, posted_++);
  }
  if (completed_ == spec_.count && (!needs_recv(spec_.op) || received_ == spec_.count)) finish();
}

void Workload::finish() {
  finished_ = true;
  end_ = world_.sim().now();
  auto sent = client_->host().memory.span(client_->buffer(), spec_.size);
  auto got = server_->host().memory.span(server_->buffer(), spec_.size);
  data_verified_ = std::equal(sent.begin(), sent.end(), got.begin());
  if (on_done_) on_done_();
}

void Workload::fail(const std::string& why) {
  failed_ = true;
  failure_ = why;
  finish();
}

}  // namespace rnicsim::scenario
