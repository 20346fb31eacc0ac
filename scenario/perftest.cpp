#include "scenario/perftest.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

namespace rnicsim::scenario {
namespace {

constexpr uint64_t kQpShift = 40;  // wr_id = qp << 40 | index
constexpr uint64_t kIndexMask = (uint64_t{1} << kQpShift) - 1;
constexpr uint64_t kSharedSlicesAbove = 64ull << 20;  // per region; above it QPs share one slice
constexpr int kLatMeasureTail = 2;                    // perftest's LAT_MEASURE_TAIL

uint64_t wr_id(uint32_t qp, uint64_t index) { return (uint64_t{qp} << kQpShift) | (index & kIndexMask); }


// perftest's latency tests of WRITE and SEND bounce each message back (ping-pong).
bool is_ping_pong(WorkloadOp op) { return op_row(op).shape == OpShape::Message; }

bool carries_imm(WorkloadOp op) { return op_row(op).immediate; }

void fill_pattern(std::span<std::byte> data, uint64_t seed, const std::string& path) {
  sim::RandomStream r(seed, path);
  for (size_t i = 0; i < data.size(); i += 8) {
    const uint64_t v = r.next_u64();
    std::memcpy(data.data() + i, &v, std::min<size_t>(8, data.size() - i));
  }
}

double ps_to_us(double ps) { return ps / 1e6; }

}  // namespace

// One side of a latency test (perftest's run_iter_lat_write / _write_imm / _send):
// [wait for the peer's message] -> [post] -> [wait for the own completion if signaled].
struct PerftestWorkload::LatSide {
  HostSide* host = nullptr;
  bool initiator = false;
  uint64_t scnt = 0, rcnt = 0;   // posted; peer messages consumed
  uint64_t recv_avail = 0;       // receive completions reaped, not consumed yet
  uint64_t cqe_avail = 0;        // send completions reaped, not consumed yet
  bool need_cqe = false;         // waits for the completion of its last post
  bool mem_waiting = false;
  enum class Step { Receive, Post, Complete, Done } step = Step::Receive;
};

PerftestWorkload::PerftestWorkload(World& world, const Scenario& s, const WorkloadSpec& spec, uint64_t seed)
    : Workload(world, spec), timing_(s.host), path_mtu_(s.path_mtu) {
  const bool latency = lat();
  const bool recv = needs_recv(spec.op);
  const uint32_t qps = spec.qps;
  // Atomics target 8 bytes per QP: one cache line each. A UD receive buffer
  // starts with 40 bytes for the GRH, its message after them.
  grh_ = spec.connection == nic::QpType::Ud ? kUdGrhBytes : 0;
  slot_ = is_atomic(spec.op) ? 64 : (spec.size + grh_ + 63) / 64 * 64;
  slices_ = slot_ * qps <= kSharedSlicesAbove ? qps : 1;
  const uint64_t buffer_bytes = 2 * slot_ * slices_;
  sq_entries_ = ring_entries(spec.tx_depth);
  const uint32_t rq_entries = recv ? ring_entries(spec.rx_depth) : 1;
  const uint32_t send_cq = ring_entries(uint64_t{qps} * spec.tx_depth);
  const uint32_t recv_cq = recv ? ring_entries(uint64_t{qps} * spec.rx_depth) : 0;
  // In a bw test the server only receives.
  client_ = std::make_unique<HostSide>(world.host(spec.from), timing_, send_cq, recv_cq, buffer_bytes, spec.processes);
  server_ = std::make_unique<HostSide>(world.host(spec.to), timing_, latency ? send_cq : 1, recv_cq, buffer_bytes,
                                       spec.processes);
  for (uint32_t q = 0; q < qps; ++q) {
    client_->add_qp(sq_entries_, rq_entries, spec.connection);
    server_->add_qp(latency ? sq_entries_ : 1, rq_entries, spec.connection);
  }
  const uint8_t rd_atomic = static_cast<uint8_t>(spec.outs);
  for (uint32_t q = 0; q < qps && !spec.rdma_cm; ++q) {
    client_->connect(q, *server_, q, HostSide::connection_of(spec, path_mtu_, rd_atomic));
    server_->connect(q, *client_, q, HostSide::connection_of(spec, path_mtu_, rd_atomic));
  }
  client_->set_handler([this](const nic::Cqe& c, bool r) { on_cqe(*client_, c, r); });
  server_->set_handler([this](const nic::Cqe& c, bool r) { on_cqe(*server_, c, r); });
  // The messages are real bytes: patterns drawn from the scenario seed, the same
  // in every slice of a side (unless payload bytes are not materialised: atomics
  // still carry theirs).
  data_checked_ = !world.size_only() || is_atomic(spec.op);
  for (HostSide* h : {client_.get(), server_.get()}) {
    if (!data_checked_) break;
    auto first = h->memory(send_addr(*h, 0), slot_);
    fill_pattern(first, seed, "workload." + spec.name + (h == client_.get() ? ".data" : ".data.peer"));
    for (uint32_t q = 1; q < slices_; ++q) std::memcpy(h->memory(send_addr(*h, q), slot_).data(), first.data(), slot_);
  }
  post_time_.resize(size_t{qps} * sq_entries_);
}

// connect: rdma_cm: each QP pair connects through the RDMA CM on the wire, as
// perftest -R does: the client's REQ (its QPN and a PSN of the seeded stream),
// the server's REP once its QP is up, the client's RTU once its own is. The
// traffic starts when every pair is up; the CM's timeouts and retries apply.
struct PerftestWorkload::CmLink : cm::CmUser {
  PerftestWorkload& w;
  cm::ConnectionManager& client_cm;
  cm::ConnectionManager& server_cm;
  uint64_t service;
  sim::RandomStream psns;
  std::map<cm::CommId, uint32_t> pair_of;  // the client's connections
  std::vector<nic::Psn> client_psn;
  uint32_t up = 0;

