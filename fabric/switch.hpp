// A switch: N ports around a shared buffer. Frames are forwarded unchanged (store
// and forward, no cut-through; no latency of its own beyond `forwarding_latency`)
// and the switch builds no per-packet state: a frame carries its ingress port in
// its metadata. PFC frames never reach the switch logic: the receiving port's MAC
// consumes them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabric/classify.hpp"
#include "fabric/pfc.hpp"
#include "fabric/port.hpp"
#include "fabric/shared_buffer.hpp"
#include "sim/random.hpp"
#include "sim/ring_queue.hpp"
#include "sim/simulator.hpp"

namespace rnicsim::fabric {

// ECN marking at egress (RED on the instantaneous queue, as DCQCN's switches
// do): an ECN-capable frame joining a queue of q bytes (itself included) of a
// marked priority is marked CE with probability 0 below kmin, pmax x (q - kmin)
// / (kmax - kmin) up to kmax, 1 above.
struct EcnParams {
  bool enabled = false;
  uint64_t kmin_bytes = 100 * 1024;
  uint64_t kmax_bytes = 400 * 1024;
  double pmax = 0.2;
  uint8_t priorities = 0xFF;  // bit p: priority p is marked
  // Mark as a frame leaves the queue (the queue it leaves behind, itself
  // included), so a mark says how congested the port is now; false: as it
  // joins the queue, which tells the receiver a queueing delay later.
  bool on_dequeue = true;
};

struct SwitchParams {
  BufferParams buffer;
  PriorityMap priorities;
  PfcParams pfc;
  EcnParams ecn;
  std::array<uint32_t, 8> dwrr_quantum{};  // per priority; all 0: strict priority
  sim::Duration forwarding_latency = sim::Duration::zero();
  uint32_t eth_mtu = 4200;                 // for the default PFC headroom
};

struct SwitchCounters {
  uint64_t rx_frames = 0, forwarded = 0, ecn_marked = 0;
  std::array<uint64_t, static_cast<size_t>(DropCause::Count)> drops{};
  uint64_t drops_total() const {
    uint64_t t = 0;
    for (uint64_t d : drops) t += d;
    return t;
  }
};

// Every destination a fabric routes to, numbered densely as routes are added:
// a switch keeps its routes in an array indexed by that number, and a frame
// carries its number from the first switch on (FrameMeta::route). Switches
// that share one numbering (World gives them one) share what a frame carries.
class Destinations {
public:
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t add(const RouteKey& k) { return index_.try_emplace(k, static_cast<uint32_t>(index_.size())).first->second; }
  uint32_t find(const RouteKey& k) const {
    const auto it = index_.find(k);
    return it == index_.end() ? kNone : it->second;
  }

private:
  std::unordered_map<RouteKey, uint32_t, RouteKeyHash> index_;
};

//   port i --receive--> headers (priority from DSCP/PCP or SL; destination)
//     --> route (destination number -> ECMP group of egress ports; the
//         group member is the flow's 5-tuple hash, seeded per switch, modulo
//         the group size: deterministic, and one flow keeps one path)
//     --> SharedBuffer admission (lossy: egress dynamic threshold; lossless:
//         ingress accounting, XOFF/XON to the PfcGenerator of port i, headroom)
//     --> egress port queue (strict priority / DWRR) --> wire
//   a frame's buffer is freed when it leaves its egress queue for the wire.
class Switch {
public:
  // `actor`: the unit the switch is, with its ports (see sim::Actor).
  Switch(sim::Simulator& sim, FramePool& pool, std::string name, SwitchParams params, packet::LinkType link,
         sim::Actor actor = {});
  Switch(const Switch&) = delete;
  Switch& operator=(const Switch&) = delete;
  ~Switch();

  const std::string& name() const { return name_; }
  sim::Actor actor() const { return actor_; }
  // Adds a port (before finish()); returns its index. Its MAC is the switch's
  // base MAC + the index (the source of its PFC frames).
  size_t add_port(const PortParams& params);
  // Sizes the buffer (PFC headroom per port) once every port is there.
  void finish();
  Port& port(size_t i) { return *ports_[i]->port; }
  const Port& port(size_t i) const { return *ports_[i]->port; }
  size_t port_count() const { return ports_.size(); }
  // The numbering of destinations this switch shares with others (before add_route).
  void share_destinations(std::shared_ptr<Destinations> d) { destinations_ = std::move(d); }
  // Frames for `dest` leave by one of `ports` (an ECMP group when more than one).
  void add_route(const RouteKey& dest, std::vector<uint16_t> ports);
  // The egress port a flow with this hash takes to `dest` (tests; -1 if none).
  int route_of(const RouteKey& dest, uint64_t flow_hash) const;

  const SwitchCounters& counters() const { return counters_; }
  const SharedBuffer& buffer() const { return *buffer_; }
  // PFC sent by port i (nullptr when PFC is off).
  const PfcGenerator* pfc(size_t i) const { return ports_[i]->pfc.get(); }
  const SwitchParams& params() const { return params_; }

private:
  struct PortSlot : FrameSink, EgressListener {
    Switch* sw = nullptr;
    uint16_t index = 0;
    std::unique_ptr<Port> port;
    std::unique_ptr<PfcGenerator> pfc;
    void receive(Frame&& f) override { sw->on_frame(index, std::move(f)); }
    void leaving(Frame& f) override { sw->on_leaving(index, f); }
    void dequeued(const Frame& f) override { sw->on_dequeue(index, f); }
  };
  struct Group {
    uint32_t first = 0, size = 0;  // in members_
  };
  struct Delayed {
    sim::Time ready;
    uint16_t out = 0;
    Frame frame;
  };
  void on_frame(uint16_t in, Frame&& f);
  // RED: whether a frame joining a queue of `queue_bytes` is marked.
  bool ecn_mark(uint64_t queue_bytes);
  void on_dequeue(uint16_t out, const Frame& f);
  // ECN marking on dequeue: the frame at the head of egress queue `out`.
  void on_leaving(uint16_t out, Frame& f);
  void enqueue(uint16_t out, Frame&& f);
  void on_forwarding_done();
  void update_pfc(size_t in, uint8_t prio);

  sim::Simulator& sim_;
  sim::Actor actor_;
  FramePool& pool_;
  std::string name_;
  SwitchParams params_;
  packet::LinkType link_;
  uint64_t ecmp_seed_;
  sim::RandomStream ecn_rng_;
  std::vector<std::unique_ptr<PortSlot>> ports_;
  std::unique_ptr<SharedBuffer> buffer_;
  std::shared_ptr<Destinations> destinations_ = std::make_shared<Destinations>();
  std::vector<uint32_t> route_group_;  // [destination number] -> groups_, kNoGroup if none
  static constexpr uint32_t kNoGroup = UINT32_MAX;
  // The egress port for destination number `dest` (Destinations::kNone: none); -1 if none.
  int route_at(uint32_t dest, uint64_t flow_hash) const;
  // What the frame's headers say, read once per fabric (FrameMeta::route); nullptr if unreadable.
  const FrameMeta::Route* route_fields(Frame& f);
  std::vector<Group> groups_;
  std::vector<uint16_t> members_;
  // Ingress (port, lossless priority) pairs now in XOFF: checked for XON as
  // the buffer drains (the dynamic threshold moves with every frame).
  std::vector<std::pair<uint16_t, uint8_t>> xoff_;
  sim::RingQueue<Delayed> forwarding_;
  sim::Event forwarding_done_;
  SwitchCounters counters_;
};

}  // namespace rnicsim::fabric
