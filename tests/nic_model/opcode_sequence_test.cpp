// IBTA's opcode sequence check at the responder: after a FIRST or MIDDLE only a
// MIDDLE or LAST of the same operation may come; with no message in progress
// only a FIRST or ONLY. Each case sends two well-formed packets from the QP's
// peer, at consecutive PSNs, the second out of sequence.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nic_fixture.hpp"
#include "packet/packet.hpp"

using namespace rnicsim;
using namespace rnicsim::nictest;

namespace {

using packet::Opcode;

constexpr uint32_t kMtu = 4096;

// Sends `op` from the peer (host a) to y's QP at `psn`; a FIRST, MIDDLE or LAST
// carries one MTU, an ONLY 64 bytes; a RETH asks for two MTUs (FIRST) or 64
// bytes (ONLY) at offset 64 KiB.
void inject(TestBed& bed, Endpoint& y, Opcode op, uint32_t psn) {
  const auto& info = packet::opcode_info(op);
  const bool full = info.position != packet::Position::Only;
  packet::PacketFields f =
      peer_packet(bed, y, op, psn, info.has(packet::Hdr::Payload) ? (full ? kMtu : 64) : 0);
  if (info.has(packet::Hdr::Reth))
    f.reth = packet::RethFields{y.buffer + 65536, y.mr.rkey, info.position == packet::Position::Only ? 64 : 2 * kMtu};
  if (info.has(packet::Hdr::AtomicEth)) f.atomic_eth = packet::AtomicEthFields{y.buffer + 65536, y.mr.rkey, 1, 0};
  if (info.has(packet::Hdr::ImmDt)) f.imm = 7;
  deliver_to_b(bed, build_packet(f, std::byte{0x5A}));
}

struct Case {
  Opcode first, second;
};

// RC: the second packet is an invalid request: NAK, the QP to ERR, nothing of
// it executed, the receive WQE flushed.
TEST(OpcodeSequence, OutOfSequenceRequestBreaksAnRcQp) {
  const Case cases[] = {
      {Opcode::RcSendFirst, Opcode::RcRdmaWriteOnly},   // WRITE in the middle of a SEND
      {Opcode::RcSendFirst, Opcode::RcSendFirst},       // a second SEND before the first ended
      {Opcode::RcSendFirst, Opcode::RcSendOnly},
      {Opcode::RcSendFirst, Opcode::RcRdmaWriteMiddle},  // a MIDDLE of another operation
      {Opcode::RcSendFirst, Opcode::RcRdmaReadRequest},
      {Opcode::RcSendFirst, Opcode::RcFetchAdd},
      {Opcode::RcRdmaWriteFirst, Opcode::RcSendOnly},   // SEND in the middle of a WRITE
      {Opcode::RcRdmaWriteFirst, Opcode::RcSendLast},
      {Opcode::RcRdmaWriteFirst, Opcode::RcRdmaWriteFirst},
      {Opcode::RcRdmaWriteFirst, Opcode::RcRdmaWriteOnly},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(packet::opcode_info(c.first).name) + " then " +
                 std::string(packet::opcode_info(c.second).name));
    TestBed bed;
    auto [x, y] = bed.pair();
    y->post_recv(y->recv_wqe(1, 0, 16384));
    inject(bed, *y, c.first, 0);
    ASSERT_EQ(y->nic().qp(y->qpn)->state, QpState::Rts);
    inject(bed, *y, c.second, 1);
    EXPECT_EQ(y->nic().responder().counters().bad_opcode_sequence, 1u);
    EXPECT_EQ(y->nic().responder().counters().invalid_requests, 1u);
    EXPECT_EQ(y->nic().qp(y->qpn)->state, QpState::Err);
    EXPECT_TRUE(all_zero(y->bytes(65536 + kMtu, 8192))) << "the second packet was executed";
    ASSERT_EQ(y->cqes.size(), 1u);
    EXPECT_EQ(y->cqes[0].cqe.status, WcStatus::WrFlushErr);
  }
}

// The valid sequences pass (the check refuses nothing legitimate).
TEST(OpcodeSequence, ValidSequencesAreExecuted) {
  const std::vector<std::vector<Opcode>> sequences = {
      {Opcode::RcSendFirst, Opcode::RcSendMiddle, Opcode::RcSendLast},
      {Opcode::RcRdmaWriteFirst, Opcode::RcRdmaWriteLast},
      {Opcode::RcSendOnly, Opcode::RcRdmaWriteOnly, Opcode::RcRdmaReadRequest},
  };
  for (const auto& seq : sequences) {
    TestBed bed;
    auto [x, y] = bed.pair();
    y->post_recv(y->recv_wqe(1, 0, 16384));
    y->post_recv(y->recv_wqe(2, 0, 16384));
    uint32_t psn = 0;
    for (Opcode op : seq) {
      inject(bed, *y, op, psn);
      ++psn;
    }
    EXPECT_EQ(y->nic().responder().counters().bad_opcode_sequence, 0u);
    EXPECT_EQ(y->nic().qp(y->qpn)->state, QpState::Rts);
    EXPECT_EQ(y->nic().qp(y->qpn)->epsn, Psn(static_cast<uint32_t>(seq.size())));
  }
}

// UC: an out-of-sequence MIDDLE or LAST is dropped; a FIRST or ONLY abandons the
// message in progress and is received on its own, in the same receive WQE.
TEST(OpcodeSequence, UcDropsTheMessageInProgressAndGoesOn) {
  QpOptions o;
  o.type = QpType::Uc;
  TestBed bed;
  auto [x, y] = bed.pair(o);
  y->post_recv(y->recv_wqe(1, 0, 16384));
  inject(bed, *y, Opcode::UcSendFirst, 0);
  inject(bed, *y, Opcode::UcRdmaWriteMiddle, 1);  // dropped
  EXPECT_EQ(y->nic().responder().counters().bad_opcode_sequence, 1u);
  inject(bed, *y, Opcode::UcSendOnly, 2);  // abandons the SEND begun at PSN 0
  EXPECT_EQ(y->nic().responder().counters().bad_opcode_sequence, 2u);
  EXPECT_EQ(y->nic().qp(y->qpn)->state, QpState::Rts);
  ASSERT_EQ(y->cqes.size(), 1u);
  EXPECT_EQ(y->cqes[0].cqe.wr_id, 1u);
  EXPECT_EQ(y->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_EQ(y->cqes[0].cqe.byte_len, 64u) << "only the SEND ONLY's bytes";
}

}  // namespace
