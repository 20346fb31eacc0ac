// DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
// SIGCOMM 2015), with the parameters ConnectX firmware exposes. Timers are
// evaluated when the QP is looked at (send_time, sent, a CNP) rather than by
// events of their own: the state at any look is what the timer-driven algorithm
// would have, and idle QPs cost nothing.
#pragma once

#include "nic_model/congestion_control.hpp"

namespace rnicsim::nic {

// What DCQCN keeps per QP. Rates in bits/s, alpha in 1/1024.
struct DcqcnState final : CcQpState {
  // Reaction point.
  bool limited = false;        // the rate limiter is on (a CNP arrived and the rate is below the ceiling)
  sim::Time next_send;         // the QP may start its next packet then
  uint64_t current_rate = 0;   // Rc
  uint64_t target_rate = 0;    // Rt
  uint32_t alpha = 0;
  bool cnp_in_period = false;  // a CNP arrived in the current alpha period
  sim::Time alpha_period_start;
  sim::Time last_cut;
  sim::Time timer_start;       // rate increase timer
  uint64_t byte_count = 0;     // bytes towards the next byte-counter increase
  uint32_t timer_events = 0;   // T: timer increase events since the last cut
  uint32_t byte_events = 0;    // BC: byte-counter increase events since the last cut
  bool timer_raised = false;   // the timer raised the rate since the last cut
  // Notification point.
  bool cnp_sent = false;
  sim::Time last_cnp;
  // Counters.
  uint64_t rate_cuts = 0;
};

class Dcqcn final : public CongestionControl {
public:
  Dcqcn(const CongestionParams& p, uint64_t line_rate_bps);

  std::unique_ptr<CcQpState> new_qp_state() const override { return std::make_unique<DcqcnState>(); }
  sim::Time send_time(CcQpState& s, sim::Time now) override;
  void on_sent(CcQpState& s, const CcSent& p, sim::Time now) override;
  // Reaction point, per QP. The first CNP turns the rate limiter on at line rate
  // (or rate_to_set_on_first_cnp). A CNP cuts the current rate Rc by Rc * alpha /
  // 2^rpg_gd (at most one cut per rate_reduce_monitor_period, never below
  // rpg_min_dec_fac % of Rc or rpg_min_rate); the target rate Rt keeps the rate
  // before the cut (on the first CNP, or when clamped).
  void on_cnp(CcQpState& s, sim::Time now) override;
  // Notification point: a CE-marked packet causes a CNP unless one went to the
  // same QP less than min_time_between_cnps ago.
  bool on_marked_packet(CcQpState& s, sim::Time now) override;
  CcSummary summary(const CcQpState& s) const override;

  uint64_t max_rate() const { return max_rate_; }

private:
  // The timers up to `now`: alpha moves every dce_tcp_rtt towards 1 if a CNP
  // arrived in the period and towards 0 otherwise; every rpg_time_reset is an
  // increase event (timer, T), as are every rpg_byte_reset bytes sent (byte
  // counter, BC, counted in on_sent).
  void advance(DcqcnState& s, sim::Time now) const;
  // One increase event. While max(T, BC) < F (rpg_threshold) it is fast
  // recovery; once both exceed F hyper increase (Rt grows by rpg_hai_rate),
  // otherwise additive increase (Rt grows by rpg_ai_rate); each ends with
  // Rc = (Rt + Rc) / 2. When Rt is at the ceiling and Rc within rpg_ai_rate of
  // it, the limiter turns off.
  void increase(DcqcnState& s) const;

  uint64_t max_rate_;
};

}  // namespace rnicsim::nic
