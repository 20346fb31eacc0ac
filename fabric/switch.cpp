#include "fabric/switch.hpp"

#include <stdexcept>

namespace rnicsim::fabric {

Switch::Switch(sim::Simulator& sim, FramePool& pool, std::string name, SwitchParams params, packet::LinkType link,
               sim::Actor actor)
    : sim_(sim),
      actor_(actor),
      pool_(pool),
      name_(std::move(name)),
      params_(std::move(params)),
      link_(link),
      ecmp_seed_(sim.random(name_ + ".ecmp").next_u64()),
      ecn_rng_(sim.random(name_ + ".ecn")),
      forwarding_done_([this] { on_forwarding_done(); }, "switch.forward", actor) {
  // PFC is Ethernet's: native IB has credits instead.
  if (link_ != packet::LinkType::Ethernet) params_.pfc.priorities = 0;
}

Switch::~Switch() = default;

size_t Switch::add_port(const PortParams& params) {
  if (buffer_) throw std::logic_error("switch " + name_ + ": add_port after finish");
  auto slot = std::make_unique<PortSlot>();
  slot->sw = this;
  slot->index = static_cast<uint16_t>(ports_.size());
  PortParams p = params;
  p.queue_bytes = UINT64_MAX / 2;  // the shared buffer admits; the port queues never refuse
  p.dwrr_quantum = params_.dwrr_quantum;
  slot->port = std::make_unique<Port>(sim_, name_ + ".port" + std::to_string(slot->index), p, actor_);
  slot->port->set_receiver(slot.get());
  slot->port->set_egress_listener(slot.get());
  ports_.push_back(std::move(slot));
  return ports_.size() - 1;
}

void Switch::finish() {
  std::vector<uint64_t> headroom;
  const uint64_t seed = ecmp_seed_;
  for (auto& slot : ports_) {
    headroom.push_back(params_.pfc.enabled() ? headroom_for(params_.pfc, slot->port->params(), params_.eth_mtu) : 0);
    if (params_.pfc.enabled()) {
      // Locally administered: 02:53 ("S"), 3 bytes of the switch, the port.
      const packet::MacAddr mac{0x02, 0x53, static_cast<uint8_t>(seed >> 16), static_cast<uint8_t>(seed >> 8),
                                static_cast<uint8_t>(seed), static_cast<uint8_t>(slot->index)};
      slot->pfc = std::make_unique<PfcGenerator>(sim_, pool_, *slot->port, mac, params_.pfc);
    }
  }
  buffer_ = std::make_unique<SharedBuffer>(params_.buffer, params_.pfc, std::move(headroom));
}

void Switch::add_route(const RouteKey& dest, std::vector<uint16_t> ports) {
  if (ports.empty()) return;
  Group g{static_cast<uint32_t>(members_.size()), static_cast<uint32_t>(ports.size())};
  members_.insert(members_.end(), ports.begin(), ports.end());
  const uint32_t d = destinations_->add(dest);
  if (d >= route_group_.size()) route_group_.resize(d + 1, kNoGroup);
  route_group_[d] = static_cast<uint32_t>(groups_.size());
  groups_.push_back(g);
}

int Switch::route_of(const RouteKey& dest, uint64_t flow_hash) const {
  return route_at(destinations_->find(dest), flow_hash);
}

int Switch::route_at(uint32_t dest, uint64_t flow_hash) const {
  if (dest >= route_group_.size() || route_group_[dest] == kNoGroup) return -1;
  const Group& g = groups_[route_group_[dest]];
  return members_[g.first + mix64(flow_hash ^ ecmp_seed_) % g.size];
}

const FrameMeta::Route* Switch::route_fields(Frame& f) {
  FrameMeta::Route& r = f.meta().route;
  if (r.numbering == destinations_.get()) return &r;
  const auto h = read_headers(f.bytes_as_built(), link_);
  if (!h) return nullptr;
  r = {destinations_.get(), destinations_->find(h->destination), h->flow_hash, h->ip_offset, h->markings};
  return &r;
}

void Switch::on_frame(uint16_t in, Frame&& f) {
  ++counters_.rx_frames;
  const uint8_t vl = f.meta().priority;  // as it came over the link (IB credits are per VL)
  const FrameMeta::Route* r = route_fields(f);
  const int out = r != nullptr ? route_at(r->destination, r->flow_hash) : -1;
  if (out < 0) {
    ++counters_.drops[static_cast<size_t>(DropCause::NoRoute)];
    ports_[in]->port->return_credit(vl, f.size());
    return;
  }
  const uint8_t prio = priority_of(link_, params_.priorities, r->markings);
  const SharedBuffer::Verdict v = buffer_->admit(in, static_cast<size_t>(out), prio, f.size());
  if (!v.admitted) {
    ++counters_.drops[static_cast<size_t>(v.cause)];
    ports_[in]->port->return_credit(vl, f.size());
    if (v.cause == DropCause::HeadroomOverflow && counters_.drops[static_cast<size_t>(v.cause)] == 1)
      sim_.log().log(sim::LogLevel::Error, name_, [&](std::ostream& os) {
        os << "PFC headroom overflow on port " << in << " priority " << int{prio} << " (headroom "
           << buffer_->headroom_of(in) << " bytes): a lossless priority dropped a frame";
      });
    return;
  }
  f.meta().priority = prio;
  f.meta().ingress_port = in;
  f.meta().ingress_vl = vl;
  if (params_.ecn.enabled && !params_.ecn.on_dequeue && ((params_.ecn.priorities >> prio) & 1) &&
      link_ == packet::LinkType::Ethernet &&
      ecn_mark(buffer_->egress_bytes(static_cast<size_t>(out), prio)) &&
      packet::mark_ecn_ce(f.bytes(), r->ip_offset))  // bytes(): the frame is changed, so sealed first
    ++counters_.ecn_marked;
  if (params_.pfc.lossless(prio)) update_pfc(in, prio);
  if (params_.forwarding_latency == sim::Duration::zero()) {
    enqueue(static_cast<uint16_t>(out), std::move(f));
    return;
  }
  Delayed& d = forwarding_.emplace_back();
  d.ready = sim_.now() + params_.forwarding_latency;
  d.out = static_cast<uint16_t>(out);
  d.frame = std::move(f);
  if (!forwarding_done_.scheduled()) sim_.scheduler().schedule(forwarding_done_, forwarding_.front().ready);
}

bool Switch::ecn_mark(uint64_t q) {
  const EcnParams& e = params_.ecn;
  if (q <= e.kmin_bytes) return false;
  if (q > e.kmax_bytes) return true;
  const double p = e.pmax * static_cast<double>(q - e.kmin_bytes) / static_cast<double>(e.kmax_bytes - e.kmin_bytes);
  return ecn_rng_.bernoulli(p);
}

void Switch::on_forwarding_done() {
  while (!forwarding_.empty() && forwarding_.front().ready <= sim_.now()) {
    Delayed& d = forwarding_.front();
    const uint16_t out = d.out;
    Frame f = std::move(d.frame);
    forwarding_.pop();
    enqueue(out, std::move(f));
  }
  if (!forwarding_.empty()) sim_.scheduler().schedule(forwarding_done_, forwarding_.front().ready);
}

void Switch::enqueue(uint16_t out, Frame&& f) {
  ++counters_.forwarded;
  ports_[out]->port->send(std::move(f));
}

void Switch::on_leaving(uint16_t out, Frame& f) {
  const EcnParams& e = params_.ecn;
  const uint8_t prio = f.meta().priority;
  if (!e.enabled || !e.on_dequeue || link_ != packet::LinkType::Ethernet || !((e.priorities >> prio) & 1)) return;
  if (ecn_mark(buffer_->egress_bytes(out, prio)) && packet::mark_congestion_experienced(f.bytes()))
    ++counters_.ecn_marked;
}

void Switch::on_dequeue(uint16_t out, const Frame& f) {
  const FrameMeta& m = f.meta();
  buffer_->release(m.ingress_port, out, m.priority, f.size());
  ports_[m.ingress_port]->port->return_credit(m.ingress_vl, f.size());
  if (xoff_.empty()) return;
  // The dynamic threshold moves with the free buffer: every paused pair may resume.
  // An XON may start another port sending, which comes back here: a pair leaves
  // the list before its XON goes.
  for (size_t i = 0; i < xoff_.size();) {
    const auto [in, prio] = xoff_[i];
    if (!buffer_->under_xon(in, prio)) {
      ++i;
      continue;
    }
    xoff_[i] = xoff_.back();
    xoff_.pop_back();
    ports_[in]->pfc->set_congested(prio, false);
  }
}

void Switch::update_pfc(size_t in, uint8_t prio) {
  PfcGenerator& g = *ports_[in]->pfc;
  if (!g.xoff(prio) && buffer_->over_xoff(in, prio)) {
    xoff_.emplace_back(static_cast<uint16_t>(in), prio);
    g.set_congested(prio, true);
  }
}

}  // namespace rnicsim::fabric
