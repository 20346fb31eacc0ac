#include "nic_model/qp_state.hpp"

#include <algorithm>
#include <cerrno>

namespace rnicsim::nic {
namespace {

struct Row {
  QpState from, to;
  uint32_t rc_req, rc_opt, uc_req, uc_opt, ud_req, ud_opt;
};

constexpr uint32_t kRtrRcReq = kQpState | kQpAv | kQpPathMtu | kQpDestQpn | kQpRqPsn | kQpMaxDestRdAtomic |
                               kQpMinRnrTimer;
constexpr uint32_t kRtsRcReq = kQpState | kQpSqPsn | kQpTimeout | kQpRetryCnt | kQpRnrRetry | kQpMaxQpRdAtomic;
constexpr uint32_t kInitOpt = kQpPkeyIndex | kQpPort | kQpAccessFlags;

// IBTA Vol. 1 table 91 (QP state transition attributes), RC, UC and UD columns.
constexpr Row kRules[] = {
    {QpState::Reset, QpState::Init, kQpState | kInitOpt, 0, kQpState | kInitOpt, 0,
     kQpState | kQpPkeyIndex | kQpPort | kQpQkey, 0},
    {QpState::Init, QpState::Init, kQpState, kInitOpt, kQpState, kInitOpt, kQpState, kQpPkeyIndex | kQpPort | kQpQkey},
    {QpState::Init, QpState::Rtr, kRtrRcReq, kQpAltPath | kQpAccessFlags | kQpPkeyIndex,
     kQpState | kQpAv | kQpPathMtu | kQpDestQpn | kQpRqPsn, kQpAltPath | kQpAccessFlags | kQpPkeyIndex, kQpState,
     kQpPkeyIndex | kQpQkey},
    {QpState::Rtr, QpState::Rts, kRtsRcReq, kQpAltPath | kQpAccessFlags | kQpMinRnrTimer | kQpPathMigState,
     kQpState | kQpSqPsn, kQpAltPath | kQpAccessFlags | kQpPathMigState, kQpState | kQpSqPsn, kQpQkey},
    {QpState::Rts, QpState::Rts, kQpState, kQpAltPath | kQpAccessFlags | kQpMinRnrTimer | kQpPathMigState,
     kQpState, kQpAltPath | kQpAccessFlags | kQpPathMigState, kQpState, kQpQkey},
    {QpState::Rts, QpState::Sqd, kQpState, kQpEnSqdAsyncNotify, kQpState, kQpEnSqdAsyncNotify, kQpState,
     kQpEnSqdAsyncNotify},
    {QpState::Sqd, QpState::Rts, kQpState, kQpAltPath | kQpAccessFlags | kQpMinRnrTimer | kQpPathMigState,
     kQpState, kQpAltPath | kQpAccessFlags | kQpPathMigState, kQpState, kQpQkey},
    {QpState::Sqe, QpState::Rts, kQpState, kQpAccessFlags | kQpMinRnrTimer, kQpState, kQpAccessFlags, kQpState,
     kQpQkey},
};

}  // namespace

std::string_view to_string(QpState s) {
  static constexpr std::string_view kNames[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
  return kNames[static_cast<size_t>(s)];
}

std::string_view to_string(QpType t) {
  const size_t column = column_of(t);
  return column < kQpTypeCount ? kQpTypes[column].name : "?";
}

TransitionRule transition_rule(QpType type, QpState from, QpState to) {
  // Any state may go to RESET or ERR with only the state attribute.
  if (to == QpState::Reset || to == QpState::Err) return {true, kQpState, kQpCurState};
  for (const Row& r : kRules) {
    if (r.from != from || r.to != to) continue;
    switch (type) {
      case QpType::Rc: return {true, r.rc_req, r.rc_opt | kQpCurState};
      case QpType::Uc: return {true, r.uc_req, r.uc_opt | kQpCurState};
      case QpType::Ud: return {true, r.ud_req, r.ud_opt | kQpCurState};
    }
  }
  return {};
}

int apply_modify(QpContext& qp, const QpAttr& a, uint32_t mask) {
  const QpState to = (mask & kQpState) ? a.state : qp.state;
  const TransitionRule rule = transition_rule(qp.type, qp.state, to);
  if (!rule.valid) return EINVAL;
  if ((mask & rule.required) != rule.required) return EINVAL;
  if ((mask & ~(rule.required | rule.optional)) != 0) return EINVAL;
  if (mask & kQpPathMtu) {
    if (a.path_mtu != 256 && a.path_mtu != 512 && a.path_mtu != 1024 && a.path_mtu != 2048 && a.path_mtu != 4096)
      return EINVAL;
    qp.path_mtu = a.path_mtu;
  }
  if ((mask & kQpRetryCnt) && a.retry_cnt > 7) return EINVAL;
  if ((mask & kQpRnrRetry) && a.rnr_retry > 7) return EINVAL;
  if ((mask & kQpTimeout) && a.timeout > 31) return EINVAL;
  if (mask & kQpDestQpn) qp.dest_qpn = a.dest_qpn;
  if (mask & kQpRqPsn) qp.epsn = qp.message_start = a.rq_psn;
  if (mask & kQpSqPsn) qp.next_psn = qp.assign_psn = qp.una = a.sq_psn;
  if (mask & kQpQkey) qp.qkey = a.qkey;
  if (mask & kQpAv) qp.remote = a.av;
  if (mask & kQpTimeout) {
    qp.timeout = a.timeout;
    qp.ack_timeout = a.ack_timeout > sim::Duration::zero() ? a.ack_timeout : local_ack_timeout(a.timeout);
  }
  if (mask & kQpRetryCnt) qp.retry_cnt = a.retry_cnt, qp.retries_left = a.retry_cnt;
  if (mask & kQpRnrRetry) qp.rnr_retry = a.rnr_retry, qp.rnr_retries_left = a.rnr_retry;
  if (mask & kQpMinRnrTimer) qp.min_rnr_timer = a.min_rnr_timer;
  if (mask & kQpAccessFlags) qp.access_flags = a.access_flags;
  if (mask & kQpMaxQpRdAtomic) qp.max_rd_atomic = std::max<uint8_t>(a.max_rd_atomic, 1);
  if (mask & kQpMaxDestRdAtomic) qp.max_dest_rd_atomic = std::max<uint8_t>(a.max_dest_rd_atomic, 1);
  qp.state = to;
  return 0;
}

}  // namespace rnicsim::nic
