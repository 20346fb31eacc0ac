// Two hosts (simulated memory + RNIC + port) back to back, and QP endpoints on
// them wired the way a verbs program does it: rings in host memory, a registered
// buffer, RESET -> INIT -> RTR -> RTS, WQEs through the rings and doorbells, CQEs
// reaped from the CQ ring the moment the NIC reports them.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "fabric/port.hpp"
#include "nic_model/host_queues.hpp"
#include "nic_model/nic.hpp"
#include "packet/packet.hpp"
#include "sim/random.hpp"
#include "sim/simulator.hpp"

namespace rnicsim::nictest {

using namespace rnicsim::nic;

struct TestHost {
  std::string name;
  SimulatedHostMemory memory;
  std::unique_ptr<fabric::Port> port;
  std::unique_ptr<Nic> nic;
  AddressVector address;
};

struct Completion {
  Cqe cqe;
  sim::Time at;
};

struct QpOptions {
  QpType type = QpType::Rc;
  uint32_t path_mtu = 4096;
  uint8_t timeout = 14;
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 12;
  uint32_t psn = 0;
  bool sq_sig_all = false;
  uint32_t sq_entries = 64, rq_entries = 64;
  uint32_t sq_stride = kMinWqeStride, rq_stride = kMinWqeStride;  // bytes per WQE slot
  uint64_t buffer_size = 2u << 20;
  uint32_t access = kAccessRemoteWrite | kAccessRemoteRead | kAccessRemoteAtomic;  // QP remote access
  uint8_t max_rd_atomic = 16, max_dest_rd_atomic = 16;
  uint32_t qkey = 0x11111111;  // UD
  uint32_t tally = 0;  // Nic::open_tally's number, 0: none
  uint8_t sl = 0, traffic_class = 0;  // of the address vector
  Srqn srq;                    // take receives from this SRQ of the host's NIC
};

class Endpoint : public CompletionListener {
public:
  Endpoint(TestHost& host, const QpOptions& o) : host_(host), opts_(o) {
    const uint32_t cq_entries = o.sq_entries + o.rq_entries;
    cq_base_ = host.memory.allocate(size_t{cq_entries} * sizeof(Cqe), 4096);
    sq_base_ = host.memory.allocate(size_t{o.sq_entries} * o.sq_stride, 4096);
    rq_base_ = host.memory.allocate(size_t{o.rq_entries} * o.rq_stride, 4096);
    buffer = host.memory.allocate(o.buffer_size, 4096);
    cq_.emplace(host.memory.span(cq_base_, size_t{cq_entries} * sizeof(Cqe)), cq_entries);
    sq_.emplace(host.memory.span(sq_base_, size_t{o.sq_entries} * o.sq_stride), o.sq_entries, o.sq_stride);
    rq_.emplace(host.memory.span(rq_base_, size_t{o.rq_entries} * o.rq_stride), o.rq_entries, o.rq_stride);
    Nic& n = *host.nic;
    pd = n.alloc_pd();
    cqn = n.create_cq(cq_base_, cq_entries, this);
    QpInit init;
    init.type = o.type;
    init.pd = pd;
    init.send_cq = init.recv_cq = cqn;
    init.sq = WorkRing{sq_base_, o.sq_entries, o.sq_stride};
    init.rq = WorkRing{rq_base_, o.rq_entries, o.rq_stride};
    init.sq_sig_all = o.sq_sig_all;
    init.srq = o.srq;
    init.tally = o.tally;
    qpn = n.create_qp(init);
    mr = n.reg_mr(pd, buffer, o.buffer_size,
                  kAccessLocalWrite | kAccessRemoteWrite | kAccessRemoteRead | kAccessRemoteAtomic);
  }

