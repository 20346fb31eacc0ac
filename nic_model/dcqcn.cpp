#include "nic_model/dcqcn.hpp"

#include <algorithm>

namespace rnicsim::nic {
namespace {

constexpr uint32_t kAlphaOne = 1024;
constexpr int64_t kPsPerSecond = 1'000'000'000'000;

}  // namespace

Dcqcn::Dcqcn(const CongestionParams& p, uint64_t line_rate_bps)
    : CongestionControl(p),
      max_rate_(p.rpg_max_rate != 0 ? std::min(p.rpg_max_rate, line_rate_bps) : line_rate_bps) {}

void Dcqcn::advance(DcqcnState& s, sim::Time now) const {
  if (!s.limited) return;
  // Alpha: one update per elapsed period; only the first can have seen a CNP.
  const int64_t period = std::max<int64_t>(params_.dce_tcp_rtt.picoseconds(), 1);
  int64_t periods = (now - s.alpha_period_start).picoseconds() / period;
  if (periods > 0) {
    s.alpha_period_start = s.alpha_period_start + sim::Duration::ps(periods * period);
    const uint32_t g = std::min(params_.dce_tcp_g, kAlphaOne);
    s.alpha = (s.alpha * g + (s.cnp_in_period ? (kAlphaOne - g) * kAlphaOne : 0)) / kAlphaOne;
    s.cnp_in_period = false;
    for (--periods; periods > 0 && s.alpha > 0; --periods) s.alpha = s.alpha * g / kAlphaOne;
  }
  // Rate increase timer.
  const int64_t reset = std::max<int64_t>(params_.rpg_time_reset.picoseconds(), 1);
  while (s.limited && (now - s.timer_start).picoseconds() >= reset) {
    s.timer_start = s.timer_start + sim::Duration::ps(reset);
    ++s.timer_events;
    s.timer_raised = true;
    increase(s);
  }
}

void Dcqcn::increase(DcqcnState& s) const {
  const uint32_t f = params_.rpg_threshold;
  if (std::max(s.timer_events, s.byte_events) < f) {
    // Fast recovery: back towards the rate before the cut.
  } else if (std::min(s.timer_events, s.byte_events) > f) {
    s.target_rate = std::min(s.target_rate + params_.rpg_hai_rate, max_rate_);
  } else {
    s.target_rate = std::min(s.target_rate + params_.rpg_ai_rate, max_rate_);
  }
  s.current_rate = (s.target_rate + s.current_rate) / 2;
  // At the ceiling, within one additive step: the limiter has nothing left to limit.
  if (s.target_rate >= max_rate_ && s.current_rate + std::max<uint64_t>(params_.rpg_ai_rate, 1) >= max_rate_) {
    s.limited = false;
    s.current_rate = s.target_rate = max_rate_;
  }
}

// The NIC hands every hook the state new_qp_state() made: DCQCN's own.
sim::Time Dcqcn::send_time(CcQpState& state, sim::Time now) {
  auto& s = static_cast<DcqcnState&>(state);
  advance(s, now);
  return s.limited ? std::max(s.next_send, now) : now;
}

void Dcqcn::on_sent(CcQpState& state, const CcSent& p, sim::Time now) {
  auto& s = static_cast<DcqcnState&>(state);
  const uint32_t bytes = p.bytes;
  if (!s.limited) return;
  advance(s, now);
  if (!s.limited) return;
  // The next packet may start when this one would have left at the current rate.
  const uint64_t ps = static_cast<uint64_t>(bytes) * 8 * kPsPerSecond / std::max<uint64_t>(s.current_rate, 1);
  s.next_send = std::max(s.next_send, now) + sim::Duration::ps(static_cast<int64_t>(ps));
  s.byte_count += bytes;
  const uint64_t reset = std::max<uint64_t>(params_.rpg_byte_reset, 1);
  while (s.limited && s.byte_count >= reset) {
    s.byte_count -= reset;
    ++s.byte_events;
    increase(s);
  }
}

void Dcqcn::on_cnp(CcQpState& state, sim::Time now) {
  auto& s = static_cast<DcqcnState&>(state);
  advance(s, now);
  if (!s.limited) {
    // The first CNP (or the first since the rate recovered): the limiter starts.
    s.limited = true;
    s.current_rate = params_.rate_to_set_on_first_cnp != 0 ? std::min(params_.rate_to_set_on_first_cnp, max_rate_)
                                                           : max_rate_;
    s.target_rate = s.current_rate;
    s.alpha = std::min(params_.initial_alpha_value, kAlphaOne);
    s.cnp_in_period = false;
    s.alpha_period_start = now;
    s.next_send = now;
  } else if (now - s.last_cut < params_.rate_reduce_monitor_period) {
    s.cnp_in_period = true;  // counts for alpha; no second cut in the period
    return;
  }
  s.cnp_in_period = true;
  if (params_.clamp_tgt_rate != 0 || (params_.clamp_tgt_rate_after_time_inc != 0 && s.timer_raised))
    s.target_rate = s.current_rate;
  const uint64_t cut = static_cast<uint64_t>((static_cast<unsigned __int128>(s.current_rate) * s.alpha) >>
                                             std::min(params_.rpg_gd, 63u));
  const uint64_t floor = s.current_rate / 100 * std::min(params_.rpg_min_dec_fac, 100u);
  s.current_rate = std::max({s.current_rate - std::min(cut, s.current_rate), floor, params_.rpg_min_rate});
  s.current_rate = std::min(s.current_rate, max_rate_);
  ++s.rate_cuts;
  s.last_cut = now;
  s.timer_start = now;
  s.byte_count = 0;
  s.timer_events = s.byte_events = 0;
  s.timer_raised = false;
}

bool Dcqcn::on_marked_packet(CcQpState& state, sim::Time now) {
  auto& s = static_cast<DcqcnState&>(state);
  if (s.cnp_sent && now - s.last_cnp < params_.min_time_between_cnps) return false;
  s.cnp_sent = true;
  s.last_cnp = now;
  return true;
}

CcSummary Dcqcn::summary(const CcQpState& state) const {
  const auto& s = static_cast<const DcqcnState&>(state);
  return {s.limited, s.limited ? s.current_rate : 0, s.rate_cuts};
}

}  // namespace rnicsim::nic
