// DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
// SIGCOMM 2015), with the parameters ConnectX firmware exposes.
//
// Reaction point, per QP. The first CNP turns the rate limiter on at line rate (or
// rate_to_set_on_first_cnp). A CNP cuts the current rate Rc by Rc * alpha / 2^rpg_gd
// (at most one cut per rate_reduce_monitor_period, never below rpg_min_dec_fac % of
// Rc or rpg_min_rate); the target rate Rt keeps the rate before the cut (on the
// first CNP, or when clamped). Alpha moves every dce_tcp_rtt towards 1 if a CNP
// arrived in the period and towards 0 otherwise. Without CNPs the rate recovers on
// increase events: every rpg_time_reset (timer, T) and every rpg_byte_reset bytes
// sent (byte counter, BC). While max(T, BC) < F (rpg_threshold) an event is fast
// recovery, Rc = (Rt + Rc) / 2; once both exceed F it is hyper increase (Rt grows by
// rpg_hai_rate), otherwise additive increase (Rt grows by rpg_ai_rate), each
// followed by Rc = (Rt + Rc) / 2. When Rt is at the ceiling and Rc within
// rpg_ai_rate of it, the limiter turns off.
//
// Timers are evaluated when the QP is looked at (send_time, sent, a CNP) rather
// than by events of their own: the state at any look is what the timer-driven
// algorithm would have, and idle QPs cost nothing.
//
// Notification point: a CE-marked packet causes a CNP unless one went to the same
// QP less than min_time_between_cnps ago.
#pragma once

#include "nic_model/congestion_control.hpp"

namespace rnicsim::nic {

class Dcqcn final : public CongestionControl {
public:
  Dcqcn(const CongestionParams& p, uint64_t line_rate_bps);

  sim::Time send_time(CcState& s, sim::Time now) override;
  void sent(CcState& s, uint32_t bytes, sim::Time now) override;
  void cnp_received(CcState& s, sim::Time now) override;
  bool marked_packet(CcState& s, sim::Time now) override;

  uint64_t max_rate() const { return max_rate_; }

private:
  void advance(CcState& s, sim::Time now) const;
  void increase(CcState& s) const;

  uint64_t max_rate_;
};

}  // namespace rnicsim::nic
