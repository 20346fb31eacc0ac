// The CM agents of two ports back to back: connection set-up, rejection,
// retries over a lossy link, disconnection and SIDR, with every MAD crossing
// the simulated link through QP1 of each NIC.
#include "cm/connection_manager.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "nic_fixture.hpp"

namespace rnicsim::cm {
namespace {

using nictest::TestBed;
using nictest::TestHost;

constexpr uint64_t kService = service_id(0x0106, 7174);

AgentMemory memory_of(TestHost& h) {
  const uint64_t addr = h.memory.allocate(MadAgent::kMemoryBytes, 4096);
  return {addr, h.memory.span(addr, MadAgent::kMemoryBytes)};
}

// What a user saw, in order.
struct Recorder : CmUser {
  std::vector<std::string> seen;
  std::optional<Req> req;
  std::optional<Rep> rep;
  std::optional<Rej> rej;
  std::optional<SidrRep> sidr;
  CommId last = 0;
  sim::Time at;
  sim::Simulator* sim = nullptr;
  void note(const char* what, CommId id) {
    seen.emplace_back(what);
    last = id;
    at = sim->now();
  }
  void on_request(CommId id, const Req& r, const MadSource&) override { req = r, note("request", id); }
  void on_reply(CommId id, const Rep& r) override { rep = r, note("reply", id); }
  void on_established(CommId id) override { note("established", id); }
  void on_rejected(CommId id, const Rej& r) override { rej = r, note("rejected", id); }
  void on_timeout(CommId id) override { note("timeout", id); }
  void on_disconnect_request(CommId id, const Dreq&) override { note("disconnect_request", id); }
  void on_disconnected(CommId id) override { note("disconnected", id); }
  void on_timewait_exit(CommId id) override { note("timewait_exit", id); }
  void on_sidr_request(CommId id, const SidrReq&, const MadSource&) override { note("sidr_request", id); }
  void on_sidr_reply(CommId id, const SidrRep& r) override { sidr = r, note("sidr_reply", id); }
  void on_sidr_timeout(CommId id) override { note("sidr_timeout", id); }
};

class Cm : public ::testing::Test {
protected:
  explicit Cm(double loss_ab = 0, double loss_ba = 0) : bed_(std::make_unique<TestBed>(loss_ab, loss_ba)) {}
  void SetUp() override {
    auto resolve = [this](const MadSource& s) -> std::optional<nic::AddressVector> {
      for (TestHost* h : {&bed_->a(), &bed_->b()})
        if (h->address.ip == s.gid) return h->address;
      return std::nullopt;
    };
    a_ = std::make_unique<ConnectionManager>(bed_->sim, *bed_->a().nic, memory_of(bed_->a()), resolve);
    b_ = std::make_unique<ConnectionManager>(bed_->sim, *bed_->b().nic, memory_of(bed_->b()), resolve);
    client_.sim = server_.sim = &bed_->sim;
  }
  PathTo path_to_b() const {
    PathTo p;
    p.av = bed_->b().address;
    p.local_gid = bed_->a().address.ip;
    p.remote_gid = bed_->b().address.ip;
    return p;
  }
  Req request(uint8_t timeout = 20, uint8_t retries = 15) const {
    Req r;
    r.service_id = kService;
    r.local_qpn = packet::Qpn(0x123456);
    r.starting_psn = packet::Psn(0xABCDEF);
    r.responder_resources = r.initiator_depth = 4;
    r.remote_cm_response_timeout = r.local_cm_response_timeout = timeout;
    r.max_cm_retries = retries;
    r.path_mtu = 3;
    r.retry_count = r.rnr_retry_count = 7;
    r.private_data[0] = 0x5A;
    return r;
  }
  void run(sim::Duration d = sim::Duration::s(1)) { bed_->run(d); }
  // A connects to B's listener, B accepts, A sends the RTU: A's comm ID.
  CommId establish() {
    EXPECT_TRUE(b_->listen(kService, server_));
    const CommId id = a_->connect(request(), path_to_b(), client_);
    run();
    b_->accept(server_.last, Rep{});
    run();
    a_->ready_to_use(id);
    run();
    return id;
  }

