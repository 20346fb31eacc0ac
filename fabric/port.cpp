#include "fabric/port.hpp"

#include <algorithm>

namespace rnicsim::fabric {

Port::Port(sim::Simulator& sim, std::string name, PortParams params)
    : sim_(sim),
      name_(std::move(name)),
      params_(params),
      loss_rng_(sim.random(name_ + ".loss")),
      tx_done_([this] { on_tx_done(); }, "port.tx_done"),
      arrive_([this] { on_arrival(); }, "port.arrive"),
      delayed_arrive_([this] { on_delayed_arrival(); }, "port.delayed_arrive") {}

FaultModel& Port::faults() {
  if (!faults_)
    faults_ = std::make_unique<FaultModel>(sim_.random(name_ + ".faults"), params_.framing == LinkFraming::Infiniband
                                                                                ? packet::LinkType::Infiniband
                                                                                : packet::LinkType::Ethernet);
  return *faults_;
}

namespace {
bool later(const auto& a, const auto& b) { return a.arrival != b.arrival ? a.arrival > b.arrival : a.seq > b.seq; }
}  // namespace

void Port::connect(Port& a, Port& b) {
  a.peer_ = &b;
  b.peer_ = &a;
}

sim::Duration Port::wire_time(size_t frame_bytes) const {
  const size_t on_wire = std::max<size_t>(frame_bytes, params_.min_frame_bytes) + params_.wire_overhead_bytes;
  return sim::serialization_time(on_wire, params_.rate_bps);
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

void Port::start_next() {
  if (nonempty_ == 0) return;
  // Strict priority: the highest non-empty priority goes first.
  const size_t p = static_cast<size_t>(31 - __builtin_clz(nonempty_));
  auto& q = queues_[p];
  on_wire_ = std::move(q.front());
  q.pop();
  if (q.empty()) nonempty_ &= ~(1u << p);
  queued_bytes_[p] -= on_wire_.size();
  queued_total_ -= on_wire_.size();
  tx_busy_ = true;
  ++counters_.tx_frames;
  counters_.tx_bytes += on_wire_.size();
  // A tap sees the bytes on the wire, CRCs included (bytes() completes a deferred seal).
  for (FrameTap* t : taps_) t->capture(sim_.now(), on_wire_.bytes());
  sim_.scheduler().schedule_in(tx_done_, wire_time(on_wire_.size()));
}

void Port::on_tx_done() {
  tx_busy_ = false;
  Frame f = std::move(on_wire_);
  const bool lost = params_.loss_rate > 0 && loss_rng_.bernoulli(params_.loss_rate);
  FaultModel::Verdict fault;
  if (!lost && faults_) fault = faults_->apply(f, sim_.now());
  if (lost) {
    ++counters_.drops_loss;
  } else if (fault.drop) {
    ++counters_.drops_fault;
  } else if (peer_ != nullptr && fault.extra_delay > sim::Duration::zero()) {
    delayed_.push_back(Delayed{sim_.now() + params_.delay + fault.extra_delay, delayed_seq_++, std::move(f)});
    std::push_heap(delayed_.begin(), delayed_.end(), [](const Delayed& a, const Delayed& b) { return later(a, b); });
    sim_.scheduler().reschedule(delayed_arrive_, delayed_.front().arrival);
  } else if (peer_ != nullptr) {
    InFlight& slot = pipe_.emplace_back();
    slot.arrival = sim_.now() + params_.delay;
    slot.frame = std::move(f);
    if (!arrive_.scheduled()) sim_.scheduler().schedule(arrive_, pipe_.front().arrival);
  }
  start_next();
  if (tx_ready_) tx_ready_();
}

void Port::on_arrival() {
  // Constant delay keeps the pipe in arrival order.
  Frame f = std::move(pipe_.front().frame);
  pipe_.pop();
  if (!pipe_.empty()) sim_.scheduler().schedule(arrive_, pipe_.front().arrival);
  peer_->accept(std::move(f));
}

void Port::on_delayed_arrival() {
  std::pop_heap(delayed_.begin(), delayed_.end(), [](const Delayed& a, const Delayed& b) { return later(a, b); });
  Frame f = std::move(delayed_.back().frame);
  delayed_.pop_back();
  if (!delayed_.empty()) sim_.scheduler().schedule(delayed_arrive_, delayed_.front().arrival);
  peer_->accept(std::move(f));
}

void Port::accept(Frame&& frame) {
  ++counters_.rx_frames;
  counters_.rx_bytes += frame.size();
  for (FrameTap* t : taps_) t->capture(sim_.now(), frame.bytes());
  if (receiver_ != nullptr) receiver_->receive(std::move(frame));
}

}  // namespace rnicsim::fabric