  CmLink(PerftestWorkload& wl, World& world)
      : w(wl),
        client_cm(world.connection_manager(wl.client_->host())),
        server_cm(world.connection_manager(wl.server_->host())),
        service(cm::service_id(0x0106, world.next_cm_port())),
        psns(world.sim().random("workload." + wl.spec_.name + ".rdma_cm")) {}
  uint8_t rd_atomic() const { return static_cast<uint8_t>(w.spec_.outs); }
  nic::Psn psn() { return nic::Psn(static_cast<uint32_t>(psns.next_u64())); }

  void connect_all() {
    server_cm.listen(service, *this);
    cm::PathTo path;
    path.av = w.server_->host().address;
    path.local_gid = w.client_->host().address.ip;
    path.remote_gid = w.server_->host().address.ip;
    for (uint32_t q = 0; q < w.spec_.qps; ++q) {
      cm::Req r;
      r.service_id = service;
      r.local_qpn = w.client_->qpn(q);
      r.starting_psn = client_psn.emplace_back(psn());
      r.responder_resources = r.initiator_depth = rd_atomic();
      r.remote_cm_response_timeout = r.local_cm_response_timeout = 20;
      r.max_cm_retries = 15;
      r.retry_count = r.rnr_retry_count = 7;
      r.path_mtu = cm::mtu_code(w.path_mtu_);
      pair_of[client_cm.connect(r, path, *this)] = q;
    }
  }
  void on_request(cm::CommId id, const cm::Req& r, const cm::MadSource&) override {
    for (uint32_t q = 0; q < w.spec_.qps; ++q) {
      if (w.client_->qpn(q) != r.local_qpn) continue;
      const nic::Psn mine = psn();
      w.server_->connect_to(q, w.client_->host().address, r.local_qpn, r.starting_psn, mine,
                            HostSide::connection_of(w.spec_, w.path_mtu_, rd_atomic()));
      cm::Rep rep;
      rep.local_qpn = w.server_->qpn(q);
      rep.starting_psn = mine;
      rep.responder_resources = rep.initiator_depth = rd_atomic();
      rep.rnr_retry_count = 7;
      server_cm.accept(id, rep);
      return;
    }
    server_cm.reject(id, cm::kRejConsumerReject);
  }
  void on_reply(cm::CommId id, const cm::Rep& r) override {
    const uint32_t q = pair_of.at(id);
    w.client_->connect_to(q, w.server_->host().address, r.local_qpn, r.starting_psn,
                          client_psn[q], HostSide::connection_of(w.spec_, w.path_mtu_, rd_atomic()));
    client_cm.ready_to_use(id);
    if (++up < w.spec_.qps) return;
    server_cm.stop_listening(service);
    // The workload's time is its traffic's, as perftest's figures are: the
    // set-up shows in the simulated time only.
    w.start_ = w.now();
    w.start_phase();
  }
  void on_rejected(cm::CommId, const cm::Rej& r) override {
    w.fail("the RDMA CM rejected the connection (reason " + std::to_string(r.reason) + ")");
  }
  void on_timeout(cm::CommId) override { w.fail("the RDMA CM connection timed out (no REP or RTU)"); }
};

PerftestWorkload::~PerftestWorkload() = default;

uint64_t PerftestWorkload::send_addr(const HostSide& h, uint32_t qp) const { return h.buffer() + slice(qp) * slot_; }
uint64_t PerftestWorkload::recv_addr(const HostSide& h, uint32_t qp) const {
  return h.buffer() + (uint64_t{slices_} + slice(qp)) * slot_;
}

void PerftestWorkload::start(PartDone on_part_done) {
  begin(std::move(on_part_done));
  phase_ = 0;
  if (spec_.rdma_cm && !cm_) {
    cm_ = std::make_unique<CmLink>(*this, world_);
    cm_->connect_all();
    return;
  }
  start_phase();
}

void PerftestWorkload::start_phase() {
  size_ = spec_.sizes[phase_];
  in_phase_ = true;
  phase_base_ = received();
  const uint32_t qps = spec_.qps;
  const uint64_t n = spec_.iterations * qps;
  // Atomic targets start at zero; the byte a write latency test polls too.
  for (uint32_t q = 0; q < slices_; ++q) {
    if (is_atomic(spec_.op)) std::memset(server_->memory(recv_addr(*server_, q), 8).data(), 0, 8);
    if (lat() && spec_.op == WorkloadOp::Write)
      for (HostSide* h : {client_.get(), server_.get()}) h->memory(recv_addr(*h, q) + size_ - 1, 1)[0] = std::byte{0};
  }
  if (lat()) {
    lat_client_ = std::make_unique<LatSide>();
    lat_client_->host = client_.get();
    lat_client_->initiator = true;
    tposted_.assign(spec_.iterations, sim::Time());
    lat_sides_left_ = 1;
    if (is_ping_pong(spec_.op)) {
      lat_server_ = std::make_unique<LatSide>();
      lat_server_->host = server_.get();
      lat_sides_left_ = 2;
      if (needs_recv(spec_.op))
        for (uint64_t i = 0; i < spec_.rx_depth; ++i) {
          post_recv(*server_, 0, i);
          post_recv(*client_, 0, i);
        }
    }
    lat_advance(*lat_client_);
    if (lat_server_) lat_advance(*lat_server_);
    return;
  }
  scnt_.assign(qps, 0);
  ccnt_.assign(qps, 0);
  rcnt_.assign(qps, 0);
  totscnt_ = totccnt_ = totrcnt_ = 0;
  tposted_.assign(n, sim::Time());
  tcompleted_.assign(n, sim::Time());
  completed_at_.clear();
  if (needs_recv(spec_.op))
    for (uint32_t q = 0; q < qps; ++q)
      for (uint64_t i = 0; i < spec_.rx_depth; ++i) post_recv(*server_, q, i);
  for (uint32_t q = 0; q < qps; ++q) bw_pump(q);
}

nic::SendWqe PerftestWorkload::make_wqe(HostSide& from, uint32_t qp, uint64_t index, bool signaled) {
  HostSide& to = &from == client_.get() ? *server_ : *client_;
  nic::SendWqe w{};
  w.wr_id = wr_id(qp, index);
  w.send_flags = signaled ? nic::kSendSignaled : 0;
  w.rkey = to.rkey();
  w.num_sge = 1;
  const uint32_t len = static_cast<uint32_t>(size_);
  w.opcode = op_row(spec_.op).opcode;
  switch (op_row(spec_.op).shape) {
    case OpShape::Message:
      w.imm_data = __builtin_bswap32(static_cast<uint32_t>(index));
      w.remote_addr = recv_addr(to, qp);
      if (spec_.connection == nic::QpType::Ud) from.address_datagram(qp, w);
      if (size_ <= spec_.inline_size) {
        w.send_flags |= nic::kSendInline;
        w.inline_len = len;
        w.num_sge = 0;
        std::memcpy(w.inline_data.data(), from.memory(send_addr(from, qp), len).data(), len);
      } else {
        w.sge[0] = nic::Sge{send_addr(from, qp), len, from.lkey()};
      }
      break;
    case OpShape::Read:
      w.remote_addr = send_addr(to, qp);
      w.sge[0] = nic::Sge{recv_addr(from, qp), len, from.lkey()};
      break;
    case OpShape::Atomic:
      // FETCH_AND_ADD adds 1 (perftest's ATOMIC_ADD_VALUE); CMP_AND_SWAP moves the
      // target from `index` to `index + 1`, so every one in order succeeds.
      w.remote_addr = recv_addr(to, qp);
      w.compare_add = spec_.op == WorkloadOp::FetchAdd ? 1 : index;
      w.swap = index + 1;
      w.sge[0] = nic::Sge{recv_addr(from, qp), 8, from.lkey()};
      break;
  }
  return w;
}

void PerftestWorkload::post_recv(HostSide& side, uint32_t qp, uint64_t index) {
  nic::RecvWqe r{};
  r.wr_id = wr_id(qp, index);
  r.num_sge = 1;
  r.sge[0] = nic::Sge{recv_addr(side, qp), static_cast<uint32_t>(std::max<uint64_t>(size_, 1) + grh_), side.lkey()};
  side.post_recv(qp, r);
}

void PerftestWorkload::on_cqe(HostSide& side, const nic::Cqe& c, bool recv) {
  // Counted even after the workload ends: a message delivered twice shows here.
  if (recv && c.status == nic::WcStatus::Success) ++counts_.receives_completed;
  if (!recv) count_send_cqe(side, c);
  if (finished_) return;
  if (c.status != nic::WcStatus::Success) {
    fail(std::string("completion error on ") + side.host().name + " (" + (recv ? "receive" : to_string(spec_.op)) +
         "): " + nic::to_string(c.status));
    return;
  }
  const uint32_t qp = static_cast<uint32_t>(c.wr_id >> kQpShift);
  const uint64_t index = c.wr_id & kIndexMask;
  if (lat()) {
    LatSide& s = &side == client_.get() ? *lat_client_ : *lat_server_;
    if (recv) {
      check_imm(c, s.rcnt + s.recv_avail);
      ++s.recv_avail;
    } else {
      ++s.cqe_avail;
      if (is_atomic(spec_.op)) {
        // The atomic returns the target's value before it: the iteration number.
        uint64_t got = 0;
        std::memcpy(&got, client_->memory(recv_addr(*client_, 0), 8).data(), 8);
        if (got != index) data_verified_ = false;
      }
    }
    lat_advance(s);
    return;
  }
  if (recv) {
    check_imm(c, rcnt_[qp]);
    ++rcnt_[qp];
    ++totrcnt_;
    if (rcnt_[qp] + spec_.rx_depth <= spec_.iterations) post_recv(*server_, qp, rcnt_[qp] + spec_.rx_depth - 1);
    bw_check_done();
    return;
  }
  bw_on_send_cqe(qp, index);
}

// RC delivers a QP's messages once each and in order: the n-th receive completion
// of a QP carries the immediate of the QP's n-th message.
void PerftestWorkload::check_imm(const nic::Cqe& c, uint64_t nth) {
  if (carries_imm(spec_.op) && c.imm_data != __builtin_bswap32(static_cast<uint32_t>(nth))) data_verified_ = false;
}

void PerftestWorkload::count_send_cqe(const HostSide& side, const nic::Cqe& c) {
  ++send_completions_[std::min<size_t>(static_cast<size_t>(c.status), kCompletionStatuses - 1)];
  const size_t key = 2 * (c.wr_id >> kQpShift) + (&side == server_.get() ? 1 : 0);
  if (key >= qp_errored_.size()) qp_errored_.resize(key + 1);
  const bool flush = c.status == nic::WcStatus::WrFlushErr;
  const bool ok = c.status == nic::WcStatus::Success;
  // After the first error only flushes; a flush only after an error.
  if (qp_errored_[key] ? !flush : flush) completion_order_ok_ = false;
  if (!ok) qp_errored_[key] = true;
}

// --- bw ---------------------------------------------------------------------------
// perftest's run_iter_bw: each of `qps` QPs posts `iterations` WQEs, keeping
// at most tx_depth outstanding (it posts a post list of post_list WQEs, one
// doorbell, whenever posted + post_list <= tx_depth + completed). WQE s of a QP is
// signaled when s % cq_mod == cq_mod - 1 or it is the last; a completion accounts
// for every WQE of its QP up to it. tposted[k] is when the k-th WQE (over all QPs)
// was posted and tcompleted[k] when the completion covering the k-th was reaped.
//   BW average = size * N / (tcompleted[N-1] - tposted[0]), N = iterations * qps
//   BW peak    = size / min over i <= j of (tcompleted[j] - tposted[i]) / (j - i + 1)
//   MsgRate    = N / (tcompleted[N-1] - tposted[0])
// SEND and WRITE_WITH_IMM: the receiver keeps rx_depth receive WQEs posted per QP
// and posts another after each receive completion while more are to come.

void PerftestWorkload::bw_pump(uint32_t qp) {
  const uint64_t iters = spec_.iterations;
  const uint32_t pl = spec_.post_list;
  while (scnt_[qp] < iters && scnt_[qp] + pl <= spec_.tx_depth + ccnt_[qp]) {
    for (uint32_t k = 0; k < pl; ++k) {
      const uint64_t s = scnt_[qp] + k;
      const bool signaled = s % spec_.cq_mod == spec_.cq_mod - 1 || s == iters - 1;
      // perftest takes the time as it posts: when the QP's core gets to it.
      const sim::Time t = client_->post_send(qp, make_wqe(*client_, qp, s, signaled), k + 1 == pl, pl == 1);
      tposted_[totscnt_ + k] = t;
      post_time_[size_t{qp} * sq_entries_ + s % sq_entries_] = t;
    }
    counts_.sends_posted += pl;
    if (needs_recv(spec_.op)) counts_.receives_expected += pl;
    scnt_[qp] += pl;
    totscnt_ += pl;
  }
}

void PerftestWorkload::bw_on_send_cqe(uint32_t qp, uint64_t index) {
  // RC completes in order: this completion accounts for every WQE of the QP up to it.
  const uint64_t covered = index + 1 - ccnt_[qp];
  ccnt_[qp] = index + 1;
  totccnt_ += covered;
  tcompleted_[totccnt_ - 1] = now();
  completed_at_.push_back(totccnt_ - 1);
  latency_.record(static_cast<uint64_t>((now() - post_time_[size_t{qp} * sq_entries_ + index % sq_entries_]).picoseconds()));
  bw_pump(qp);
  bw_check_done();
}

void PerftestWorkload::bw_check_done() {
  const uint64_t n = spec_.iterations * spec_.qps;
  if (totccnt_ == n && (!needs_recv(spec_.op) || totrcnt_ == n)) end_phase();
}

double best_stretch_ps(std::span<const sim::Time> tposted, std::span<const sim::Time> tcompleted,
                       std::span<const uint64_t> completed_at, uint64_t step) {
  // min over i <= j of (C[j] - P[i]) / (j - i + 1) is the least slope from
  // the point (j, C[j]) to a point (i - 1, P[i]) on its left, which lies on the
  // upper convex hull of those points: the hull grows as j does, and for each j
  // a binary search finds the vertex (exact integer arithmetic). The value is
  // computed from the same pair, as the search over every pair would.
  struct Point {
    int64_t x, y;
    uint64_t i;
  };
  auto cross = [](const Point& o, const Point& a, int64_t bx, int64_t by) {
    using Wide = __int128;
    return Wide{a.x - o.x} * (by - o.y) - Wide{a.y - o.y} * (bx - o.x);
  };
  const uint64_t n = tposted.size();
  std::vector<Point> hull;
  uint64_t next_i = 0;
  double best = std::numeric_limits<double>::infinity();
  for (uint64_t j : completed_at) {
    for (; next_i <= j && next_i < n; next_i += step) {
      const Point p{static_cast<int64_t>(next_i) - 1, tposted[next_i].picoseconds(), next_i};
      while (hull.size() >= 2 && cross(hull[hull.size() - 2], hull.back(), p.x, p.y) >= 0) hull.pop_back();
      hull.push_back(p);
    }
    if (hull.empty()) continue;
    const auto bx = static_cast<int64_t>(j);
    const int64_t by = tcompleted[j].picoseconds();
    // The first vertex whose next edge's line passes below (j, C[j]), or on it.
    size_t lo = 0, hi = hull.size() - 1;
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (cross(hull[mid], hull[mid + 1], bx, by) >= 0) hi = mid; else lo = mid + 1;
    }
    const uint64_t i = hull[lo].i;
    best = std::min(best, (static_cast<double>(by) - static_cast<double>(tposted[i].picoseconds())) /
                              static_cast<double>(j - i + 1));
  }
  return best;
}

