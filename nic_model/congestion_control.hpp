// Congestion control: a pluggable block of the NIC. The reaction point (RP) in the
// sending NIC limits each QP's rate; the notification point (NP) in the receiving
// NIC turns ECN Congestion Experienced marks into congestion notification packets
// (CNPs, RoCEv2 annex A17.9.3) back to the sender. The requester asks the block
// when a QP may send its next packet and tells it what was sent; the receive
// pipeline hands it marked packets (NP) and CNPs (RP). With no algorithm chosen the
// NIC holds no block and pays nothing per packet.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "sim/time.hpp"

namespace rnicsim::nic {

enum class CcAlgorithm : uint32_t { None = 0, Dcqcn = 1 };
std::string_view to_string(CcAlgorithm a);

// Parameters of the congestion control block. The DCQCN parameters carry the names
// and defaults ConnectX firmware gives them (its "DCQCN parameters" table), so
// that a configuration can be copied across; units are this project's (bits/s,
// bytes, times) where the firmware counts in Mb/s or microseconds.
struct CongestionParams {
  CcAlgorithm algorithm = CcAlgorithm::None;
  // --- reaction point ---
  // Alpha (the congestion estimate, in 1/1024) is updated every dce_tcp_rtt:
  // alpha = alpha * g/1024 + (CNP seen in the period ? (1024 - g) : 0).
  uint32_t dce_tcp_g = 1019;
  sim::Duration dce_tcp_rtt = sim::Duration::us(1);
  uint32_t initial_alpha_value = 1023;    // alpha when the first CNP arrives (1/1024)
  uint64_t rate_to_set_on_first_cnp = 0;  // bits/s the QP drops to on its first CNP; 0: line rate, then cut
  uint32_t rpg_min_dec_fac = 50;          // %: one cut keeps at least this share of the rate
  uint64_t rpg_min_rate = 1'000'000;      // bits/s: the rate never falls below this
  uint32_t rpg_gd = 11;                   // a cut removes rate * alpha / 2^rpg_gd (11: alpha/2)
  sim::Duration rate_reduce_monitor_period = sim::Duration::us(4);  // at most one cut per period
  uint32_t clamp_tgt_rate = 0;                 // 1: every cut sets the target rate to the current rate
  uint32_t clamp_tgt_rate_after_time_inc = 1;  // 1: ... if the timer raised the rate since the last cut
  sim::Duration rpg_time_reset = sim::Duration::us(300);  // rate increase timer
  uint64_t rpg_byte_reset = 32767;        // bytes sent per byte-counter increase event
  uint32_t rpg_threshold = 1;             // F: increase events spent in fast recovery
  uint64_t rpg_ai_rate = 5'000'000;       // bits/s added to the target rate (additive increase)
  uint64_t rpg_hai_rate = 50'000'000;     // bits/s added to the target rate (hyper increase)
  uint64_t rpg_max_rate = 0;              // bits/s ceiling; 0: the port's line rate
  // --- notification point ---
  sim::Duration min_time_between_cnps = sim::Duration::us(4);  // per QP
  uint32_t cnp_dscp = 48;                 // DSCP of CNPs
  uint32_t cnp_802p_prio = 6;             // egress priority of CNPs
};

// What the block keeps per QP (in the QP context). Rates in bits/s, alpha in 1/1024.
struct CcState {
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

class CongestionControl {
public:
  virtual ~CongestionControl() = default;
  // --- reaction point ---
  // Brings the QP's state up to `now` (timers that expired since the last look)
  // and returns when it may start its next packet (`now` or later).
  virtual sim::Time send_time(CcState& s, sim::Time now) = 0;
  // The QP started a packet of `bytes` at `now`.
  virtual void sent(CcState& s, uint32_t bytes, sim::Time now) = 0;
  // A CNP for the QP arrived.
  virtual void cnp_received(CcState& s, sim::Time now) = 0;
  // --- notification point ---
  // A packet marked Congestion Experienced arrived for the QP: whether to send a CNP.
  virtual bool marked_packet(CcState& s, sim::Time now) = 0;

  const CongestionParams& params() const { return params_; }

protected:
  explicit CongestionControl(const CongestionParams& p) : params_(p) {}
  CongestionParams params_;
};

// The block for `p.algorithm` (nullptr for None) at a port of `line_rate_bps`.
std::unique_ptr<CongestionControl> make_congestion_control(const CongestionParams& p, uint64_t line_rate_bps);

}  // namespace rnicsim::nic
