// A port: per-priority egress queues, a scheduler (strict priority and DWRR), a
// serializer at line rate, and the wire to the peer port (propagation delay, loss
// hook). Two connected ports form a full-duplex link; everything between
// components goes through such a port, with a latency.
//
// The port is also the MAC: PFC frames (802.1Qbb) that arrive are consumed here and
// pause the named egress priorities for their quanta (512 bit times each) after
// the port's response delay; a frame already on the wire finishes. MAC control
// frames queued with send_control go ahead of all data and are never paused.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fabric/crossing.hpp"
#include "fabric/fault_model.hpp"
#include "fabric/frame.hpp"
#include "packet/pfc.hpp"
#include "sim/random.hpp"
#include "sim/ring_queue.hpp"
#include "sim/simulator.hpp"

namespace rnicsim::fabric {

inline constexpr int kPriorities = 8;
// The pause-response time mlx5's headroom allows for (301 bytes per Gb/s).
inline constexpr sim::Duration kPfcResponseDelay = sim::Duration::ns(2408);

// Anything that takes frames: a NIC, a switch, a test.
class FrameSink {
public:
  virtual ~FrameSink() = default;
  virtual void receive(Frame&& frame) = 0;
};

// Observes frames on a port (pcap writers).
class FrameTap {
public:
  virtual ~FrameTap() = default;
  // `bytes` are the frame's first bytes, `wire_length` its length on the wire
  // (larger for a size-only frame, see Frame).
  virtual void capture(sim::Time when, std::span<const std::byte> bytes, size_t wire_length) = 0;
  // Whether the tap takes data frames of this priority (MAC control frames it always takes).
  virtual bool wants(uint8_t /*priority*/) const { return true; }
};

// Told when a data frame leaves an egress queue for the wire: first `leaving`,
// which may still change the frame (a switch marking ECN on dequeue), before the
// taps see it; then `dequeued` (a switch frees its buffer then).
class EgressListener {
public:
  virtual ~EgressListener() = default;
  virtual void leaving(Frame& /*frame*/) {}
  virtual void dequeued(const Frame& frame) = 0;
};

// How a link layer frames packets on the wire: what the serializer charges per
// packet beyond the frame bytes (which are what a capture shows).
enum class LinkFraming : uint8_t {
  // Ethernet (RoCEv2): preamble + SFD 8, FCS 4, inter-frame gap 12 bytes; frames
  // shorter than 60 bytes (64 with the FCS) are padded.
  Ethernet,
  // InfiniBand: a start delimiter (SDP, one symbol) before the LRH and an end
  // delimiter (EGP, one symbol) after the VCRC; no preamble, no inter-packet gap,
  // no minimum size. The VCRC is part of the frame. On a 4x link the two
  // delimiters bring a packet (LRH..ICRC, a multiple of 4, plus the 2-byte VCRC)
  // to a whole number of 4-byte columns, so back-to-back packets need no idle
  // symbols between them. Not charged: skip ordered sets (clock compensation, a
  // few symbols per lane every few thousand) and link-level flow-control packets
  // (8 bytes with delimiters, per VL, sent now and then in both directions);
  // together well under 0.5% of the line.
  Infiniband,
};

// Gilbert-Elliott loss: a two-state Markov chain stepped once per frame (good ->
// bad with p_good_bad, bad -> good with p_bad_good), then the frame is lost with
// the loss of the state it is in. Mean burst length 1 / p_bad_good frames; long-run
// loss (p_good_bad x loss_bad + p_bad_good x loss_good) / (p_good_bad + p_bad_good).
struct GilbertElliott {
  double p_good_bad = 0.0, p_bad_good = 1.0;
  double loss_good = 0.0, loss_bad = 1.0;
  bool enabled() const { return p_good_bad > 0.0 || loss_good > 0.0; }
};

struct PortParams {
  // Data rate after line coding, in bits/s: what carries frame bytes. Ethernet:
  // the MAC rate (100 Gb/s for 100GBASE-*). InfiniBand: lanes x signalling rate x
  // code efficiency, e.g. EDR 4x = 4 x 25.78125 Gbaud x 64/66 = 100 Gb/s,
  // FDR 4x = 4 x 14.0625 x 64/66 = 54.55 Gb/s, QDR 4x = 4 x 10 x 8/10 = 32 Gb/s.
  uint64_t rate_bps = 100'000'000'000;
  sim::Duration delay = sim::Duration::ns(1000);  // propagation to the peer
  uint64_t queue_bytes = 4 * 1024 * 1024;         // egress buffer per priority
  uint32_t wire_overhead_bytes = kEthernetOverheadBytes;  // per packet, beyond the frame (see LinkFraming)
  uint32_t min_frame_bytes = kEthernetMinFrameBytes;      // frames are padded on the wire to this (without FCS)
  LinkFraming framing = LinkFraming::Ethernet;            // Ethernet carries MAC control (PFC) frames
  double loss_rate = 0.0;                         // Bernoulli loss on the wire towards the peer
  GilbertElliott gilbert_elliott;                 // bursty loss on the wire, besides loss_rate
  // Egress scheduling per priority: 0 = strict priority (served before every
  // weighted priority, the highest first); > 0 = a DWRR quantum in bytes, the
  // weighted priorities sharing what the strict ones leave in proportion.
  std::array<uint32_t, 8> dwrr_quantum{};
  // InfiniBand link-level flow control: the peer's receive buffer per VL (the
  // priority index), in bytes; a frame goes out only if the VL has that much
  // credit, and credit comes back (after the propagation delay, as flow-control
  // packets would bring it) when the peer frees the buffer. 0 = no credits.
  uint64_t vl_credit_bytes = 0;
  // PFC watchdog: a priority paused without a break for this long stops
  // honouring pauses until they stop coming for as long (0 = off).
  sim::Duration pfc_watchdog = sim::Duration::zero();
  // PFC received takes effect this long after its last bit (the MAC/PHY and the
  // upper layer of the paused side; a frame started meanwhile goes out).
  sim::Duration pfc_response_delay = kPfcResponseDelay;

