// The receive pipeline alone, on fakes of the blocks it feeds: packets steered
// to their QP's processing unit, a unit's stall its own, and a request that
// waits for an atomic kept in its unit until an atomic is done, whatever else
// frees units.
#include "nic_model/rx_pipeline.hpp"

#include "block_fixture.hpp"

namespace rnicsim::nictest {
namespace {

using packet::Opcode;

// Answers each request with the next verdict of its script (then Done), and
// keeps the QPN and PSN of every request it is given.
struct ScriptedRequests : RequestPort {
  std::vector<RequestVerdict> script;
  std::vector<std::pair<uint32_t, uint32_t>> taken;  // (QPN, PSN)
  std::vector<sim::Time> at;                          // when each was taken
  const sim::Simulator* sim = nullptr;
  RequestVerdict receive(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame&) override {
    taken.emplace_back(qp.qpn.value(), p.fields.psn.value());
    at.push_back(sim->now());
    return taken.size() <= script.size() ? script[taken.size() - 1] : RequestVerdict::Done;
  }
  void recv_wqes_arrived(std::optional<Qpn>) override {}
};
struct NoCnp : CnpPort {
  void send_cnp(QpContext&) override {}
};
struct Buffer : RxBufferPort {
  int64_t bytes = 0;
  void buffered(uint8_t, int64_t delta) override { bytes += delta; }
};

class RxPipelineTest : public ::testing::Test {
protected:
  static NicParams two_units() {
    NicParams p;
    p.responder_units = 2;
    return p;
  }
  RxPipelineTest() : b(two_units()), rx(b.ctx) {
    rx.connect({.responses = &responses, .requests = &requests, .cnp = &cnp, .rx_buffer = &buffer});
    requests.sim = &b.sim;
    for (uint32_t qpn : {0x10u, 0x11u}) {  // on units 0 and 1
      QpContext& q = b.add_qp(qpn, QpState::Rts);
      q.type = QpType::Rc;
      q.remote.ip = peer_ip();
    }
  }
  // The peer's address, as the packets built here carry it.
  static packet::Ipv6Addr peer_ip() {
    packet::Ipv6Addr ip{};
    ip[10] = ip[11] = 0xFF;
    ip[12] = 10;
    ip[15] = 2;
    return ip;
  }
  // A request of `op` to `qpn` with `psn`, as it arrives from the wire.
  void arrive(Opcode op, uint32_t qpn, uint32_t psn, size_t payload_bytes = 8) {
    packet::PacketFields f;
    f.opcode = op;
    f.dest_qp = Qpn(qpn);
    f.psn = packet::Psn(psn);
    f.ip_src = peer_ip();
    if (packet::opcode_info(op).has(packet::Hdr::Reth)) f.reth = packet::RethFields{0x1000, packet::Rkey(1), 8};
    if (packet::opcode_info(op).has(packet::Hdr::AtomicEth))
      f.atomic_eth = packet::AtomicEthFields{0x1000, packet::Rkey(1), 1, 0};
    std::vector<std::byte> payload(packet::opcode_info(op).has(packet::Hdr::Payload) ? payload_bytes : 0);
    rx.receive(std::move(make_packet(b.pool, f, payload).frame));
  }
  using Taken = std::vector<std::pair<uint32_t, uint32_t>>;

  BlockContext b;
  FakeResponses responses;
  ScriptedRequests requests;
  NoCnp cnp;
  Buffer buffer;
  RxPipeline rx;
};

TEST_F(RxPipelineTest, AStalledUnitHoldsOnlyItsOwnPackets) {
  requests.script = {RequestVerdict::Stall};  // QP 0x10's SEND waits for a receive WQE
  arrive(Opcode::RcSendOnly, 0x10, 0);
  arrive(Opcode::RcSendOnly, 0x10, 1);
  arrive(Opcode::RcRdmaWriteOnly, 0x11, 0);
  b.run();
  EXPECT_EQ(requests.taken, (Taken{{0x10, 0}, {0x11, 0}})) << "the other unit's WRITE went on";
  rx.resume(Qpn(0x11));  // another QP's receive WQEs: not this stall's
  b.run();
  EXPECT_EQ(requests.taken.size(), 2u);
  rx.resume(Qpn(0x10));
  b.run();
  EXPECT_EQ(requests.taken, (Taken{{0x10, 0}, {0x11, 0}, {0x10, 0}, {0x10, 1}}));
  EXPECT_EQ(buffer.bytes, 0) << "every frame left the receive buffer";
}

// A message's MIDDLE packets cost the unit responder_cycles_per_segment each
// (their checks were the FIRST packet's), not responder_cycles_per_packet.
TEST_F(RxPipelineTest, AMiddlePacketCostsItsUnitASegmentsCycles) {
  auto spacing = [&](uint32_t first_psn) {
    arrive(Opcode::RcSendFirst, 0x10, first_psn, 256);
    for (uint32_t i = 1; i <= 4; ++i) arrive(Opcode::RcSendMiddle, 0x10, first_psn + i, 256);
    b.run();
    const size_t n = requests.at.size();
    return requests.at[n - 1] - requests.at[n - 2];  // between two MIDDLEs queued back to back
  };
  const sim::Duration as_first = spacing(0);  // responder_cycles_per_segment 0: as a first packet
  b.config.params.responder_cycles_per_segment = 4;
  const sim::Duration as_segment = spacing(5);
  EXPECT_EQ(as_first - as_segment, b.ctx.cycles(b.config.params.responder_cycles_per_packet - 4));
}

TEST_F(RxPipelineTest, ARequestThatWaitsForAnAtomicHoldsOnlyItsUnitUntilAnAtomicIsDone) {
  // QP 0x10's request waits: its QP's atomic (or one on its bucket) executes.
  requests.script = {RequestVerdict::Wait};
  arrive(Opcode::RcFetchAdd, 0x10, 1);
  arrive(Opcode::RcRdmaWriteOnly, 0x11, 0);
  b.run();
  EXPECT_EQ(requests.taken, (Taken{{0x10, 1}, {0x11, 0}})) << "the other unit's WRITE went on";
  rx.resume(std::nullopt);  // an SRQ's receive WQEs arrived meanwhile
  rx.resume(Qpn(0x10));     // and the waiting QP's
  b.run();
  EXPECT_EQ(requests.taken.size(), 2u) << "receive WQEs do not end a wait for an atomic";
  rx.atomic_done();
  b.run();
  EXPECT_EQ(requests.taken, (Taken{{0x10, 1}, {0x11, 0}, {0x10, 1}})) << "the kept request is tried again";
  EXPECT_EQ(buffer.bytes, 0) << "every frame left the receive buffer";
}

}  // namespace
}  // namespace rnicsim::nictest
