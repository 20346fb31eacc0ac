// Data path of the RNIC model end to end between two NICs: RDMA WRITE (with and
// without immediate), SEND/RECV with scatter/gather, inline data, selective
// signalling, UC, PSN wrap-around.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "nic_fixture.hpp"

using namespace rnicsim;
using namespace rnicsim::nictest;

namespace {

struct WriteCase {
  uint32_t size;
  uint32_t mtu;
};

class RdmaWriteSizes : public ::testing::TestWithParam<WriteCase> {};

TEST_P(RdmaWriteSizes, LandsByteExactWithOneRequesterCqe) {
  const WriteCase c = GetParam();
  TestBed bed;
  QpOptions o;
  o.path_mtu = c.mtu;
  auto [x, y] = bed.pair(o);
  // Source at an odd offset, target at another odd offset: no alignment assumed.
  const uint64_t src_off = 3, dst_off = 4096 + 5;
  fill_random(x->bytes(src_off, c.size), c.size);
  x->post_send(x->write_wqe(0xABC0 + c.size, src_off, c.size, *y, dst_off));
  bed.run();

  EXPECT_TRUE(same(y->bytes(dst_off, c.size), x->bytes(src_off, c.size)));
  EXPECT_TRUE(all_zero(y->bytes(0, dst_off))) << "bytes before the target range were written";
  EXPECT_TRUE(all_zero(y->bytes(dst_off + c.size, 4096))) << "bytes after the target range were written";
  ASSERT_EQ(x->cqes.size(), 1u);
  const Cqe& q = x->cqes[0].cqe;
  EXPECT_EQ(q.status, WcStatus::Success);
  EXPECT_EQ(q.opcode, WcOpcode::RdmaWrite);
  EXPECT_EQ(q.byte_len, c.size);
  EXPECT_EQ(q.wr_id, 0xABC0u + c.size);
  EXPECT_EQ(q.qp_num, x->qpn);
  EXPECT_TRUE(y->cqes.empty()) << "a plain RDMA WRITE completes nothing at the responder";
  // One request packet per path-MTU chunk, none retransmitted.
  const uint64_t packets = (c.size + c.mtu - 1) / c.mtu;
  EXPECT_EQ(x->nic().requester().packets_sent(), packets);
  EXPECT_EQ(x->nic().stats().retransmitted_packets, 0u);
  EXPECT_GE(y->nic().responder().counters().acks_sent, 1u);
}

INSTANTIATE_TEST_SUITE_P(SizesAndMtus, RdmaWriteSizes,
                         ::testing::Values(WriteCase{1, 1024}, WriteCase{4095, 1024}, WriteCase{4096, 1024},
                                           WriteCase{4097, 1024}, WriteCase{1 << 20, 1024}, WriteCase{1, 4096},
                                           WriteCase{4095, 4096}, WriteCase{4096, 4096}, WriteCase{4097, 4096},
                                           WriteCase{1 << 20, 4096}),
                         [](const auto& info) {
                           return "size" + std::to_string(info.param.size) + "_mtu" + std::to_string(info.param.mtu);
                         });

TEST(RdmaWrite, ManyOutstandingAllCompleteInOrder) {
  TestBed bed;
  auto [x, y] = bed.pair();
  constexpr uint32_t kMsgs = 40, kSize = 10000;
  fill_random(x->bytes(0, kMsgs * kSize), 99);
  for (uint32_t i = 0; i < kMsgs; ++i) x->post_send(x->write_wqe(i, uint64_t{i} * kSize, kSize, *y, uint64_t{i} * kSize));
  bed.run();
  EXPECT_TRUE(same(y->bytes(0, kMsgs * kSize), x->bytes(0, kMsgs * kSize)));
  ASSERT_EQ(x->cqes.size(), kMsgs);
  for (uint32_t i = 0; i < kMsgs; ++i) {
    EXPECT_EQ(x->cqes[i].cqe.wr_id, i);
    EXPECT_EQ(x->cqes[i].cqe.status, WcStatus::Success);
    if (i > 0) {
      EXPECT_GE(x->cqes[i].at, x->cqes[i - 1].at);
    }
  }
}

TEST(RdmaWrite, CompletionTakesAtLeastARoundTrip) {
  TestBed bed;  // 1 us each way
  auto [x, y] = bed.pair();
  x->post_send(x->write_wqe(1, 0, 64, *y, 0));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  // Request out, ACK back: two propagation delays, plus PCIe both ends.
  EXPECT_GT(x->cqes[0].at - sim::Time::zero(), sim::Duration::us(2));
  EXPECT_LT(x->cqes[0].at - sim::Time::zero(), sim::Duration::us(10));
}

TEST(RdmaWriteWithImm, ResponderGetsImmediateAndConsumesOneRecv) {
  TestBed bed;
  QpOptions o;
  o.path_mtu = 1024;
  auto [x, y] = bed.pair(o);
  constexpr uint32_t kSize = 3000;  // three packets: the immediate is on the last
  fill_random(x->bytes(0, kSize), 5);
  y->post_recv(y->recv_wqe(501, 0, 16));  // a WRITE_WITH_IMM places nothing in the receive buffer
  y->post_recv(y->recv_wqe(502, 0, 16));
  SendWqe w = x->write_wqe(77, 0, kSize, *y, 8192);
  w.opcode = WrOpcode::RdmaWriteWithImm;
  w.imm_data = __builtin_bswap32(0x12345678u);  // network order, as ibv_send_wr carries it
  x->post_send(w);
  bed.run();

  EXPECT_TRUE(same(y->bytes(8192, kSize), x->bytes(0, kSize)));
  EXPECT_TRUE(all_zero(y->bytes(0, 16))) << "the receive WQE's buffer must stay untouched";
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.opcode, WcOpcode::RdmaWrite);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_EQ(x->cqes[0].cqe.byte_len, kSize);
  ASSERT_EQ(y->cqes.size(), 1u);
  const Cqe& r = y->cqes[0].cqe;
  EXPECT_EQ(r.status, WcStatus::Success);
  EXPECT_EQ(r.opcode, WcOpcode::RecvRdmaWithImm);
  EXPECT_EQ(r.wr_id, 501u) << "the oldest receive WQE is consumed";
  EXPECT_TRUE(r.wc_flags & kWcWithImm);
  EXPECT_EQ(r.imm_data, __builtin_bswap32(0x12345678u));
  EXPECT_EQ(r.byte_len, kSize);
  EXPECT_EQ(r.qp_num, y->qpn);
  EXPECT_EQ(r.src_qp, x->qpn);