  std::unique_ptr<TestBed> bed_;
  std::unique_ptr<ConnectionManager> a_, b_;
  Recorder client_, server_;
};

TEST_F(Cm, ReqRepRtuEstablishesBothEnds) {
  ASSERT_TRUE(b_->listen(kService, server_));
  const CommId id = a_->connect(request(), path_to_b(), client_);
  run();
  ASSERT_EQ(server_.seen, std::vector<std::string>{"request"});
  EXPECT_EQ(server_.req->local_qpn, packet::Qpn(0x123456));
  EXPECT_EQ(server_.req->starting_psn, packet::Psn(0xABCDEF));
  EXPECT_EQ(server_.req->private_data[0], 0x5A);
  EXPECT_EQ(server_.req->local_comm_id, id);
  Rep rep;
  rep.local_qpn = packet::Qpn(0x654321);
  rep.starting_psn = packet::Psn(0x111111);
  ASSERT_TRUE(b_->accept(server_.last, rep));
  run();
  ASSERT_EQ(client_.seen, std::vector<std::string>{"reply"});
  EXPECT_EQ(client_.rep->local_qpn, packet::Qpn(0x654321));
  EXPECT_EQ(client_.rep->remote_comm_id, id);
  ASSERT_TRUE(a_->ready_to_use(id));
  run();
  EXPECT_EQ(server_.seen, (std::vector<std::string>{"request", "established"}));
  EXPECT_EQ(a_->agent().sent(), 2u);  // REQ, RTU
  EXPECT_EQ(b_->agent().sent(), 1u);  // REP
  EXPECT_EQ(a_->retransmissions() + b_->retransmissions(), 0u);
  EXPECT_EQ(a_->agent().malformed() + b_->agent().malformed(), 0u);
}

TEST_F(Cm, APortHasOneGsiQpAndItIsQp1) {
  EXPECT_EQ(a_->agent().qpn(), kGsiQpn);
  struct Sink : MadSink {
    void on_mad(const Mad&, const MadSource&) override {}
  } sink;
  EXPECT_THROW(MadAgent(*bed_->a().nic, memory_of(bed_->a()), sink), std::logic_error);
  nic::QpInit init;
  init.type = nic::QpType::Ud;
  init.special_qpn = nic::Qpn(5);  // not a special QP
  EXPECT_EQ(bed_->a().nic->create_qp(init).value(), 0u);
}

TEST_F(Cm, ARequestForAServiceNobodyListensOnIsRejectedWithReason8) {
  a_->connect(request(), path_to_b(), client_);
  run();
  ASSERT_EQ(client_.seen, std::vector<std::string>{"rejected"});
  EXPECT_EQ(client_.rej->reason, kRejInvalidServiceId);
  EXPECT_EQ(client_.rej->message_rejected, 0);
}

TEST_F(Cm, TheRejectingServersPrivateDataReachesTheClient) {
  ASSERT_TRUE(b_->listen(kService, server_));
  a_->connect(request(), path_to_b(), client_);
  run();
  const uint8_t why[] = {'b', 'u', 's', 'y'};
  ASSERT_TRUE(b_->reject(server_.last, kRejConsumerReject, why));
  run();
  ASSERT_EQ(client_.seen, std::vector<std::string>{"rejected"});
  EXPECT_EQ(client_.rej->reason, kRejConsumerReject);
  EXPECT_EQ(std::string(client_.rej->private_data.begin(), client_.rej->private_data.begin() + 4), "busy");
}

TEST_F(Cm, DisconnectIsAnsweredAndBothEndsHearOfIt) {
  const CommId id = establish();
  ASSERT_TRUE(a_->disconnect(id));
  run();
  EXPECT_EQ(server_.seen.back(), "disconnect_request");
  EXPECT_EQ(client_.seen.back(), "disconnected");
}

TEST_F(Cm, BothEndsLeaveTimeWaitAfterThePacketLifetime) {
  const CommId id = establish();
  ASSERT_TRUE(a_->disconnect(id));
  run(sim::Duration::ms(100));
  const sim::Time left = client_.at;
  ASSERT_EQ(client_.seen.back(), "disconnected");
  run(sim::Duration::s(2));  // the wait is 4.096 us x 2^19, 2.15 s
  EXPECT_EQ(client_.seen.back(), "disconnected");
  run(sim::Duration::s(3));
  EXPECT_EQ(client_.seen.back(), "timewait_exit");
  EXPECT_EQ(server_.seen.back(), "timewait_exit");
  EXPECT_EQ(client_.at - left, sim::Duration::ns(4096) * (int64_t{1} << 19));
  EXPECT_FALSE(a_->disconnect(id));  // forgotten
}

TEST_F(Cm, SidrResolvesTheServicesQpAndQkey) {
  ASSERT_TRUE(b_->listen(kService, server_));
  SidrReq q;
  q.service_id = kService;
  a_->sidr_request(q, path_to_b(), client_);
  run();
  ASSERT_EQ(server_.seen, std::vector<std::string>{"sidr_request"});
  SidrRep r;
  r.qpn = packet::Qpn(0x4242);
  r.qkey = packet::Qkey(0x01234567);
  r.service_id = kService;
  ASSERT_TRUE(b_->sidr_reply(server_.last, r));
  run();
  ASSERT_EQ(client_.seen, std::vector<std::string>{"sidr_reply"});
  EXPECT_EQ(client_.sidr->qpn, packet::Qpn(0x4242));
  EXPECT_EQ(client_.sidr->qkey, packet::Qkey(0x01234567));
  EXPECT_EQ(client_.sidr->status, 0);
}

class LostCm : public Cm {
protected:
  LostCm() : Cm(1.0, 0.0) {}
};

// Every REQ is lost: 1 + max_cm_retries tries, each waiting 2 x the packet
// lifetime plus the peer's response timeout, then the timeout.
TEST_F(LostCm, AReqNobodyAnswersTimesOutAfterItsRetries) {
  ASSERT_TRUE(b_->listen(kService, server_));
  PathTo p = path_to_b();
  p.packet_life_time = 10;
  a_->connect(request(12, 3), p, client_);
  const sim::Duration each = sim::Duration::ns(4096 << 10) * 2 + sim::Duration::ns(4096 << 12);
  run(each * 3 + each / 2);
  EXPECT_TRUE(client_.seen.empty());
  run(each);
  ASSERT_EQ(client_.seen, std::vector<std::string>{"timeout"});
  EXPECT_EQ(a_->agent().sent(), 4u);
  EXPECT_EQ(a_->retransmissions(), 3u);
  EXPECT_TRUE(server_.seen.empty());
}

class LossyCm : public Cm {
protected:
  LossyCm() : Cm(0.4, 0.4) {}
};

// Lost REQs, REPs and RTUs are retried (a REQ retry after a lost REP gets the
// REP again; a REP retry after a lost RTU gets the RTU again): each of 20
// connections comes up at both ends, once each.
// Answers at once: accepts every REQ, sends the RTU on every REP.
struct AutoUser : Recorder {
  ConnectionManager* cm = nullptr;
  void on_request(CommId id, const Req& r, const MadSource& s) override {
    Recorder::on_request(id, r, s);
    cm->accept(id, Rep{});
  }
  void on_reply(CommId id, const Rep& r) override {
    Recorder::on_reply(id, r);
    cm->ready_to_use(id);
  }
};

TEST_F(LossyCm, RetriesBringTheConnectionUpAtBothEnds) {
  constexpr int kRounds = 20;
  std::vector<std::unique_ptr<AutoUser>> users;  // they outlive every retry
  for (int round = 0; round < kRounds; ++round) {
    auto& c = *users.emplace_back(std::make_unique<AutoUser>());
    auto& s = *users.emplace_back(std::make_unique<AutoUser>());
    c.sim = s.sim = &bed_->sim;
    c.cm = a_.get();
    s.cm = b_.get();
    const uint64_t service = service_id(0x0106, static_cast<uint16_t>(1000 + round));
    ASSERT_TRUE(b_->listen(service, s));
    PathTo p = path_to_b();
    p.packet_life_time = 8;
    Req r = request(10, 15);
    r.service_id = service;
    a_->connect(r, p, c);
  }
  run(sim::Duration::s(2));
  for (int round = 0; round < kRounds; ++round) {
    const AutoUser& c = *users[2 * round];
    const AutoUser& s = *users[2 * round + 1];
    EXPECT_EQ(c.seen, std::vector<std::string>{"reply"}) << "round " << round;
    EXPECT_EQ(s.seen, (std::vector<std::string>{"request", "established"})) << "round " << round;
  }
  EXPECT_GT(a_->retransmissions() + b_->retransmissions(), 0u);
}

}  // namespace
}  // namespace rnicsim::cm