PerftestRow PerftestWorkload::bw_row() const {
  PerftestRow row;
  const uint64_t n = tposted_.size();
  row.bytes = size_;
  row.iterations = n;
  const double total_ps = static_cast<double>((tcompleted_[n - 1] - tposted_[0]).picoseconds());
  if (total_ps <= 0) return row;
  row.bw_avg_gbps = static_cast<double>(size_) * 8.0 * static_cast<double>(n) / total_ps * 1e3;
  row.msg_rate_mpps = static_cast<double>(n) / total_ps * 1e6;

  // Peak: the best stretch, from a post (every post_list-th) to a completion.
  const double best = best_stretch_ps(tposted_, tcompleted_, completed_at_, spec_.post_list);
  if (best > 0 && std::isfinite(best)) row.bw_peak_gbps = static_cast<double>(size_) * 8.0 / best * 1e3;
  return row;
}

// --- lat --------------------------------------------------------------------------
// One QP, a ping-pong (write, write_imm, send) or a request-response (read,
// atomics). tposted[i] is when iteration i was posted by the initiator; the
// samples are tposted[i+1] - tposted[i] (iterations - 1 of them), divided by 2 for
// ping-pongs; sorted, the 2 largest dropped (perftest's LAT_MEASURE_TAIL), then
// t_min, t_max (the largest kept + 1), t_typical (median), t_avg, t_stdev, and the
// 99% / 99.9% percentiles as perftest indexes them.
//   write:     each side spins on the last byte of its receive buffer until it reads
//              the iteration number (perftest writes it there before posting), then
//              posts its WRITE (signaled) and waits for that completion.
//   write_imm: the same, with a receive completion instead of the byte.
//   send:      receive completion, then the SEND; signaled every cq_mod-th (cq_mod
//              is min(100, tx_depth) and tx_depth is 1 unless set, as in perftest).
//   read, atomics: post one WQE, wait for its completion; the atomic's result
//              lands in the local buffer and is checked.