  // The second receive WQE is still there: a SEND now lands in it.
  std::memcpy(x->bytes(100000, 4).data(), "ping", 4);
  x->post_send(x->send_wqe(78, 100000, 4));
  bed.run();
  ASSERT_EQ(y->cqes.size(), 2u);
  EXPECT_EQ(y->cqes[1].cqe.wr_id, 502u);
  EXPECT_EQ(y->cqes[1].cqe.opcode, WcOpcode::Recv);
  EXPECT_EQ(y->cqes[1].cqe.byte_len, 4u);
  EXPECT_EQ(y->cqes[1].cqe.wc_flags & kWcWithImm, 0);
  EXPECT_EQ(std::memcmp(y->bytes(0, 4).data(), "ping", 4), 0);
}

TEST(SendRecv, ScatterGatherOnBothSides) {
  TestBed bed;
  QpOptions o;
  o.path_mtu = 1024;
  auto [x, y] = bed.pair(o);
  // Send 100 + 2000 + 3000 = 5100 bytes gathered from three places.
  const uint64_t off[3] = {10, 50000, 300001};
  const uint32_t len[3] = {100, 2000, 3000};
  std::vector<std::byte> expected;
  for (int i = 0; i < 3; ++i) {
    fill_random(x->bytes(off[i], len[i]), 10 + i);
    auto s = x->bytes(off[i], len[i]);
    expected.insert(expected.end(), s.begin(), s.end());
  }
  // Receive into 1500 at one place and 4000 at another.
  RecvWqe r{};
  r.wr_id = 900;
  r.num_sge = 2;
  r.sge[0] = Sge{y->buffer + 7, 1500, y->mr.lkey};
  r.sge[1] = Sge{y->buffer + 65536, 4000, y->mr.lkey};
  y->post_recv(r);
  SendWqe w{};
  w.wr_id = 800;
  w.opcode = WrOpcode::Send;
  w.send_flags = kSendSignaled;
  w.num_sge = 3;
  for (int i = 0; i < 3; ++i) w.sge[i] = Sge{x->buffer + off[i], len[i], x->mr.lkey};
  x->post_send(w);
  bed.run();

  const std::span<const std::byte> want(expected);
  EXPECT_TRUE(same(y->bytes(7, 1500), want.subspan(0, 1500)));
  EXPECT_TRUE(same(y->bytes(65536, 3600), want.subspan(1500, 3600)));
  EXPECT_TRUE(all_zero(y->bytes(65536 + 3600, 400))) << "the unused tail of the second SGE was written";
  EXPECT_TRUE(all_zero(y->bytes(0, 7)));
  EXPECT_TRUE(all_zero(y->bytes(1507, 1000)));
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.opcode, WcOpcode::Send);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_EQ(x->cqes[0].cqe.byte_len, 5100u);
  EXPECT_EQ(x->cqes[0].cqe.wr_id, 800u);
  ASSERT_EQ(y->cqes.size(), 1u);
  const Cqe& c = y->cqes[0].cqe;
  EXPECT_EQ(c.status, WcStatus::Success);
  EXPECT_EQ(c.opcode, WcOpcode::Recv);
  EXPECT_EQ(c.byte_len, 5100u);
  EXPECT_EQ(c.wr_id, 900u);
  EXPECT_EQ(c.wc_flags & kWcWithImm, 0);
  EXPECT_EQ(c.qp_num, y->qpn);
  EXPECT_EQ(c.src_qp, x->qpn);
}