  int to_init() {
    QpAttr a;
    a.state = QpState::Init;
    a.access_flags = opts_.access;
    a.qkey = Qkey(opts_.qkey);
    if (opts_.type == QpType::Ud) return nic().modify_qp(qpn, a, kQpState | kQpPkeyIndex | kQpPort | kQpQkey);
    return nic().modify_qp(qpn, a, kQpState | kQpPkeyIndex | kQpPort | kQpAccessFlags);
  }
  int to_rtr(const Endpoint& peer) {
    QpAttr a;
    a.state = QpState::Rtr;
    a.path_mtu = opts_.path_mtu;
    a.dest_qpn = peer.qpn;
    a.rq_psn = Psn(peer.opts_.psn);
    a.av = peer.host_.address;
    a.av.sl = opts_.sl;
    a.av.traffic_class = opts_.traffic_class;
    a.min_rnr_timer = opts_.min_rnr_timer;
    a.max_dest_rd_atomic = opts_.max_dest_rd_atomic;
    if (opts_.type == QpType::Ud) return nic().modify_qp(qpn, a, kQpState);
    uint32_t mask = kQpState | kQpAv | kQpPathMtu | kQpDestQpn | kQpRqPsn;
    if (opts_.type == QpType::Rc) mask |= kQpMaxDestRdAtomic | kQpMinRnrTimer;
    return nic().modify_qp(qpn, a, mask);
  }
  int to_rts() {
    QpAttr a;
    a.state = QpState::Rts;
    a.sq_psn = Psn(opts_.psn);
    a.timeout = opts_.timeout;
    a.retry_cnt = opts_.retry_cnt;
    a.rnr_retry = opts_.rnr_retry;
    a.max_rd_atomic = opts_.max_rd_atomic;
    uint32_t mask = kQpState | kQpSqPsn;
    if (opts_.type == QpType::Rc) mask |= kQpTimeout | kQpRetryCnt | kQpRnrRetry | kQpMaxQpRdAtomic;
    return nic().modify_qp(qpn, a, mask);
  }
  void connect(const Endpoint& peer) {
    ASSERT_EQ(to_init(), 0);
    ASSERT_EQ(to_rtr(peer), 0);
    ASSERT_EQ(to_rts(), 0);
  }

  void on_completion(Cqn) override {
    if (reap_on_completion) reap();
  }
  // Moves every CQE the NIC has written into `cqes` (ibv_poll_cq).
  void reap() {
    while (auto c = cq_->poll()) cqes.push_back(Completion{*c, host_.nic->now()});
  }
  std::optional<uint64_t> consumer_index(Cqn) const override { return cq_->consumer(); }

  void post_send(const SendWqe& w) { nic().ring_doorbell(WorkQueue::send(qpn), sq_->post(w)); }
  // The WQE goes into the ring and, with the doorbell, to the NIC (BlueFlame-style).
  void post_send_with_doorbell_wqe(const SendWqe& w) { nic().ring_doorbell_with_wqe(qpn, sq_->post(w), w, wqe_bytes(w)); }
  // A chain of WQEs behind one doorbell, as ibv_post_send with a linked list does.
  void post_sends(std::initializer_list<SendWqe> ws) {
    uint64_t producer = 0;
    for (const SendWqe& w : ws) producer = sq_->post(w);
    nic().ring_doorbell(WorkQueue::send(qpn), producer);
  }
  void post_recv(const RecvWqe& w) { nic().ring_doorbell(WorkQueue::recv(qpn), recv_unrung(w)); }
  // The WQE goes into the ring, the doorbell not yet to the NIC; the producer index.
  uint64_t recv_unrung(const RecvWqe& w) { return rq_->post(w); }

  // One-SGE helpers over this endpoint's buffer.
  SendWqe write_wqe(uint64_t wr_id, uint64_t offset, uint32_t len, const Endpoint& target, uint64_t remote_offset,
                    bool signaled = true) const {
    SendWqe w{};
    w.wr_id = wr_id;
    w.opcode = WrOpcode::RdmaWrite;
    w.send_flags = signaled ? kSendSignaled : 0;
    w.num_sge = 1;
    w.sge[0] = Sge{buffer + offset, len, mr.lkey};
    w.remote_addr = target.buffer + remote_offset;
    w.rkey = target.mr.rkey;
    return w;
  }
  SendWqe send_wqe(uint64_t wr_id, uint64_t offset, uint32_t len, bool signaled = true) const {
    SendWqe w{};
    w.wr_id = wr_id;
    w.opcode = WrOpcode::Send;
    w.send_flags = signaled ? kSendSignaled : 0;
    w.num_sge = 1;
    w.sge[0] = Sge{buffer + offset, len, mr.lkey};
    return w;
  }
  RecvWqe recv_wqe(uint64_t wr_id, uint64_t offset, uint32_t len) const {
    RecvWqe r{};
    r.wr_id = wr_id;
    r.num_sge = 1;
    r.sge[0] = Sge{buffer + offset, len, mr.lkey};
    return r;
  }