void PerftestWorkload::lat_advance(LatSide& s) {
  if (!is_ping_pong(spec_.op)) {
    lat_request_response(s);
    return;
  }
  // A ping-pong: each step returns false when the side has to wait.
  while (true) {
    switch (s.step) {
      case LatSide::Step::Receive:
        if (!lat_receive(s)) return;
        break;
      case LatSide::Step::Post:
        lat_post(s);
        break;
      case LatSide::Step::Complete:
        if (!lat_complete(s)) return;
        break;
      case LatSide::Step::Done:
        return;
    }
  }
}

// perftest's run_iter_lat: post, wait for the completion, again.
void PerftestWorkload::lat_request_response(LatSide& s) {
  const uint64_t iters = spec_.iterations;
  HostSide& h = *s.host;
  while (s.step != LatSide::Step::Done) {
    if (!lat_take_completion(s)) return;
    if (s.scnt == iters) {
      lat_side_done(s);
      return;
    }
    tposted_[s.scnt] = now();
    h.post_send(0, make_wqe(h, 0, s.scnt, true));
    ++counts_.sends_posted;
    ++s.scnt;
    s.need_cqe = true;
  }
}

// The peer's message (the initiator's first post needs none): a receive
// completion, or for WRITE the last byte of the receive buffer reading rcnt + 1.
bool PerftestWorkload::lat_receive(LatSide& s) {
  const uint64_t iters = spec_.iterations;
  HostSide& h = *s.host;
  if (s.rcnt < iters && !(s.initiator && s.scnt < 1)) {
    if (spec_.op == WorkloadOp::Write) {
      if (s.mem_waiting) return false;
      s.mem_waiting = true;
      h.watch_byte(recv_addr(h, 0) + size_ - 1, static_cast<uint8_t>(s.rcnt + 1), [this, &s] {
        s.mem_waiting = false;
        ++s.rcnt;
        s.step = LatSide::Step::Post;
        lat_advance(s);
      });
      return false;
    }
    if (s.recv_avail == 0) return false;
    --s.recv_avail;
    ++s.rcnt;
    if (s.rcnt + spec_.rx_depth <= iters) post_recv(h, 0, s.rcnt + spec_.rx_depth - 1);
  }
  s.step = LatSide::Step::Post;
  return true;
}