// A queue made for more SGEs has larger slots (wqe_stride): 28 SGEs, the most,
// gathered on one side and scattered into 28 on the other, in 512-byte slots.
TEST(SendRecv, TwentyEightSgesInLargerSlots) {
  TestBed bed;
  QpOptions o;
  o.path_mtu = 1024;
  o.sq_stride = o.rq_stride = wqe_stride(kMaxSge, 0);
  ASSERT_EQ(o.sq_stride, 512u);
  auto [x, y] = bed.pair(o);
  std::vector<std::byte> expected;
  SendWqe w{};
  w.wr_id = 1;
  w.opcode = WrOpcode::Send;
  w.send_flags = kSendSignaled;
  w.num_sge = kMaxSge;
  RecvWqe r{};
  r.wr_id = 2;
  r.num_sge = kMaxSge;
  for (uint32_t i = 0; i < kMaxSge; ++i) {
    const uint64_t from = 4096 * i + i, to = 8192 * i + 3;
    const uint32_t len = 100 + 37 * i;
    fill_random(x->bytes(from, len), 40 + i);
    auto b = x->bytes(from, len);
    expected.insert(expected.end(), b.begin(), b.end());
    w.sge[i] = Sge{x->buffer + from, len, x->mr.lkey};
    r.sge[i] = Sge{y->buffer + to, len, y->mr.lkey};
  }
  y->post_recv(r);
  x->post_send(w);
  x->post_send(x->send_wqe(3, 0, 8));  // the next slot is where a 512-byte stride puts it
  bed.run();
  ASSERT_EQ(y->cqes.size(), 1u) << "one receive posted";
  EXPECT_EQ(y->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_EQ(y->cqes[0].cqe.byte_len, expected.size());
  size_t at = 0;
  for (uint32_t i = 0; i < kMaxSge; ++i) {
    const uint32_t len = 100 + 37 * i;
    EXPECT_TRUE(same(y->bytes(8192 * i + 3, len), std::span<const std::byte>(expected).subspan(at, len))) << "SGE " << i;
    at += len;
  }
  ASSERT_GE(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.wr_id, 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
}

// A WQE that says it has more SGEs than its slot holds was never whole in the
// ring: it completes with a local QP operation error.
TEST(SendRecv, MoreSgesThanTheSlotHoldsIsALocalError) {
  TestBed bed;
  auto [x, y] = bed.pair();  // 128-byte slots: four SGEs
  SendWqe w = x->send_wqe(1, 0, 8);
  w.num_sge = 5;
  x->post_send(w);
  bed.run();
  ASSERT_GE(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.wr_id, 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::LocQpOpErr);
}

TEST(SendRecv, SendWithImmediate) {
  TestBed bed;
  auto [x, y] = bed.pair();
  fill_random(x->bytes(0, 200), 3);
  y->post_recv(y->recv_wqe(1, 1000, 256));
  SendWqe w = x->send_wqe(2, 0, 200);
  w.opcode = WrOpcode::SendWithImm;
  w.imm_data = __builtin_bswap32(0xCAFEF00Du);
  x->post_send(w);
  bed.run();
  EXPECT_TRUE(same(y->bytes(1000, 200), x->bytes(0, 200)));
  ASSERT_EQ(y->cqes.size(), 1u);
  const Cqe& c = y->cqes[0].cqe;
  EXPECT_EQ(c.status, WcStatus::Success);
  EXPECT_EQ(c.opcode, WcOpcode::Recv);
  EXPECT_EQ(c.byte_len, 200u);
  EXPECT_TRUE(c.wc_flags & kWcWithImm);
  EXPECT_EQ(c.imm_data, __builtin_bswap32(0xCAFEF00Du));
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.opcode, WcOpcode::Send);
}

TEST(SendRecv, ReceivesAreConsumedInOrder) {
  TestBed bed;
  auto [x, y] = bed.pair();
  for (uint64_t i = 0; i < 5; ++i) y->post_recv(y->recv_wqe(100 + i, i * 4096, 4096));
  for (uint32_t i = 0; i < 5; ++i) {
    auto s = x->bytes(i * 4096, 4096);
    std::fill(s.begin(), s.end(), std::byte{static_cast<uint8_t>(0xA0 + i)});
    x->post_send(x->send_wqe(i, i * 4096, 100 * (i + 1)));
  }
  bed.run();
  ASSERT_EQ(y->cqes.size(), 5u);
  for (uint32_t i = 0; i < 5; ++i) {
    EXPECT_EQ(y->cqes[i].cqe.wr_id, 100u + i);
    EXPECT_EQ(y->cqes[i].cqe.byte_len, 100u * (i + 1));
    EXPECT_EQ(y->bytes(i * 4096, 1)[0], std::byte{static_cast<uint8_t>(0xA0 + i)});
    EXPECT_EQ(y->bytes(i * 4096 + 100 * (i + 1), 1)[0], std::byte{0});
  }
}

TEST(Signalling, OnlySignaledWqesComplete) {
  TestBed bed;
  auto [x, y] = bed.pair();
  const bool signaled[] = {true, false, false, true, false, true};
  for (uint64_t i = 0; i < std::size(signaled); ++i)
    x->post_send(x->write_wqe(i, i * 64, 64, *y, i * 64, signaled[i]));
  // Unsignaled SENDs too.
  y->post_recv(y->recv_wqe(0, 100000, 64));
  y->post_recv(y->recv_wqe(1, 100064, 64));
  x->post_send(x->send_wqe(10, 0, 64, false));
  x->post_send(x->send_wqe(11, 0, 64, true));
  bed.run();
  std::vector<uint64_t> ids;
  for (const auto& c : x->cqes) {
    EXPECT_EQ(c.cqe.status, WcStatus::Success);
    ids.push_back(c.cqe.wr_id);
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{0, 3, 5, 11}));
  // The responder completes both receives regardless of the sender's signalling.
  EXPECT_EQ(y->cqes.size(), 2u);
  EXPECT_TRUE(same(y->bytes(0, 6 * 64), x->bytes(0, 6 * 64))) << "unsignaled writes are executed all the same";
}