  std::span<std::byte> bytes(uint64_t offset, size_t len) { return host_.memory.span(buffer + offset, len); }
  Nic& nic() { return *host_.nic; }
  TestHost& host() { return host_; }

  uint64_t buffer = 0;
  Pdn pd;
  Cqn cqn;
  Qpn qpn{};
  MemoryRegion mr;
  std::vector<Completion> cqes;
  // false: CQEs stay in the CQ until reap(), as with a program that does not poll.
  bool reap_on_completion = true;

private:
  TestHost& host_;
  QpOptions opts_;
  uint64_t cq_base_ = 0, sq_base_ = 0, rq_base_ = 0;
  std::optional<CqRingReader> cq_;
  std::optional<WqeRingWriter<SendWqe>> sq_;
  std::optional<WqeRingWriter<RecvWqe>> rq_;
};

// Two hosts joined by one link; loss is per direction.
class TestBed {
public:
  explicit TestBed(double loss_a_to_b = 0.0, double loss_b_to_a = 0.0, uint64_t seed = 7,
                   uint64_t rate_bps = 100'000'000'000, sim::Duration delay = sim::Duration::us(1),
                   const NicParams& params = NicParams{}, CcAlgorithmTable cc_table = cc_algorithms())
      : sim(seed, log), pool(4096 + 512) {
    for (int i = 0; i < 2; ++i) {
      auto& h = hosts[i];
      h = std::make_unique<TestHost>();
      h->name = i == 0 ? "a" : "b";
      h->address.mac = {0x02, 0, 0, 0, 0, static_cast<uint8_t>(i + 1)};
      h->address.ip = {};
      h->address.ip[10] = h->address.ip[11] = 0xFF;
      h->address.ip[12] = 10;
      h->address.ip[15] = static_cast<uint8_t>(i + 1);
      h->address.lid = static_cast<uint16_t>(i + 1);
      NicConfig cfg;
      cfg.name = h->name + ".nic";
      cfg.mac = h->address.mac;
      cfg.ip = h->address.ip;
      cfg.lid = h->address.lid;
      cfg.params = params;
      cfg.cc_table = cc_table;
      h->nic = std::make_unique<Nic>(sim, pool, h->memory, cfg);
      fabric::PortParams p;
      p.rate_bps = rate_bps;
      p.delay = delay;
      p.loss_rate = i == 0 ? loss_a_to_b : loss_b_to_a;
      h->port = std::make_unique<fabric::Port>(sim, h->name + ".port0", p);
    }
    fabric::Port::connect(*hosts[0]->port, *hosts[1]->port);
    hosts[0]->nic->attach(*hosts[0]->port);
    hosts[1]->nic->attach(*hosts[1]->port);
  }

  TestHost& a() { return *hosts[0]; }
  TestHost& b() { return *hosts[1]; }

  // A connected pair: the first on host a, the second on host b.
  std::pair<std::unique_ptr<Endpoint>, std::unique_ptr<Endpoint>> pair(const QpOptions& oa, const QpOptions& ob) {
    auto x = std::make_unique<Endpoint>(a(), oa);
    auto y = std::make_unique<Endpoint>(b(), ob);
    x->connect(*y);
    y->connect(*x);
    return {std::move(x), std::move(y)};
  }
  std::pair<std::unique_ptr<Endpoint>, std::unique_ptr<Endpoint>> pair(const QpOptions& o = {}) { return pair(o, o); }
  // `n` connected pairs: senders[i] on host a, receivers[i] on host b.
  struct Pairs {
    std::vector<std::unique_ptr<Endpoint>> senders, receivers;
  };
  Pairs pairs(uint32_t n, const QpOptions& o) {
    Pairs p;
    for (uint32_t i = 0; i < n; ++i) {
      auto [x, y] = pair(o);
      p.senders.push_back(std::move(x));
      p.receivers.push_back(std::move(y));
    }
    return p;
  }

