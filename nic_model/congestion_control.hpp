// Congestion control: a pluggable block of the NIC, algorithm-neutral. The
// reaction point (RP) in the sending NIC paces each QP; the notification point
// (NP) in the receiving NIC turns ECN Congestion Experienced marks into CNPs
// (RoCEv2 annex A17.9.3). The NIC calls the hooks below (a packet sent, an
// ACK or NAK with the RTT of its probe, a CNP, a marked packet, a timer) on
// per-QP state the algorithm owns. An algorithm is one file and one row of the
// table of algorithms (kAlgorithms in congestion_algorithms.cpp).
// With no algorithm the NIC holds no block and pays nothing per packet.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "packet/psn.hpp"
#include "sim/scheduler.hpp"
#include "sim/time.hpp"

namespace rnicsim::nic {

class CongestionControl;
struct CongestionParams;

// An algorithm: its row of cc_algorithms() (row 0: none).
struct CcAlgorithm {
  uint8_t row = 0;
  bool operator==(const CcAlgorithm&) const = default;
};
// The one table of algorithms: the name scenarios and outputs use, and how to
// make the block (nullptr: none) for a port of `line_rate_bps`.
struct CcAlgorithmEntry {
  std::string_view name;
  std::unique_ptr<CongestionControl> (*make)(const CongestionParams& p, uint64_t line_rate_bps);
};
using CcAlgorithmTable = std::span<const CcAlgorithmEntry>;
CcAlgorithmTable cc_algorithms();
// The built-in table with one row more (an algorithm of a test or of a build of one's own).
std::vector<CcAlgorithmEntry> cc_algorithms_with(const CcAlgorithmEntry& extra);
std::optional<CcAlgorithm> cc_algorithm_named(std::string_view name, CcAlgorithmTable table = cc_algorithms());
std::string_view to_string(CcAlgorithm a, CcAlgorithmTable table = cc_algorithms());
// Every name, `separator` between them ("none | dcqcn").
std::string cc_algorithm_names(std::string_view separator, CcAlgorithmTable table = cc_algorithms());
// A row's `make`: an algorithm constructed from the parameters and the line rate.
template <class Algorithm>
std::unique_ptr<CongestionControl> make_algorithm(const CongestionParams& p, uint64_t line_rate_bps) {
  return std::make_unique<Algorithm>(p, line_rate_bps);
}

// Parameters of the congestion control block. The DCQCN parameters carry the names
// and defaults ConnectX firmware gives them (its "DCQCN parameters" table), so
// that a configuration can be copied across; units are this project's (bits/s,
// bytes, times) where the firmware counts in Mb/s or microseconds.
struct CongestionParams {
  CcAlgorithm algorithm;  // none
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

// Per-QP state of an algorithm, of a type of its own: the NIC keeps the one
// new_qp_state() made in the QP context and hands it back to every hook.
struct CcQpState {
  virtual ~CcQpState() = default;
  // The QP's timer (the NIC makes it with the state): see arm_timer().
  std::unique_ptr<sim::Event> timer;
};

// A packet the QP started (first transmission or not).
struct CcSent {
  packet::Psn psn;
  uint32_t bytes = 0;
  bool retransmission = false;
};
// An ACK or NAK. rtt: from the first transmission of the QP's RTT probe to
// this acknowledgement of it (one timed packet at a time, never a resent one,
// as TCP samples RTT); zero when it does not acknowledge the probe.
struct CcAck {
  packet::Psn psn;
  bool nak = false;  // a NAK (sequence error or RNR)
  sim::Duration rtt;
};
// What any algorithm says of a QP, for the outputs. Rates in bits/s.
struct CcSummary {
  bool limited = false;  // the QP is held below line rate
  uint64_t rate = 0;     // while limited
  uint64_t rate_cuts = 0;
};

class CongestionControl {
public:
  virtual ~CongestionControl() = default;
  virtual std::unique_ptr<CcQpState> new_qp_state() const = 0;
  // --- reaction point ---
  // When the QP may start its next packet (`now` or later); it may bring the
  // state's timers up to `now` first.
  virtual sim::Time send_time(CcQpState& s, sim::Time now) = 0;
  virtual void on_sent(CcQpState& s, const CcSent& p, sim::Time now) = 0;
  virtual void on_ack(CcQpState& /*s*/, const CcAck& /*a*/, sim::Time /*now*/) {}
  virtual void on_cnp(CcQpState& /*s*/, sim::Time /*now*/) {}
  // --- notification point ---
  // A packet marked Congestion Experienced arrived for the QP: whether to send a CNP.
  virtual bool on_marked_packet(CcQpState& s, sim::Time now) = 0;
  // --- a timer ---
  // The QP's timer, armed by arm_timer(), fired; the QP is asked for packets after.
  virtual void on_timer(CcQpState& /*s*/, sim::Time /*now*/) {}
  virtual CcSummary summary(const CcQpState& s) const = 0;

  const CongestionParams& params() const { return params_; }
  // The NIC's scheduler, which runs the QPs' timers (given when the block joins a NIC).
  void attach(sim::Scheduler& scheduler) { scheduler_ = &scheduler; }

protected:
  explicit CongestionControl(const CongestionParams& p) : params_(p) {}
  // on_timer(s) at `when`, in place of an earlier arming not yet fired.
  void arm_timer(CcQpState& s, sim::Time when) {
    if (scheduler_ != nullptr && s.timer) scheduler_->reschedule(*s.timer, when);
  }
  CongestionParams params_;

private:
  sim::Scheduler* scheduler_ = nullptr;
};

// The block for `p.algorithm`, a row of `table` (nullptr for none), at a port of `line_rate_bps`.
std::unique_ptr<CongestionControl> make_congestion_control(const CongestionParams& p, uint64_t line_rate_bps,
                                                           CcAlgorithmTable table = cc_algorithms());

}  // namespace rnicsim::nic