TEST(Signalling, SqSigAllCompletesEverything) {
  TestBed bed;
  QpOptions o;
  o.sq_sig_all = true;
  auto [x, y] = bed.pair(o);
  for (uint64_t i = 0; i < 4; ++i) x->post_send(x->write_wqe(i, 0, 64, *y, 0, false));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 4u);
  for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(x->cqes[i].cqe.wr_id, i);
}

TEST(Inline, SendAndWriteCarryTheWqeBytes) {
  TestBed bed;
  auto [x, y] = bed.pair();
  y->post_recv(y->recv_wqe(1, 0, 128));
  SendWqe w{};
  w.wr_id = 42;
  w.opcode = WrOpcode::Send;
  w.send_flags = kSendSignaled | kSendInline;
  w.inline_len = 64;
  for (size_t i = 0; i < 64; ++i) w.inline_data[i] = std::byte{static_cast<uint8_t>(i * 3 + 1)};
  const auto sent = w.inline_data;
  x->post_send(w);
  // An inline WRITE of 17 bytes; the source buffer stays zero, so data can only come from the WQE.
  SendWqe iw{};
  iw.wr_id = 43;
  iw.opcode = WrOpcode::RdmaWrite;
  iw.send_flags = kSendSignaled | kSendInline;
  iw.inline_len = 17;
  for (size_t i = 0; i < 17; ++i) iw.inline_data[i] = std::byte{static_cast<uint8_t>(0xF0 - i)};
  iw.remote_addr = y->buffer + 5000;
  iw.rkey = y->mr.rkey;
  x->post_send(iw);
  bed.run();

  EXPECT_TRUE(same(y->bytes(0, 64), std::span<const std::byte>(sent.data(), 64)));
  EXPECT_TRUE(all_zero(y->bytes(64, 64)));
  EXPECT_TRUE(same(y->bytes(5000, 17), std::span<const std::byte>(iw.inline_data.data(), 17)));
  EXPECT_TRUE(all_zero(y->bytes(5017, 64)));
  ASSERT_EQ(y->cqes.size(), 1u);
  EXPECT_EQ(y->cqes[0].cqe.byte_len, 64u);
  ASSERT_EQ(x->cqes.size(), 2u);
  EXPECT_EQ(x->cqes[0].cqe.wr_id, 42u);
  EXPECT_EQ(x->cqes[0].cqe.byte_len, 64u);
  EXPECT_EQ(x->cqes[1].cqe.wr_id, 43u);
  EXPECT_EQ(x->cqes[1].cqe.byte_len, 17u);
  EXPECT_EQ(x->cqes[1].cqe.status, WcStatus::Success);
}

