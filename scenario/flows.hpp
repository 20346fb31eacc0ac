// A flows workload: flows (from, to, op, size, start), each one message posted by
// `from` at its start. Flows of two hosts at one priority share a QP pair (each
// has its own with qp_per_flow), which keeps tx_depth outstanding and queues the
// rest. Per flow: FCT = completion reaped - start; slowdown = FCT / ideal, ideal =
// size / the sender's link rate + base RTT. A read flow's data moves to `from`.
// Each host's part (its flows' starts, its sends and receives, its counts)
// runs as that host: nothing one host does touches another's state, so that
// the hosts may run in separate partitions.
#pragma once

#include <map>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scenario/workload.hpp"

namespace rnicsim::scenario {

class FlowsWorkload : public Workload {
public:
  FlowsWorkload(World& world, const Scenario& s, const WorkloadSpec& spec);
  ~FlowsWorkload() override;
  void start(PartDone on_part_done) override;
  size_t parts() const override { return parts_in_order_.size(); }
  std::vector<const Host*> part_hosts(size_t part) const override { return {&parts_in_order_[part]->side->host()}; }
  bool part_done(size_t part) const override { return parts_in_order_[part]->finished; }
  // Every flow's payload placed so far, finished or not.
  uint64_t delivered_bytes() const override;
  uint64_t expected_bytes() const override;
  void settle() override;
  // Each part: its counts, latencies and end, whether its receive region
  // matched (checked where it ran), its payload placed, and its flows' times.
  void write_parts(std::span<const size_t> parts, sim::ByteWriter& out) const override;
  void read_parts(sim::ByteReader& in) override;

private:
  // A QP pair; its sender's state and its receiver's, each touched by its host only.
  struct Channel {
    HostSide* from = nullptr;
    HostSide* to = nullptr;
    uint32_t from_qp = 0, to_qp = 0;
    uint32_t outstanding = 0;
    std::vector<size_t> waiting;  // flows waiting for room in the send queue
    size_t next_waiting = 0;
    alignas(64) uint64_t recv_total = 0;  // the receiver's: receives the flows need
    uint64_t recv_posted = 0;             // posted so far
  };
  // One host's part: its side, its flows in start order and what it waits for.
  // A part that meets an error completion fails, and tells the others,
  // which stop a control delay later (World::control_delay).
  struct Part {
    static constexpr size_t kUnplaced = SIZE_MAX;
    size_t index = kUnplaced;  // its place in parts_in_order_
    std::unique_ptr<HostSide> side;
    std::unique_ptr<sim::Event> start;  // the next of its flows is due
    std::vector<size_t> order;          // its flows by start time
    size_t next = 0;
    uint64_t sends = 0, receives = 0;   // completions it waits for
    uint64_t sent = 0, received = 0;    // and has reaped
    uint64_t reach = 0;                 // how far its receive region must match its send region
    uint64_t messages = 0, bytes = 0;
    sim::Histogram latency;
    bool finished = false, failed = false;
    sim::Time end;
    std::string failure;
    std::unique_ptr<sim::Event> stop;  // told by a failed part
    uint64_t stop_key = 0;             // the key it was told with
    // Read from the rank it ran on (read_parts): whether its region matched,
    // and the payload its host placed.
    struct Shipped {
      bool data_ok = true;
      uint64_t delivered = 0;
    };
    std::optional<Shipped> shipped;
  };
  // A flow's outcome, as its sender saw it.
  struct Outcome {
    sim::Time start, end;
    bool done = false;
    double fct_us = 0, slowdown = 0;
  };
  // Whether the part's receive region holds what its senders sent (true
  // where there is nothing to compare: size-only, or no flow into it).
  bool region_ok(const Part& p) const;
  struct ChannelPlan;
  static ChannelPlan plan_channels(const WorkloadSpec& spec);
  // The hosts' sides (their buffers holding `pattern`) and a QP pair per channel.
  void open_channels(const Scenario& s, const ChannelPlan& plan, uint64_t region,
                     const std::vector<std::byte>& pattern);
  // The host's part, made with its side (CQs for its channels, a buffer
  // holding `pattern`) when first asked for.
  Part& part_of(const Scenario& s, const ChannelPlan& plan, const std::string& host, uint64_t region,
                const std::vector<std::byte>& pattern);
  void plan_parts();
  void start_due(Part& part);
  void post_flow(size_t flow);
  void post_recv(uint32_t channel);
  void on_cqe(Part& part, const nic::Cqe& c, bool recv);
  void check_done(Part& part);
  void finish_part(Part& part);
  void fail_part(Part& part, const std::string& why);
  void tell_stop(Part& part, sim::Time when, uint64_t key);
  sim::Scheduler& clock(const Part& part) const { return part.side->host().nic->scheduler(); }

  std::map<std::string, Part> parts_;  // by host name
  std::vector<Part*> parts_in_order_;   // by their hosts' first flows: part i
  std::vector<Channel> channels_;
  std::vector<uint32_t> channel_of_;  // per flow
  uint32_t path_mtu_;
  // Where a failed host's word to stop reaches the others (World::listen).
  uint32_t listener_ = 0;
};

}  // namespace rnicsim::scenario
