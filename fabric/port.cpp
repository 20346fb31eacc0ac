#include "fabric/port.hpp"

#include <algorithm>
#include <utility>

namespace rnicsim::fabric {

Port::Port(sim::Simulator& sim, std::string name, PortParams params, sim::Actor actor)
    : sim_(sim),
      actor_(actor),
      name_(std::move(name)),
      params_(params),
      wire_times_(params.rate_bps),
      loss_rng_(sim.random(name_ + ".loss")),
      burst_rng_(sim.random(name_ + ".gilbert_elliott")),
      pause_expiry_([this] { on_pause_expiry(); }, "port.pause_expiry", actor),
      pfc_due_event_([this] { on_pfc_due(); }, "port.pfc_due", actor),
      credit_arrive_([this] { on_credit_arrival(); }, "port.credit", actor),
      tx_done_([this] { on_tx_done(); }, "port.tx_done", actor),
      arrive_([this] { on_arrival(); }, "port.arrive", actor),
      delayed_arrive_([this] { on_delayed_arrival(); }, "port.delayed_arrive", actor) {
  for (size_t p = 0; p < kPriorities; ++p)
    if (params_.dwrr_quantum[p] == 0) strict_mask_ |= 1u << p;
  credits_.fill(params_.vl_credit_bytes);
}

uint32_t Port::with_credit(uint32_t candidates) {
  if (params_.vl_credit_bytes == 0) return candidates;
  uint32_t ok = 0;
  for (uint32_t m = candidates; m != 0; m &= m - 1) {
    const auto p = static_cast<size_t>(__builtin_ctz(m));
    if (queues_[p].front().size() <= credits_[p]) {
      ok |= 1u << p;
      if ((credit_stalled_ >> p) & 1) {
        credit_stalled_ &= ~(1u << p);
        counters_.credit_stall_time[p] += sim_.now() - credit_stalled_since_[p];
      }
    } else if (!((credit_stalled_ >> p) & 1)) {
      credit_stalled_ |= 1u << p;
      credit_stalled_since_[p] = sim_.now();
      ++counters_.credit_stalls[p];
    }
  }
  return ok;
}

void Port::return_credit(uint8_t vl, uint64_t bytes) {
  if (params_.vl_credit_bytes == 0 || !connected()) return;
  const CrossingCredit c{.port = far_port_,
                         .arrival = sim_.now() + params_.delay,
                         .key = sim_.scheduler().next_key(),
                         .vl = static_cast<uint8_t>(vl & (kPriorities - 1)),
                         .bytes = bytes};
  if (peer_ != nullptr) {
    peer_->land_credit(c);
  } else {
    crossing_->credit(c);
  }
}

void Port::land_credit(const CrossingCredit& c) {
  credit_inbound_.push_back(c);
  if (!credit_arrive_.scheduled()) schedule_front(credit_arrive_, credit_inbound_.front());
}

void Port::on_credit_arrival() {
  while (!credit_inbound_.empty() && credit_inbound_.front().arrival <= sim_.now()) {
    const CrossingCredit c = credit_inbound_.front();
    credit_inbound_.pop();
    credits_[c.vl & (kPriorities - 1)] += c.bytes;
  }
  if (!credit_inbound_.empty()) schedule_front(credit_arrive_, credit_inbound_.front());
  if (!tx_busy_) start_next();
}

FaultModel& Port::faults() {
  if (!faults_)
    faults_ = std::make_unique<FaultModel>(sim_.random(name_ + ".faults"), params_.framing == LinkFraming::Infiniband
                                                                                ? packet::LinkType::Infiniband
                                                                                : packet::LinkType::Ethernet);
  return *faults_;
}

namespace {
bool later(const auto& a, const auto& b) { return a.arrival != b.arrival ? a.arrival > b.arrival : a.key > b.key; }
// The delayed frames' heap order: the earliest arrival on top.
constexpr auto kLaterFrame = [](const auto& a, const auto& b) { return later(a, b); };
}  // namespace

void Port::connect(Port& a, Port& b) {
  a.peer_ = &b;
  b.peer_ = &a;
}

void Port::connect_across(CrossingWriter& out, uint32_t far_port) {
  peer_ = nullptr;
  crossing_ = &out;
  far_port_ = far_port;
}

sim::Duration Port::wire_time(size_t frame_bytes) const {
  const size_t on_wire = std::max<size_t>(frame_bytes, params_.min_frame_bytes) + params_.wire_overhead_bytes;
  return wire_times_(on_wire);
}

bool Port::send(Frame&& frame) {
  const uint8_t prio = static_cast<uint8_t>(frame.meta().priority & (kPriorities - 1));
  if (!has_room(prio, frame.size())) {
    ++counters_.drops_queue_full;
    return false;
  }
  queued_bytes_[prio] += frame.size();
  queued_total_ += frame.size();
  queues_[prio].emplace_back() = std::move(frame);
  nonempty_ |= 1u << prio;
  if (!tx_busy_) start_next();
  return true;
}

size_t Port::withdraw(uint8_t priority, const std::function<bool(const Frame&)>& match) {
  const uint8_t prio = priority & (kPriorities - 1);
  auto& q = queues_[prio];
  size_t taken = 0;
  for (size_t n = q.size(); n > 0; --n) {  // one turn round the ring keeps the order
    Frame f = q.pop_front();
    if (!match(f)) {
      q.push_back(std::move(f));
      continue;
    }
    ++taken;
    queued_bytes_[prio] -= f.size();
    queued_total_ -= f.size();
  }
  if (q.empty()) nonempty_ &= ~(1u << prio);
  return taken;
}

void Port::send_control(Frame&& frame) {
  control_.emplace_back() = std::move(frame);
  if (!tx_busy_) start_next();
}

size_t Port::pick(uint32_t eligible) {
  // Strict priorities first, the highest first.
  if (const uint32_t strict = eligible & strict_mask_; strict != 0)
    return static_cast<size_t>(31 - __builtin_clz(strict));
  // DWRR among the weighted ones: each turn adds a quantum to the priority's
  // deficit; it sends while its head frame fits in the deficit.
  for (;;) {
    const size_t p = dwrr_next_;
    if ((eligible >> p) & 1) {
      if (!dwrr_turn_started_) {
        deficit_[p] += params_.dwrr_quantum[p];
        dwrr_turn_started_ = true;
      }
      const auto size = static_cast<int64_t>(queues_[p].front().size());
      if (size <= deficit_[p]) {
        deficit_[p] -= size;
        return p;
      }
    } else if (!((nonempty_ >> p) & 1)) {
      deficit_[p] = 0;  // an empty queue keeps no credit
    }
    dwrr_next_ = (p + 1) % kPriorities;
    dwrr_turn_started_ = false;
  }
}

void Port::start_next() {
  bool data = false;
  if (!control_.empty()) {
    on_wire_ = std::move(control_.front());
    control_.pop();
    ++counters_.control_tx;
  } else {
    const uint32_t eligible = with_credit(nonempty_ & ~paused_mask_);
    if (eligible == 0) return;
    const size_t p = pick(eligible);
    auto& q = queues_[p];
    on_wire_ = std::move(q.front());
    q.pop();
    if (q.empty()) nonempty_ &= ~(1u << p);
    queued_bytes_[p] -= on_wire_.size();
    queued_total_ -= on_wire_.size();
    if (params_.vl_credit_bytes != 0) credits_[p] -= on_wire_.size();
    data = true;
  }
  tx_busy_ = true;
  ++counters_.tx_frames;
  counters_.tx_bytes += on_wire_.size();
  if (data && egress_listener_ != nullptr) egress_listener_->leaving(on_wire_);
  // A tap sees the bytes on the wire, CRCs included (bytes() completes a deferred seal).
  for (FrameTap* t : taps_)
    if (!data || t->wants(on_wire_.meta().priority & (kPriorities - 1))) t->capture(sim_.now(), on_wire_.bytes(), on_wire_.size());
  sim_.scheduler().schedule_in(tx_done_, wire_time(on_wire_.size()));
  // Last: the listener may queue a control frame on this very port (a switch's
  // XON), which must find the port busy.
  if (data && egress_listener_ != nullptr) egress_listener_->dequeued(on_wire_);
}

void Port::on_tx_done() {
  tx_busy_ = false;
  Frame f = std::move(on_wire_);
  const bool lost = !link_up_ || wire_loses();
  FaultModel::Verdict fault;
  if (!lost && faults_) fault = faults_->apply(f);
  if ((lost || fault.drop) && params_.vl_credit_bytes != 0)
    credits_[f.meta().priority & (kPriorities - 1)] += f.size();  // the credit resync (FCCL) gives back what the wire lost
  if (!link_up_) {
    ++counters_.drops_link_down;
  } else if (lost) {
    ++counters_.drops_loss;
  } else if (fault.drop) {
    ++counters_.drops_fault;
  } else if (connected()) {
    const sim::Time arrival = sim_.now() + params_.delay + fault.extra_delay;
    const uint64_t key = sim_.scheduler().next_key();
    if (peer_ != nullptr) {
      peer_->land(arrival, key, std::move(f));
    } else {
      crossing_->frame(far_port_, arrival, key, std::move(f));
    }
  }
  start_next();
  if (tx_ready_) tx_ready_();
}

bool Port::wire_loses() {
  if (params_.loss_rate > 0 && loss_rng_.bernoulli(params_.loss_rate)) return true;
  const GilbertElliott& ge = params_.gilbert_elliott;
  if (!ge.enabled()) return false;
  burst_bad_ = burst_bad_ ? !burst_rng_.bernoulli(ge.p_bad_good) : burst_rng_.bernoulli(ge.p_good_bad);
  const double loss = burst_bad_ ? ge.loss_bad : ge.loss_good;
  return loss > 0 && burst_rng_.bernoulli(loss);
}

// Constant delay keeps most frames in arrival order: they queue in a ring; one
// a fault delayed (arriving before one queued already) waits in a heap.
void Port::land(sim::Time arrival, uint64_t key, Frame&& f) {
  struct {
    sim::Time arrival;
    uint64_t key;
  } const when{arrival, key};
  if (inbound_.empty() || !later(inbound_.back(), when)) {
    InFlight& slot = inbound_.emplace_back();
    slot.arrival = arrival;
    slot.key = key;
    slot.frame = std::move(f);
    if (!arrive_.scheduled()) schedule_front(arrive_, inbound_.front());
    return;
  }
  delayed_.push_back(InFlight{arrival, key, std::move(f)});
  std::push_heap(delayed_.begin(), delayed_.end(), kLaterFrame);
  sim_.scheduler().cancel(delayed_arrive_);
  schedule_front(delayed_arrive_, delayed_.front());
}

void Port::on_arrival() {
  Frame f = std::move(inbound_.front().frame);
  inbound_.pop();
  if (!inbound_.empty()) schedule_front(arrive_, inbound_.front());
  accept(std::move(f));
}

void Port::on_delayed_arrival() {
  std::pop_heap(delayed_.begin(), delayed_.end(), kLaterFrame);
  Frame f = std::move(delayed_.back().frame);
  delayed_.pop_back();
  if (!delayed_.empty()) schedule_front(delayed_arrive_, delayed_.front());
  accept(std::move(f));
}

void Port::accept(Frame&& frame) {
  ++counters_.rx_frames;
  counters_.rx_bytes += frame.size();
  // The MAC consumes PFC frames (only Ethernet carries them).
  const bool control = params_.framing == LinkFraming::Ethernet && packet::is_mac_control(frame.bytes_as_built());
  for (FrameTap* t : taps_)
    if (control || t->wants(frame.meta().priority & (kPriorities - 1))) t->capture(sim_.now(), frame.bytes(), frame.size());
  if (control) {
    if (const auto pfc = packet::parse_pfc(frame.bytes_as_built())) receive_pfc(*pfc);
    return;
  }
  if (receiver_ != nullptr) receiver_->receive(std::move(frame));
}

void Port::receive_pfc(const packet::PfcFields& pfc) {
  if (params_.pfc_response_delay <= sim::Duration::zero()) {
    apply_pfc(pfc);
    return;
  }
  pfc_due_.push_back(PfcDue{sim_.now() + params_.pfc_response_delay, pfc});
  if (!pfc_due_event_.scheduled()) sim_.scheduler().schedule(pfc_due_event_, pfc_due_.front().at);
}

void Port::on_pfc_due() {
  // A constant delay keeps them in arrival order.
  while (!pfc_due_.empty() && pfc_due_.front().at <= sim_.now()) apply_pfc(pfc_due_.pop_front().fields);
  if (!pfc_due_.empty()) sim_.scheduler().schedule(pfc_due_event_, pfc_due_.front().at);
}

void Port::apply_pfc(const packet::PfcFields& pfc) {
  const sim::Time now = sim_.now();
  const sim::Duration quantum = pause_quantum();
  for (size_t p = 0; p < kPriorities; ++p) {
    if (!((pfc.enable >> p) & 1)) continue;
    const uint16_t q = pfc.quanta[p];
    if (q == 0) {
      ++counters_.xon_rx[p];
      if (paused(static_cast<uint8_t>(p))) unpause(p);
      continue;
    }
    ++counters_.pause_rx[p];
    if (params_.pfc_watchdog > sim::Duration::zero()) {
      if (now < watchdog_until_[p]) {  // tripped: pauses are ignored until they stop
        ++counters_.pause_ignored[p];
        watchdog_until_[p] = now + params_.pfc_watchdog;
        continue;
      }
      if (paused(static_cast<uint8_t>(p)) && now - paused_since_[p] >= params_.pfc_watchdog) {
        ++counters_.watchdog_trips;
        ++counters_.pause_ignored[p];
        unpause(p);
        watchdog_until_[p] = now + params_.pfc_watchdog;
        sim_.log().log(sim::LogLevel::Warn, name_, [&](std::ostream& os) {
          os << "PFC watchdog: priority " << p << " paused for " << sim::to_string(params_.pfc_watchdog)
             << ", pauses ignored";
        });
        continue;
      }
    }
    if (!paused(static_cast<uint8_t>(p))) {
      paused_mask_ |= 1u << p;
      paused_ever_ |= 1u << p;
      paused_since_[p] = now;
    }
    paused_until_[p] = now + quantum * q;  // a refresh restarts the count
  }
  arm_pause_expiry();
  if (!tx_busy_) start_next();
}

void Port::unpause(size_t p) {
  paused_mask_ &= ~(1u << p);
  counters_.paused_time[p] += std::min(sim_.now(), paused_until_[p]) - paused_since_[p];
}

sim::Duration Port::paused_time(uint8_t priority) const {
  sim::Duration d = counters_.paused_time[priority];
  if (paused(priority)) d += std::min(sim_.now(), paused_until_[priority]) - paused_since_[priority];
  return d;
}

void Port::arm_pause_expiry() {
  sim::Time first = sim::Time::max();
  for (uint32_t m = paused_mask_; m != 0; m &= m - 1) first = std::min(first, paused_until_[__builtin_ctz(m)]);
  if (first == sim::Time::max()) {
    sim_.scheduler().cancel(pause_expiry_);
  } else {
    sim_.scheduler().reschedule(pause_expiry_, first);
  }
}

void Port::on_pause_expiry() {
  for (uint32_t m = paused_mask_; m != 0; m &= m - 1) {
    const auto p = static_cast<size_t>(__builtin_ctz(m));
    if (paused_until_[p] <= sim_.now()) unpause(p);
  }
  arm_pause_expiry();
  if (!tx_busy_) start_next();
  if (tx_ready_) tx_ready_();
}

}  // namespace rnicsim::fabric