void PerftestWorkload::lat_post(LatSide& s) {
  const uint64_t iters = spec_.iterations;
  HostSide& h = *s.host;
  if (s.scnt < iters) {
    if (s.initiator) tposted_[s.scnt] = now();
    ++s.scnt;
    // WRITE and WRITE_WITH_IMM always signal; SEND every cq_mod-th and the last.
    const bool signaled = !is_send(spec_.op) || s.scnt % spec_.cq_mod == 0 || s.scnt == iters;
    // perftest's write test writes the iteration number into the last byte first.
    if (spec_.op == WorkloadOp::Write) h.memory(send_addr(h, 0) + size_ - 1, 1)[0] = std::byte(static_cast<uint8_t>(s.scnt));
    h.post_send(0, make_wqe(h, 0, s.scnt - 1, signaled));
    ++counts_.sends_posted;
    if (needs_recv(spec_.op)) ++counts_.receives_expected;
    s.need_cqe = signaled;
  }
  s.step = LatSide::Step::Complete;
}

// The own completion if the post was signaled; the side is done after its last
// iteration both ways (false then, as while it waits).
bool PerftestWorkload::lat_complete(LatSide& s) {
  const uint64_t iters = spec_.iterations;
  if (!lat_take_completion(s)) return false;
  if (s.scnt == iters && s.rcnt == iters) {
    lat_side_done(s);
    return false;
  }
  s.step = LatSide::Step::Receive;
  return true;
}

