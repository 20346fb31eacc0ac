// The QP state machine of the IBTA spec (RESET, INIT, RTR, RTS, SQD, SQE, ERR) with
// the attributes each transition requires and allows, per transport type. Values of
// the attribute mask match ibv_qp_attr_mask.
#pragma once

#include <cstdint>

#include "nic_model/qp_context.hpp"

namespace rnicsim::nic {

enum QpAttrMask : uint32_t {
  kQpState = 1 << 0,
  kQpCurState = 1 << 1,
  kQpEnSqdAsyncNotify = 1 << 2,
  kQpAccessFlags = 1 << 3,
  kQpPkeyIndex = 1 << 4,
  kQpPort = 1 << 5,
  kQpQkey = 1 << 6,
  kQpAv = 1 << 7,
  kQpPathMtu = 1 << 8,
  kQpTimeout = 1 << 9,
  kQpRetryCnt = 1 << 10,
  kQpRnrRetry = 1 << 11,
  kQpRqPsn = 1 << 12,
  kQpMaxQpRdAtomic = 1 << 13,
  kQpAltPath = 1 << 14,
  kQpMinRnrTimer = 1 << 15,
  kQpSqPsn = 1 << 16,
  kQpMaxDestRdAtomic = 1 << 17,
  kQpPathMigState = 1 << 18,
  kQpCap = 1 << 19,
  kQpDestQpn = 1 << 20,
};

struct QpAttr {
  QpState state = QpState::Reset;
  uint32_t path_mtu = 1024;  // bytes: 256, 512, 1024, 2048 or 4096
  Qpn dest_qpn;
  Psn rq_psn;
  Psn sq_psn;
  Qkey qkey{};
  uint32_t access_flags = 0;
  uint8_t timeout = 14;
  sim::Duration ack_timeout{};  // a simulation's exact local ACK timeout (zero: from timeout)
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 12;
  uint8_t max_rd_atomic = 1;
  uint8_t max_dest_rd_atomic = 1;
  AddressVector av;
};

// The (required, optional) attribute masks of a transition, or nullopt-like
// {valid=false} if the transition does not exist.
struct TransitionRule {
  bool valid = false;
  uint32_t required = 0;
  uint32_t optional = 0;
};
TransitionRule transition_rule(QpType type, QpState from, QpState to);

// Validates and applies a modify. Returns 0 or an errno (EINVAL), as ibv_modify_qp does.
int apply_modify(QpContext& qp, const QpAttr& attr, uint32_t mask);

}  // namespace rnicsim::nic