  // Sets wire_overhead_bytes and min_frame_bytes for a link layer.
  void set_framing(LinkFraming f) {
    framing = f;
    wire_overhead_bytes = f == LinkFraming::Infiniband ? kIbDelimiterBytes : kEthernetOverheadBytes;
    min_frame_bytes = f == LinkFraming::Infiniband ? 0 : kEthernetMinFrameBytes;
  }
  static constexpr uint32_t kEthernetOverheadBytes = 24;  // preamble+SFD 8, FCS 4, IFG 12
  static constexpr uint32_t kEthernetMinFrameBytes = 60;
  static constexpr uint32_t kIbDelimiterBytes = 2;        // SDP + EGP
};

class Port {
public:
  // `actor`: the unit the port is part of (a host, a switch; see sim::Actor).
  Port(sim::Simulator& sim, std::string name, PortParams params, sim::Actor actor = {});
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  const std::string& name() const { return name_; }
  const PortParams& params() const { return params_; }
  sim::Actor actor() const { return actor_; }

  // Wires two ports together in both directions.
  static void connect(Port& a, Port& b);
  // Wires this port to one in another partition of the world, port `far_port`
  // there: what it sends, and the credit it returns, leave as records in `out`
  // (crossing.hpp); what comes back is handed to land() and land_credit().
  void connect_across(CrossingWriter& out, uint32_t far_port);
  bool connected() const { return peer_ != nullptr || crossing_ != nullptr; }
  // A frame the peer sent reaches this port at `arrival` (not before the
  // present), with the key the peer's scheduler gave it when it left: from the
  // peer itself, or from a crossing record.
  void land(sim::Time arrival, uint64_t key, Frame&& frame);
  // Credit the peer returned reaches this port (the sender of the frames).
  void land_credit(const CrossingCredit& c);
  // Frames arriving at this port are handed to `sink`.
  void set_receiver(FrameSink* sink) { receiver_ = sink; }
  // Called whenever egress space frees up, so a blocked sender can retry.
  void set_tx_ready(std::function<void()> cb) { tx_ready_ = std::move(cb); }
  // Taps see frames leaving (at serialization start) and arriving (at the last bit).
  void add_tap(FrameTap* tap) { taps_.push_back(tap); }
  // The port at the other end of the wire (nullptr before connect).
  Port* peer() const { return peer_; }
  // The faults of the wire towards the peer (made on first use; see fault_model.hpp).
  FaultModel& faults();
  const FaultModel* fault_model() const { return faults_.get(); }