// The completion of the side's last post, if it waits for one: false while it
// has not come.
bool PerftestWorkload::lat_take_completion(LatSide& s) {
  if (!s.need_cqe) return true;
  if (s.cqe_avail == 0) return false;
  --s.cqe_avail;
  s.need_cqe = false;
  return true;
}

// The side's last iteration is over (the initiator's end is the test's).
void PerftestWorkload::lat_side_done(LatSide& s) {
  if (s.initiator) lat_end_ = now();
  s.step = LatSide::Step::Done;
  if (--lat_sides_left_ == 0) end_phase();
}

PerftestRow PerftestWorkload::lat_row() const {
  PerftestRow row;
  row.bytes = size_;
  row.iterations = spec_.iterations;
  const double rtt_factor = is_ping_pong(spec_.op) ? 2.0 : 1.0;
  std::vector<double> delta;
  for (size_t i = 0; i + 1 < tposted_.size(); ++i)
    delta.push_back(static_cast<double>((tposted_[i + 1] - tposted_[i]).picoseconds()) / rtt_factor);
  if (delta.empty()) delta.push_back(static_cast<double>((lat_end_ - tposted_[0]).picoseconds()) / rtt_factor);
  std::sort(delta.begin(), delta.end());
  const int total = static_cast<int>(delta.size());
  const int measure = std::max(1, total - kLatMeasureTail);
  auto at = [&](int i) { return ps_to_us(delta[static_cast<size_t>(std::clamp(i, 0, total - 1))]); };
  // perftest's get_median.
  const double median = (measure - 1) % 2 ? (at(measure / 2) + at(measure / 2 - 1)) / 2 : at(measure / 2);
  double sum = 0;
  for (int i = 0; i < measure; ++i) sum += at(i);
  const double avg = sum / measure;
  double var = 0;
  for (int i = 0; i < measure; ++i) var += (at(i) - avg) * (at(i) - avg);
  row.t_min_us = at(0);
  row.t_max_us = at(measure);
  row.t_typical_us = median;
  row.t_avg_us = avg;
  row.t_stdev_us = std::sqrt(var / measure);
  row.t_p99_us = at(static_cast<int>(std::ceil(measure * 0.99)));
  row.t_p999_us = at(static_cast<int>(std::ceil(measure * 0.999)));
  return row;
}

