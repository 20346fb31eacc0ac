#include "fabric/port.hpp"

#include <algorithm>

namespace rnicsim::fabric {

Port::Port(sim::Simulator& sim, std::string name, PortParams params)
    : sim_(sim),
      name_(std::move(name)),
      params_(params),
      loss_rng_(sim.random(name_ + ".loss")),
      tx_done_([this] { on_tx_done(); }, "port.tx_done"),
      arrive_([this] { on_arrival(); }, "port.arrive") {}

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
  queues_[prio].push_back(std::move(frame));
  if (!tx_busy_) start_next();
  return true;
}

void Port::start_next() {
  // Strict priority: the highest non-empty priority goes first.
  for (int p = kPriorities - 1; p >= 0; --p) {
    auto& q = queues_[static_cast<size_t>(p)];
    if (q.empty()) continue;
    on_wire_ = q.pop_front();
    queued_bytes_[static_cast<size_t>(p)] -= on_wire_.size();
    queued_total_ -= on_wire_.size();
    tx_busy_ = true;
    ++counters_.tx_frames;
    counters_.tx_bytes += on_wire_.size();
    for (FrameTap* t : taps_) t->capture(sim_.now(), on_wire_.bytes());
    sim_.scheduler().schedule_in(tx_done_, wire_time(on_wire_.size()));
    return;
  }
}

void Port::on_tx_done() {
  tx_busy_ = false;
  Frame f = std::move(on_wire_);
  if (params_.loss_rate > 0 && loss_rng_.bernoulli(params_.loss_rate)) {
    ++counters_.drops_loss;
  } else if (peer_ != nullptr) {
    pipe_.push_back(InFlight{sim_.now() + params_.delay, std::move(f)});
    if (!arrive_.scheduled()) sim_.scheduler().schedule(arrive_, pipe_.front().arrival);
  }
  start_next();
  if (tx_ready_) tx_ready_();
}

void Port::on_arrival() {
  // Constant delay keeps the pipe in arrival order.
  InFlight head = pipe_.pop_front();
  if (!pipe_.empty()) sim_.scheduler().schedule(arrive_, pipe_.front().arrival);
  peer_->accept(std::move(head.frame));
}

void Port::accept(Frame&& frame) {
  ++counters_.rx_frames;
  counters_.rx_bytes += frame.size();
  for (FrameTap* t : taps_) t->capture(sim_.now(), frame.bytes());
  if (receiver_ != nullptr) receiver_->receive(std::move(frame));
}

}  // namespace rnicsim::fabric