  // Runs until nothing is pending (or `limit` of simulated time from now).
  void run(sim::Duration limit = sim::Duration::s(1)) { sim.scheduler().run_until(sim.now() + limit); }

  std::ostringstream log;
  sim::Simulator sim;
  fabric::FramePool pool;
  std::unique_ptr<TestHost> hosts[2];
};

// Time for 512 signaled operations of 64 bytes, spread round-robin over `qps`
// new QP pairs of `bed` (512 / qps each, posted at once, each its own
// doorbell), until the last completes; `opcode` names the operation.
inline sim::Duration round_robin_ops(TestBed& bed, uint32_t qps, WrOpcode opcode = WrOpcode::RdmaWrite) {
  QpOptions o;
  o.buffer_size = 4096;
  o.sq_entries = 512;
  auto [xs, ys] = bed.pairs(qps, o);
  const sim::Time start = bed.sim.now();
  const uint32_t rounds = 512 / qps;
  for (uint32_t r = 0; r < rounds; ++r)
    for (uint32_t i = 0; i < qps; ++i) {
      SendWqe w = xs[i]->write_wqe(r, 0, 64, *ys[i], 0);
      w.opcode = opcode;
      xs[i]->post_send(w);
    }
  bed.run();
  sim::Time end = start;
  for (auto& x : xs) {
    EXPECT_EQ(x->cqes.size(), rounds);
    for (auto& c : x->cqes) {
      EXPECT_EQ(c.cqe.status, WcStatus::Success);
      end = std::max(end, c.at);
    }
  }
  return end - start;
}

inline void fill_random(std::span<std::byte> s, uint64_t seed) {
  sim::RandomStream r(seed, "test.data");
  for (size_t i = 0; i < s.size(); i += 8) {
    const uint64_t v = r.next_u64();
    std::memcpy(s.data() + i, &v, std::min<size_t>(8, s.size() - i));
  }
}

inline bool all_zero(std::span<const std::byte> s) {
  for (std::byte b : s)
    if (b != std::byte{0}) return false;
  return true;
}

inline bool same(std::span<const std::byte> x, std::span<const std::byte> y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size()) == 0;
}

// Hand-built packets. The fields of `op` from host a, the peer of host b's
// endpoints, to `to`'s QP at `psn`, addressed as the peer's NIC addresses them;
// the caller adds the extension headers.
inline packet::PacketFields peer_packet(TestBed& bed, const Endpoint& to, packet::Opcode op, uint32_t psn,
                                        uint32_t payload) {
  packet::PacketFields f;
  f.opcode = op;
  f.dest_qp = to.qpn;
  f.psn = Psn(psn);
  f.payload_length = payload;
  f.ip_src = bed.a().address.ip;
  f.ip_dst = bed.b().address.ip;
  f.eth_src = bed.a().address.mac;
  f.eth_dst = bed.b().address.mac;
  packet::derive_fields(f);
  return f;
}

// `f` built and sealed (correct checksums and ICRC), its payload `fill` bytes.
inline std::vector<std::byte> build_packet(const packet::PacketFields& f, std::byte fill) {
  std::vector<std::byte> out(packet::frame_length(f));
  const std::vector<std::byte> payload(f.payload_length, fill);
  EXPECT_TRUE(packet::build(f, payload, out));
  return out;
}

// Gives `bytes` to host b's NIC as a frame from the wire, and runs the bed.
inline void deliver_to_b(TestBed& bed, std::span<const std::byte> bytes) {
  fabric::Frame frame = bed.pool.acquire(bytes.size());
  std::memcpy(frame.bytes().data(), bytes.data(), bytes.size());
  bed.b().nic->receive(std::move(frame));
  bed.run();
}

}  // namespace rnicsim::nictest