// --- phases -----------------------------------------------------------------------

bool PerftestWorkload::verify_phase() {
  if (!data_checked_) return true;
  auto same = [&](HostSide& a, uint64_t a_addr, HostSide& b, uint64_t b_addr, uint64_t len) {
    auto x = a.memory(a_addr, len);
    auto y = b.memory(b_addr, len);
    counts_.bytes_verified += len;
    return std::equal(x.begin(), x.end(), y.begin());
  };
  bool ok = true;
  for (uint32_t q = 0; q < slices_; ++q) {
    switch (op_row(spec_.op).shape) {
      case OpShape::Message:
        ok = ok && same(*client_, send_addr(*client_, q), *server_, recv_addr(*server_, q) + grh_, size_);
        if (lat()) ok = ok && same(*server_, send_addr(*server_, q), *client_, recv_addr(*client_, q) + grh_, size_);
        break;
      case OpShape::Read:
        ok = ok && same(*server_, send_addr(*server_, q), *client_, recv_addr(*client_, q), size_);
        break;
      case OpShape::Atomic: {
        uint64_t v = 0;
        std::memcpy(&v, server_->memory(recv_addr(*server_, q), 8).data(), 8);
        counts_.bytes_verified += 8;
        ok = ok && v == spec_.iterations;
        break;
      }
    }
  }
  return ok;
}

