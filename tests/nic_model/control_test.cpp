// Control path: the QP state machine (apply_modify, Nic::modify_qp), the flush on
// ERR, memory translation and protection, the host rings.
#include <gtest/gtest.h>

#include <cerrno>

#include "nic_fixture.hpp"
#include "nic_model/memory_translation.hpp"
#include "nic_model/qp_state.hpp"

using namespace rnicsim;
using namespace rnicsim::nictest;

namespace {

constexpr uint32_t kInitMask = kQpState | kQpPkeyIndex | kQpPort | kQpAccessFlags;
constexpr uint32_t kRtrMask = kQpState | kQpAv | kQpPathMtu | kQpDestQpn | kQpRqPsn | kQpMaxDestRdAtomic | kQpMinRnrTimer;
constexpr uint32_t kRtsMask = kQpState | kQpSqPsn | kQpTimeout | kQpRetryCnt | kQpRnrRetry | kQpMaxQpRdAtomic;

QpAttr state(QpState s) {
  QpAttr a;
  a.state = s;
  return a;
}

// RTR -> RTS sets the local ACK timer's wait from the attribute's exponent, or
// takes the exact time a simulation gives (no exponent gives 100 us).
TEST(QpStateMachine, TheAckTimeoutIsTheExponentsOrAnExactTime) {
  for (const sim::Duration exact : {sim::Duration::zero(), sim::Duration::us(100)}) {
    QpContext qp;
    qp.type = QpType::Rc;
    qp.state = QpState::Rtr;
    QpAttr a = state(QpState::Rts);
    a.timeout = 5;
    a.ack_timeout = exact;
    ASSERT_EQ(apply_modify(qp, a, kRtsMask), 0);
    EXPECT_EQ(qp.timeout, 5) << "the attribute a query returns";
    EXPECT_EQ(qp.ack_timeout, exact > sim::Duration::zero() ? exact : sim::Duration::ns(4096 * 32));
  }
}

TEST(QpStateMachine, ValidRcChainAppliesAttributes) {
  QpContext qp;
  qp.type = QpType::Rc;
  EXPECT_EQ(apply_modify(qp, state(QpState::Init), kInitMask), 0);
  EXPECT_EQ(qp.state, QpState::Init);
  QpAttr a = state(QpState::Rtr);
  a.path_mtu = 2048;
  a.dest_qpn = Qpn(0x123456);
  a.rq_psn = Psn(0xABCDEF);
  a.min_rnr_timer = 3;
  a.av.lid = 9;
  EXPECT_EQ(apply_modify(qp, a, kRtrMask), 0);
  EXPECT_EQ(qp.state, QpState::Rtr);
  EXPECT_EQ(qp.path_mtu, 2048u);
  EXPECT_EQ(qp.dest_qpn.value(), 0x123456u);
  EXPECT_EQ(qp.epsn, packet::Psn(0xABCDEF));
  EXPECT_EQ(qp.min_rnr_timer, 3);
  EXPECT_EQ(qp.remote.lid, 9);
  a = state(QpState::Rts);
  a.sq_psn = Psn(100);
  a.timeout = 9;
  a.retry_cnt = 4;
  a.rnr_retry = 5;
  EXPECT_EQ(apply_modify(qp, a, kRtsMask), 0);
  EXPECT_EQ(qp.state, QpState::Rts);
  EXPECT_EQ(qp.next_psn, packet::Psn(100));
  EXPECT_EQ(qp.una, packet::Psn(100));
  EXPECT_EQ(qp.timeout, 9);
  EXPECT_EQ(qp.retry_cnt, 4);
  EXPECT_EQ(qp.retries_left, 4u);
  EXPECT_EQ(qp.rnr_retry, 5);
  // RTS -> RTS with only the state; RTS -> SQD -> RTS.
  EXPECT_EQ(apply_modify(qp, state(QpState::Rts), kQpState), 0);
  EXPECT_EQ(apply_modify(qp, state(QpState::Sqd), kQpState), 0);
  EXPECT_EQ(qp.state, QpState::Sqd);
  EXPECT_EQ(apply_modify(qp, state(QpState::Rts), kQpState), 0);
  EXPECT_EQ(qp.state, QpState::Rts);
}

TEST(QpStateMachine, InvalidTransitionsAreEinval) {
  QpContext qp;
  qp.type = QpType::Rc;
  EXPECT_EQ(apply_modify(qp, state(QpState::Rts), kRtsMask), EINVAL) << "RESET -> RTS directly";
  EXPECT_EQ(apply_modify(qp, state(QpState::Rtr), kRtrMask), EINVAL) << "RESET -> RTR directly";
  EXPECT_EQ(apply_modify(qp, state(QpState::Sqd), kQpState), EINVAL);
  EXPECT_EQ(qp.state, QpState::Reset) << "a refused modify changes nothing";
  ASSERT_EQ(apply_modify(qp, state(QpState::Init), kInitMask), 0);
  EXPECT_EQ(apply_modify(qp, state(QpState::Rts), kRtsMask), EINVAL) << "INIT -> RTS skips RTR";
  EXPECT_EQ(qp.state, QpState::Init);
}

TEST(QpStateMachine, MissingOrExtraAttributesAreEinval) {
  QpContext qp;
  qp.type = QpType::Rc;
  ASSERT_EQ(apply_modify(qp, state(QpState::Init), kInitMask), 0);
  // Each RC-required RTR attribute, left out in turn.
  for (uint32_t bit : {kQpAv, kQpPathMtu, kQpDestQpn, kQpRqPsn, kQpMaxDestRdAtomic, kQpMinRnrTimer}) {
    QpAttr a = state(QpState::Rtr);
    a.dest_qpn = Qpn(77);
    EXPECT_EQ(apply_modify(qp, a, kRtrMask & ~bit), EINVAL) << "mask bit " << bit;
    EXPECT_EQ(qp.state, QpState::Init);
    EXPECT_EQ(qp.dest_qpn.value(), 0u) << "a refused modify must not apply any attribute";
  }
  // An attribute RTR does not allow (SQ PSN belongs to RTS).
  EXPECT_EQ(apply_modify(qp, state(QpState::Rtr), kRtrMask | kQpSqPsn), EINVAL);
  // A bad path MTU.
  QpAttr bad = state(QpState::Rtr);
  bad.path_mtu = 3000;
  EXPECT_EQ(apply_modify(qp, bad, kRtrMask), EINVAL);
  ASSERT_EQ(apply_modify(qp, state(QpState::Rtr), kRtrMask), 0);
  for (uint32_t bit : {kQpSqPsn, kQpTimeout, kQpRetryCnt, kQpRnrRetry, kQpMaxQpRdAtomic})
    EXPECT_EQ(apply_modify(qp, state(QpState::Rts), kRtsMask & ~bit), EINVAL) << "mask bit " << bit;
  QpAttr r = state(QpState::Rts);
  r.retry_cnt = 8;
  EXPECT_EQ(apply_modify(qp, r, kRtsMask), EINVAL) << "retry_cnt is 3 bits";
  r = state(QpState::Rts);
  r.timeout = 32;
  EXPECT_EQ(apply_modify(qp, r, kRtsMask), EINVAL) << "timeout is 5 bits";
  EXPECT_EQ(qp.state, QpState::Rtr);
  EXPECT_EQ(apply_modify(qp, state(QpState::Rts), kRtsMask), 0);
}

TEST(QpStateMachine, UcNeedsFewerAttributesThanRc) {
  QpContext uc;
  uc.type = QpType::Uc;
  ASSERT_EQ(apply_modify(uc, state(QpState::Init), kInitMask), 0);
  EXPECT_EQ(apply_modify(uc, state(QpState::Rtr), kQpState | kQpAv | kQpPathMtu | kQpDestQpn | kQpRqPsn), 0);
  EXPECT_EQ(apply_modify(uc, state(QpState::Rts), kRtsMask), EINVAL) << "UC has no timeout/retry attributes";
  EXPECT_EQ(apply_modify(uc, state(QpState::Rts), kQpState | kQpSqPsn), 0);
  QpContext rc;
  rc.type = QpType::Rc;
  ASSERT_EQ(apply_modify(rc, state(QpState::Init), kInitMask), 0);
  EXPECT_EQ(apply_modify(rc, state(QpState::Rtr), kQpState | kQpAv | kQpPathMtu | kQpDestQpn | kQpRqPsn), EINVAL);
}

TEST(QpStateMachine, AnyStateToErrAndReset) {
  for (QpState from : {QpState::Reset, QpState::Init, QpState::Rtr, QpState::Rts, QpState::Sqd, QpState::Sqe}) {
    QpContext qp;
    qp.state = from;
    EXPECT_EQ(apply_modify(qp, state(QpState::Err), kQpState), 0) << to_string(from);
    EXPECT_EQ(qp.state, QpState::Err);
    EXPECT_EQ(apply_modify(qp, state(QpState::Reset), kQpState), 0);
    EXPECT_EQ(qp.state, QpState::Reset);
  }
  const TransitionRule r = transition_rule(QpType::Rc, QpState::Rts, QpState::Init);
  EXPECT_FALSE(r.valid);
}

TEST(NicModifyQp, UnknownQpAndInvalidTransition) {
  TestBed bed;
  Endpoint e(bed.a(), {});
  EXPECT_EQ(bed.a().nic->modify_qp(Qpn(0xFFFF), state(QpState::Init), kInitMask), EINVAL);
  EXPECT_EQ(bed.a().nic->modify_qp(e.qpn, state(QpState::Rts), kRtsMask), EINVAL);
  EXPECT_EQ(e.to_init(), 0);
  EXPECT_EQ(bed.a().nic->qp(e.qpn)->state, QpState::Init);
}

TEST(NicModifyQp, ErrFlushesOutstandingReceives) {
  TestBed bed;
  auto [x, y] = bed.pair();
  for (uint64_t i = 0; i < 3; ++i) y->post_recv(y->recv_wqe(40 + i, i * 64, 64));
  bed.run();
  EXPECT_TRUE(y->cqes.empty());
  ASSERT_EQ(y->nic().modify_qp(y->qpn, state(QpState::Err), kQpState), 0);
  bed.run();
  ASSERT_EQ(y->cqes.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(y->cqes[i].cqe.wr_id, 40 + i);
    EXPECT_EQ(y->cqes[i].cqe.status, WcStatus::WrFlushErr);
    EXPECT_EQ(y->cqes[i].cqe.qp_num, y->qpn);
  }
  // A request arriving now is dropped, not executed.
  std::fill_n(x->bytes(0, 64).begin(), 64, std::byte{1});
  x->post_send(x->send_wqe(1, 0, 64));
  x->post_send(x->write_wqe(2, 0, 64, *y, 4096));
  bed.run(sim::Duration::us(100));
  EXPECT_EQ(y->cqes.size(), 3u);
  EXPECT_TRUE(all_zero(y->bytes(0, 8192)));
  EXPECT_GE(y->nic().responder().counters().dropped, 1u);
}

TEST(NicModifyQp, ErrFlushesOutstandingSends) {
  TestBed bed(1.0, 0.0);  // nothing gets acknowledged
  auto [x, y] = bed.pair();
  for (uint64_t i = 0; i < 4; ++i) x->post_send(x->write_wqe(i, 0, 64, *y, 0, i % 2 == 0));
  bed.run(sim::Duration::us(20));
  EXPECT_TRUE(x->cqes.empty());
  ASSERT_EQ(x->nic().modify_qp(x->qpn, state(QpState::Err), kQpState), 0);
  bed.run(sim::Duration::us(20));
  ASSERT_EQ(x->cqes.size(), 4u) << "flushed WQEs complete whether signaled or not";
  for (uint64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(x->cqes[i].cqe.wr_id, i);
    EXPECT_EQ(x->cqes[i].cqe.status, WcStatus::WrFlushErr);
  }
}

TEST(MemoryTranslation, ChecksKeysPdBoundsAndRights) {
  nic::MemoryTranslation t;
  const Pdn pd(1);
  const MemoryRegion mr = t.add(pd, 0x10000, 4096, 0x10000, kAccessLocalWrite | kAccessRemoteWrite);
  const MemoryRegion ro = t.add(pd, 0x20000, 4096, 0x7000, kAccessRemoteRead);
  EXPECT_NE(mr.lkey.value(), mr.rkey.value());
  EXPECT_NE(mr.lkey, ro.lkey);
  EXPECT_EQ(t.size(), 2u);
  uint64_t host = 0;
  EXPECT_EQ(t.check_remote(mr.rkey, pd, 0x10000, 4096, kAccessRemoteWrite, host), AccessCheck::Ok);
  EXPECT_EQ(host, 0x10000u);
  EXPECT_EQ(t.check_remote(mr.rkey, pd, 0x10FFF, 1, kAccessRemoteWrite, host), AccessCheck::Ok);
  EXPECT_EQ(host, 0x10FFFu);
  EXPECT_EQ(t.check_remote(mr.rkey, pd, 0x10000, 0, kAccessRemoteWrite, host), AccessCheck::Ok);
  EXPECT_EQ(t.check_remote(mr.rkey, pd, 0x10FFF, 2, kAccessRemoteWrite, host), AccessCheck::OutOfBounds);
  EXPECT_EQ(t.check_remote(mr.rkey, pd, 0xFFFF, 1, kAccessRemoteWrite, host), AccessCheck::OutOfBounds);
  EXPECT_EQ(t.check_remote(mr.rkey, pd, 0x11000, 1, kAccessRemoteWrite, host), AccessCheck::OutOfBounds);
  EXPECT_EQ(t.check_remote(mr.rkey, pd, 0x10000, UINT64_MAX, kAccessRemoteWrite, host), AccessCheck::OutOfBounds);
  EXPECT_EQ(t.check_remote(mr.rkey, pd, UINT64_MAX, 2, kAccessRemoteWrite, host), AccessCheck::OutOfBounds);
  EXPECT_EQ(t.check_remote(mr.rkey, Pdn(2), 0x10000, 1, kAccessRemoteWrite, host), AccessCheck::BadPd);
  EXPECT_EQ(t.check_remote(mr.rkey, pd, 0x10000, 1, kAccessRemoteRead, host), AccessCheck::NoPermission);
  // A key's number given as the other kind of key (as a packet or a WQE may carry it) finds nothing.
  EXPECT_EQ(t.check_remote(Rkey(mr.lkey.value()), pd, 0x10000, 1, kAccessRemoteWrite, host),
            AccessCheck::BadKey)
      << "an lkey is not an rkey";
  EXPECT_EQ(t.check_local(Lkey(mr.rkey.value()), pd, 0x10000, 1, 0, host), AccessCheck::BadKey)
      << "an rkey is not an lkey";
  EXPECT_EQ(t.check_local(mr.lkey, pd, 0x10010, 16, kAccessLocalWrite, host), AccessCheck::Ok);
  EXPECT_EQ(host, 0x10010u);
  // The region registered with an iova: keys' users name iova, the host address differs.
  EXPECT_EQ(t.check_remote(ro.rkey, pd, 0x7010, 16, kAccessRemoteRead, host), AccessCheck::Ok);
  EXPECT_EQ(host, 0x20010u);
  EXPECT_EQ(t.check_remote(ro.rkey, pd, 0x20010, 16, kAccessRemoteRead, host), AccessCheck::OutOfBounds);
  EXPECT_EQ(t.check_local(ro.lkey, pd, 0x7000, 16, kAccessLocalWrite, host), AccessCheck::NoPermission);
  EXPECT_EQ(t.check_local(ro.lkey, pd, 0x7000, 16, 0, host), AccessCheck::Ok) << "local read is always allowed";
  // Deregistration.
  EXPECT_TRUE(t.remove(mr.lkey));
  EXPECT_FALSE(t.remove(mr.lkey));
  EXPECT_EQ(t.by_rkey(mr.rkey), nullptr);
  EXPECT_EQ(t.check_remote(mr.rkey, pd, 0x10000, 1, kAccessRemoteWrite, host), AccessCheck::BadKey);
  EXPECT_NE(t.by_rkey(ro.rkey), nullptr);
}

TEST(HostRings, CqOwnerBitAndWrap) {
  std::vector<std::byte> ring(4 * sizeof(Cqe));
  CqRingReader r(ring, 4);
  EXPECT_FALSE(r.poll().has_value()) << "a zeroed ring holds no valid entry";
  for (uint64_t i = 0; i < 10; ++i) {
    Cqe c{};
    c.wr_id = i;
    c.owner = cqe_owner_for(i, 4);
    std::memcpy(ring.data() + (i % 4) * sizeof(Cqe), &c, sizeof(Cqe));
    auto got = r.poll();
    ASSERT_TRUE(got.has_value()) << i;
    EXPECT_EQ(got->wr_id, i);
    EXPECT_FALSE(r.poll().has_value()) << "a stale entry from the previous pass is not valid";
  }
  EXPECT_EQ(r.consumer(), 10u);
  std::vector<std::byte> sq(2 * kMinWqeStride);
  WqeRingWriter<SendWqe> w(sq, 2);
  SendWqe a{};
  for (uint64_t i = 0; i < 3; ++i) {
    a.wr_id = 100 + i;
    EXPECT_EQ(w.post(a), i + 1);
  }
  EXPECT_EQ(load_wqe<SendWqe>(std::span<const std::byte>(sq).subspan(0, kMinWqeStride)).wr_id, 102u) << "slot 0 reused on wrap";
  EXPECT_EQ(load_wqe<SendWqe>(std::span<const std::byte>(sq).subspan(kMinWqeStride)).wr_id, 101u);
}

TEST(HostRings, CqWrapsOverManyCompletions) {
  TestBed bed;
  QpOptions o;
  o.sq_entries = 16;
  o.rq_entries = 16;  // CQ of 32 entries; 100 completions go round it three times
  auto [x, y] = bed.pair(o);
  for (uint64_t round = 0; round < 10; ++round) {
    for (uint64_t i = 0; i < 10; ++i) x->post_send(x->write_wqe(round * 10 + i, 0, 32, *y, 0));
    bed.run();
  }
  ASSERT_EQ(x->cqes.size(), 100u);
  for (uint64_t i = 0; i < 100; ++i) EXPECT_EQ(x->cqes[i].cqe.wr_id, i);
}

}  // namespace
