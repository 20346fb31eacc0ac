// A flows workload: a list of flows (from, to, op, size, start), each one message
// posted by `from` at its start time (relative to the workload's start). Flows
// between the same two hosts at the same priority (a flow's own, else the
// workload's) share one QP pair (or each has its own with
// qp_per_flow: true); a QP keeps at most tx_depth of them outstanding and queues
// the rest in the host. For each flow:
//   FCT      = when the sender reaped its completion - its start
//   ideal    = size / the sender's link rate + base RTT (base_rtt, or 2 x the link delay)
//   slowdown = FCT / ideal
// For read flows `from` is still the requester: the data moves from `to` to `from`.
// The receiving host keeps receive WQEs posted for the SEND and WRITE_WITH_IMM
// flows of a QP (up to 512 ahead, another after each receive completion), as a
// verbs program does, so a flow never meets an empty receive queue.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "scenario/workload.hpp"

namespace rnicsim::scenario {

class FlowsWorkload : public Workload {
public:
  FlowsWorkload(World& world, const Scenario& s, const WorkloadSpec& spec);
  ~FlowsWorkload() override;
  void start(std::function<void()> on_done) override;
  // Every flow's payload placed so far, finished or not.
  uint64_t delivered_bytes() const override;
  uint64_t expected_bytes() const override;

private:
  struct Channel {
    HostSide* from = nullptr;
    HostSide* to = nullptr;
    uint32_t from_qp = 0, to_qp = 0;
    uint32_t outstanding = 0;
    uint64_t recv_total = 0, recv_posted = 0;  // receives the flows need; posted so far
    std::vector<size_t> waiting;  // flows waiting for room in the send queue
    size_t next_waiting = 0;
  };
  void start_due();
  void post_flow(size_t flow);
  void post_recv(uint32_t channel);
  void on_cqe(HostSide& side, const nic::Cqe& c, bool recv);
  void check_done();

  std::map<std::string, std::unique_ptr<HostSide>> sides_;
  std::vector<Channel> channels_;
  std::vector<uint32_t> channel_of_;  // per flow
  std::vector<size_t> order_;         // flows by start time
  size_t next_ = 0;
  sim::Event start_event_;
  uint64_t done_ = 0, received_ = 0, expected_receives_ = 0;
  uint32_t path_mtu_;
};

}  // namespace rnicsim::scenario