// The payload the receiving side placed: a ping-pong's bytes go both ways and
// count once, into the server; READ and atomic results land at the client.
uint64_t PerftestWorkload::received() const {
  uint64_t b = server_->payload_placed();
  if (!(lat() && is_ping_pong(spec_.op))) b += client_->payload_placed();
  return b;
}

// Finished phases count their messages; the phase in progress what its receiver
// placed so far (never more than the phase's messages hold).
uint64_t PerftestWorkload::delivered_bytes() const {
  if (shipped_) return shipped_->delivered;
  if (!in_phase_) return bytes_;
  return bytes_ + std::min(received() - phase_base_, phase_messages() * size_);
}

void PerftestWorkload::write_parts(std::span<const size_t> parts, sim::ByteWriter& out) const {
  out.put(static_cast<uint8_t>(!parts.empty()));
  if (parts.empty()) return;
  write_results(out);
  out.put(delivered_bytes());
  out.put(posting_busy());
}

void PerftestWorkload::read_parts(sim::ByteReader& in) {
  if (in.take<uint8_t>() == 0) return;
  read_results(in);
  const auto delivered = in.take<uint64_t>();
  shipped_ = Shipped{delivered, in.take<sim::Duration>()};
}

uint64_t PerftestWorkload::expected_bytes() const {
  uint64_t sizes = 0;
  for (uint64_t s : spec_.sizes) sizes += s;
  return sizes * phase_messages();
}

void PerftestWorkload::end_phase() {
  in_phase_ = false;
  PerftestRow row = lat() ? lat_row() : bw_row();
  rows_.push_back(row);
  const uint64_t n = phase_messages();
  messages_ += n;
  bytes_ += n * size_;
  if (lat()) {
    const double rtt_factor = is_ping_pong(spec_.op) ? 2.0 : 1.0;
    for (size_t i = 0; i < tposted_.size(); ++i) {
      const sim::Time next = i + 1 < tposted_.size() ? tposted_[i + 1] : lat_end_;
      latency_.record(static_cast<uint64_t>(static_cast<double>((next - tposted_[i]).picoseconds()) / rtt_factor));
    }
  }
  if (!verify_phase()) data_verified_ = false;
  lat_client_.reset();
  lat_server_.reset();
  if (++phase_ < spec_.sizes.size()) {
    start_phase();
    return;
  }
  finish();
}

}  // namespace rnicsim::scenario