TEST(Inline, ALargerSlotCarriesMoreInline) {
  TestBed bed;
  QpOptions o;
  o.sq_stride = wqe_stride(0, 300);
  auto [x, y] = bed.pair(o);
  SendWqe w = x->write_wqe(1, 0, 0, *y, 0);
  w.send_flags = kSendSignaled | kSendInline;
  w.inline_len = 300;
  for (uint32_t i = 0; i < 300; ++i) w.inline_data[i] = std::byte(i * 7);
  x->post_send(w);
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_TRUE(same(y->bytes(0, 300), std::span<const std::byte>(w.inline_data).first(300)));
}

TEST(Inline, TooLongInlineIsALocalError) {
  TestBed bed;
  auto [x, y] = bed.pair();
  SendWqe w = x->write_wqe(1, 0, 0, *y, 0);
  w.send_flags = kSendSignaled | kSendInline;
  w.inline_len = 65;  // more than the 64 bytes a 128-byte slot holds
  x->post_send(w);
  bed.run();
  ASSERT_GE(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.wr_id, 1u);
  EXPECT_NE(x->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_TRUE(all_zero(y->bytes(0, 128)));
}

TEST(Uc, WriteWorksWithoutAcks) {
  TestBed bed;
  QpOptions o;
  o.type = QpType::Uc;
  o.path_mtu = 1024;
  auto [x, y] = bed.pair(o);
  constexpr uint32_t kSize = 20000;
  fill_random(x->bytes(0, kSize), 8);
  x->post_send(x->write_wqe(5, 0, kSize, *y, 100));
  SendWqe wi = x->write_wqe(6, 0, 10, *y, 50000);
  wi.opcode = WrOpcode::RdmaWriteWithImm;
  wi.imm_data = __builtin_bswap32(7u);
  y->post_recv(y->recv_wqe(60, 0, 0));
  x->post_send(wi);
  bed.run();
  EXPECT_TRUE(same(y->bytes(100, kSize), x->bytes(0, kSize)));
  EXPECT_TRUE(same(y->bytes(50000, 10), x->bytes(0, 10)));
  ASSERT_EQ(x->cqes.size(), 2u);
  EXPECT_EQ(x->cqes[0].cqe.wr_id, 5u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_EQ(x->cqes[0].cqe.opcode, WcOpcode::RdmaWrite);
  EXPECT_EQ(x->cqes[0].cqe.byte_len, kSize);
  EXPECT_EQ(x->cqes[1].cqe.wr_id, 6u);
  ASSERT_EQ(y->cqes.size(), 1u);
  EXPECT_EQ(y->cqes[0].cqe.opcode, WcOpcode::RecvRdmaWithImm);
  EXPECT_EQ(y->cqes[0].cqe.imm_data, __builtin_bswap32(7u));
  EXPECT_EQ(y->nic().responder().counters().acks_sent, 0u);
  EXPECT_EQ(x->nic().completer().acks(), 0u);
  EXPECT_EQ(x->nic().stats().tx_packets, (kSize + 1023) / 1024 + 1);
  EXPECT_EQ(y->nic().stats().tx_packets, 0u) << "UC sends nothing back";
}

TEST(Uc, LostPacketDropsOnlyThatMessage) {
  TestBed bed(0.05, 0.0, 11);
  QpOptions o;
  o.type = QpType::Uc;
  o.path_mtu = 1024;
  auto [x, y] = bed.pair(o);
  constexpr uint32_t kMsgs = 30, kSize = 8192;
  fill_random(x->bytes(0, kMsgs * kSize), 12);
  for (uint32_t i = 0; i < kMsgs; ++i) x->post_send(x->write_wqe(i, uint64_t{i} * kSize, kSize, *y, uint64_t{i} * kSize));
  bed.run();
  // UC completes every WQE at the requester (nothing is acknowledged or retried)...
  ASSERT_EQ(x->cqes.size(), kMsgs);
  for (const auto& c : x->cqes) EXPECT_EQ(c.cqe.status, WcStatus::Success);
  EXPECT_EQ(x->nic().stats().retransmitted_packets, 0u);
  EXPECT_GT(x->host().port->counters().drops_loss, 0u);
  // ...and messages whose packets all arrived are intact.
  uint32_t intact = 0;
  for (uint32_t i = 0; i < kMsgs; ++i)
    intact += same(y->bytes(uint64_t{i} * kSize, kSize), x->bytes(uint64_t{i} * kSize, kSize));
  EXPECT_GT(intact, 0u);
  EXPECT_LT(intact, kMsgs);
}

TEST(Psn, TransferAcrossThe24BitWrap) {
  TestBed bed;
  QpOptions o;
  o.path_mtu = 1024;
  o.psn = 0xFFFFF0;  // 16 PSNs before the wrap; 1 MiB takes 1024
  auto [x, y] = bed.pair(o);
  fill_random(x->bytes(0, 1 << 20), 77);
  x->post_send(x->write_wqe(1, 0, 1 << 20, *y, 0));
  x->post_send(x->write_wqe(2, 0, 100, *y, (1 << 20) + 64));
  bed.run();
  EXPECT_TRUE(same(y->bytes(0, 1 << 20), x->bytes(0, 1 << 20)));
  ASSERT_EQ(x->cqes.size(), 2u);
  EXPECT_EQ(x->cqes[0].cqe.status, WcStatus::Success);
  EXPECT_EQ(x->cqes[1].cqe.status, WcStatus::Success);
  EXPECT_EQ(x->nic().stats().retransmitted_packets, 0u);
  const QpContext* q = x->nic().qp(x->qpn);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->next_psn, packet::Psn(0xFFFFF0) + 1025);
  EXPECT_EQ(q->una, q->next_psn);
}


// A request's payload stays in the sender's memory until the receiver's DMA
// write takes it (fabric::Frame, "Borrowed payload"). Bytes changed while their
// packets are on the way must not leak into them: here the peer writes over the
// start of the sender's source buffer while its first packets are in flight
// (they were read before, so they carry the old bytes), and over a part the
// sender reads only later (which then carries the new ones). Every byte lands
// as in a run where each DMA read copies.
TEST(BorrowedPayload, OverwrittenSourceGivesTheBytesOfCopyingReads) {
  constexpr uint32_t kSize = 1 << 20, kChunk = 64 << 10, kLater = 512 << 10;
  auto run = [&](bool lending, uint64_t& settled) {
    TestBed bed;
    QpOptions o;
    auto [x, y] = bed.pair(o);
    bed.a().memory.set_lending(lending);
    bed.b().memory.set_lending(lending);
    fill_random(x->bytes(0, kSize), 5);
    fill_random(y->bytes(kSize, 2 * kChunk), 6);
    x->post_send(x->write_wqe(1, 0, kSize, *y, 0));
    y->post_send(y->write_wqe(2, kSize, kChunk, *x, 0));
    y->post_send(y->write_wqe(3, kSize + kChunk, kChunk, *x, kLater));
    bed.run();
    EXPECT_EQ(x->cqes.size(), 1u);
    EXPECT_EQ(y->cqes.size(), 2u);
    settled = bed.a().memory.borrowers().settled();
    EXPECT_EQ(bed.a().memory.borrowers().borrowers(), 0u);
    const auto got = y->bytes(0, kSize);
    return std::vector<std::byte>(got.begin(), got.end());
  };
  uint64_t settled_lending = 0, settled_copying = 0;
  const std::vector<std::byte> lending = run(true, settled_lending);
  const std::vector<std::byte> copying = run(false, settled_copying);
  EXPECT_GT(settled_lending, 0u) << "no packet in flight borrowed the bytes the peer overwrote";
  EXPECT_EQ(settled_copying, 0u);
  EXPECT_TRUE(lending == copying) << "a borrowed payload changed after its DMA read";
  std::vector<std::byte> original(kSize), peer(2 * kChunk);
  fill_random(std::span(original), 5);
  fill_random(std::span(peer), 6);
  EXPECT_EQ(std::memcmp(lending.data(), original.data(), kLater), 0) << "read before the overwrite";
  EXPECT_EQ(std::memcmp(lending.data() + kLater, peer.data() + kChunk, kChunk), 0) << "read after the overwrite";
  EXPECT_EQ(std::memcmp(lending.data() + kLater + kChunk, original.data() + kLater + kChunk, kSize - kLater - kChunk), 0);
}

// A tally of a host's QPs is the sum of their payload in host memory at every
// step, writes in flight included, and leaves out a QP created without it.
TEST(PayloadTally, SumsItsQpsPayloadPlacedAtEveryEvent) {
  TestBed bed;
  const uint32_t tally = bed.b().nic->open_tally();
  QpOptions counted;
  counted.tally = tally;
  auto [x1, y1] = bed.pair({}, counted);
  auto [x2, y2] = bed.pair({}, counted);
  auto [x3, y3] = bed.pair();  // on host b too, not in the tally
  x1->post_send(x1->write_wqe(1, 0, 64 * 1024, *y1, 0));
  x2->post_send(x2->write_wqe(2, 0, 48 * 1024 + 5, *y2, 0));
  x3->post_send(x3->write_wqe(3, 0, 32 * 1024, *y3, 0));
  Nic& b = *bed.b().nic;
  // A QP's payload in host memory: taken in, less its writes still over PCIe.
  auto placed = [&](Qpn qpn) {
    const uint64_t accepted = b.qp(qpn)->payload_bytes_accepted;
    return accepted - std::min(accepted, b.dma().writing(qpn));
  };
  bool partly = false;  // a step with bytes taken in but still on their way over PCIe
  while (bed.sim.scheduler().step()) {
    const uint64_t sum = placed(y1->qpn) + placed(y2->qpn);
    ASSERT_EQ(b.payload_placed_in(tally), sum);
    partly |= b.dma().writing(y1->qpn) + b.dma().writing(y2->qpn) > 0;
  }
  EXPECT_TRUE(partly);
  EXPECT_EQ(b.payload_placed_in(tally), 64u * 1024 + 48 * 1024 + 5);
  EXPECT_EQ(placed(y3->qpn), 32u * 1024);
  EXPECT_EQ(b.payload_placed_in(0), 0u);
  // A destroyed QP's bytes leave the tally.
  ASSERT_TRUE(b.destroy_qp(y2->qpn));
  EXPECT_EQ(b.payload_placed_in(tally), 64u * 1024);
}

}  // namespace