  bool has_room(uint8_t priority, size_t bytes) const {
    return queued_bytes_[priority] + bytes <= params_.queue_bytes;
  }
  // Room in the port as a whole (a NIC's transmit buffer, whatever the priority).
  bool has_room_total(size_t bytes) const { return queued_total_ + bytes <= params_.queue_bytes; }
  uint64_t queued_total() const { return queued_total_; }
  // Told when data frames leave the egress queues.
  void set_egress_listener(EgressListener* l) { egress_listener_ = l; }
  // Queues a MAC control frame (a PFC pause) ahead of all data; never paused.
  void send_control(Frame&& frame);
  // Queues a frame for transmission; a frame without room is dropped and counted.
  // Returns whether it was queued.
  bool send(Frame&& frame);
  // Takes back the data frames of `priority` still queued (not on the wire)
  // that `match` selects, and returns how many: a NIC going back to a PSN
  // withdraws what it will send again.
  size_t withdraw(uint8_t priority, const std::function<bool(const Frame&)>& match);

  sim::Duration wire_time(size_t frame_bytes) const;
  // One pause quantum: 512 bit times at the port's rate (5.12 ns at 100 Gb/s).
  sim::Duration pause_quantum() const {
    return sim::serialization_time(packet::kPauseQuantumBits / 8, params_.rate_bps);
  }
  // A link going down loses every frame that finishes its serialization while
  // down (the sender does not know, as with a cut cable) until it comes up.
  void set_link_up(bool up) { link_up_ = up; }
  bool link_up() const { return link_up_; }
  bool idle() const { return !tx_busy_ && queued_total_ == 0 && control_.empty(); }
  bool paused(uint8_t priority) const { return (paused_mask_ >> priority) & 1; }
  // Bit p: priority p has stood paused at some time (its paused_time may be above zero).
  uint32_t ever_paused() const { return paused_ever_; }
  // The receiver of this port's frames freed `bytes` of VL `vl`'s buffer: the
  // credit reaches the peer (the sender) after the propagation delay.
  void return_credit(uint8_t vl, uint64_t bytes);
  uint64_t credits(uint8_t vl) const { return credits_[vl]; }
  uint64_t queued_bytes(uint8_t priority) const { return queued_bytes_[priority]; }

  struct Counters {
    uint64_t tx_frames = 0, tx_bytes = 0, rx_frames = 0, rx_bytes = 0;
    uint64_t drops_queue_full = 0, drops_loss = 0, drops_link_down = 0;
    uint64_t drops_fault = 0;  // dropped by a fault rule (see fault_model.hpp)
    uint64_t control_tx = 0;  // MAC control frames sent (counted also in tx_frames)
    // PFC received, per priority: pauses (quanta > 0), XONs (quanta 0), pauses
    // the watchdog ignored, and the time the priority stood paused.
    std::array<uint64_t, 8> pause_rx{}, xon_rx{}, pause_ignored{};
    std::array<sim::Duration, 8> paused_time{};
    uint64_t watchdog_trips = 0;
    // IB credits: times the head frame of a VL waited for credit, and for how long.
    std::array<uint64_t, 8> credit_stalls{};
    std::array<sim::Duration, 8> credit_stall_time{};
  };
  const Counters& counters() const { return counters_; }
  // paused_time including a pause still running now.
  sim::Duration paused_time(uint8_t priority) const;

private:
  // A frame on its way to this port, with the key the peer took for it when it
  // left: its arrival fires as that event would, one per frame.
  struct InFlight {
    sim::Time arrival;
    uint64_t key;
    Frame frame;
  };
  void start_next();
  // The priority to serve next among `eligible` (non-empty, not paused).
  size_t pick(uint32_t eligible);
  void on_tx_done();
  // The wire loses this frame (Bernoulli, then Gilbert-Elliott).
  bool wire_loses();
  // Schedules an arrival for a queue's front `item`, with the key it left with.
  void schedule_front(sim::Event& e, const auto& item) { sim_.scheduler().schedule_keyed(e, item.arrival, item.key); }
  void on_arrival();
  void on_delayed_arrival();
  void accept(Frame&& frame);
  void receive_pfc(const packet::PfcFields& pfc);
  void on_pfc_due();
  void apply_pfc(const packet::PfcFields& pfc);
  void unpause(size_t p);
  void on_pause_expiry();
  void arm_pause_expiry();
  // Priorities whose head frame has the credit to go (all when credits are off).
  uint32_t with_credit(uint32_t candidates);
  void on_credit_arrival();

  sim::Simulator& sim_;
  sim::Actor actor_;
  std::string name_;
  PortParams params_;
  sim::SerializationTimes wire_times_;  // at params_.rate_bps
  Port* peer_ = nullptr;
  CrossingWriter* crossing_ = nullptr;  // the peer is in another partition
  uint32_t far_port_ = 0;                // its number there
  FrameSink* receiver_ = nullptr;
  EgressListener* egress_listener_ = nullptr;
  std::function<void()> tx_ready_;
  std::vector<FrameTap*> taps_;
  sim::RandomStream loss_rng_;
  sim::RandomStream burst_rng_;  // Gilbert-Elliott, its own stream
  bool burst_bad_ = false;
  bool link_up_ = true;

  std::array<sim::RingQueue<Frame>, kPriorities> queues_;
  std::array<uint64_t, kPriorities> queued_bytes_{};
  uint64_t queued_total_ = 0;
  uint32_t paused_ever_ = 0;  // bit p: priority p has been paused (beside the total: what a sample reads)
  uint32_t nonempty_ = 0;  // bit p: queues_[p] holds frames
  uint32_t strict_mask_ = 0;  // bit p: priority p is strict (dwrr_quantum 0)
  std::array<int64_t, kPriorities> deficit_{};  // DWRR
  size_t dwrr_next_ = 0;
  bool dwrr_turn_started_ = false;
  sim::RingQueue<Frame> control_;
  // PFC received: paused priorities and until when.
  uint32_t paused_mask_ = 0;
  std::array<sim::Time, kPriorities> paused_until_{};
  std::array<sim::Time, kPriorities> paused_since_{};
  std::array<sim::Time, kPriorities> watchdog_until_{};  // pauses ignored before this
  sim::Event pause_expiry_;
  // PFC received and not yet in effect (the response delay), in arrival order.
  struct PfcDue {
    sim::Time at;
    packet::PfcFields fields;
  };
  sim::RingQueue<PfcDue> pfc_due_;
  sim::Event pfc_due_event_;
  // IB credits: what this port may still send per VL, stalls in progress, and
  // credit on its way back to the peer.
  std::array<uint64_t, kPriorities> credits_{};
  uint32_t credit_stalled_ = 0;
  std::array<sim::Time, kPriorities> credit_stalled_since_{};
  sim::RingQueue<CrossingCredit> credit_inbound_;  // on its way back to this port
  sim::Event credit_arrive_;
  bool tx_busy_ = false;
  Frame on_wire_;
  sim::Event tx_done_;

  // Frames on their way to this port, in arrival order; one that arrives before
  // the last queued (a fault rule delayed the others) waits in delayed_, a
  // heap by arrival time, then by key (the order of leaving).
  sim::RingQueue<InFlight> inbound_;
  sim::Event arrive_;
  std::unique_ptr<FaultModel> faults_;
  std::vector<InFlight> delayed_;
  sim::Event delayed_arrive_;
  Counters counters_;
};

}  // namespace rnicsim::fabric
