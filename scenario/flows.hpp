// A flows workload: flows (from, to, op, size, start), each one message posted by
// `from` at its start. Flows of two hosts at one priority share a QP pair (each
// has its own with qp_per_flow), which keeps tx_depth outstanding and queues the
// rest. Per flow: FCT = completion reaped - start; slowdown = FCT / ideal, ideal =
// size / the sender's link rate + base RTT. A read flow's data moves to `from`.
#pragma once

#include <map>
#include <cstddef>
#include <memory>
#include <string>
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
  struct ChannelPlan;
  static ChannelPlan plan_channels(const WorkloadSpec& spec);
  // The hosts' sides (their buffers holding `pattern`) and a QP pair per channel.
  void open_channels(const Scenario& s, const ChannelPlan& plan, uint64_t region,
                     const std::vector<std::byte>& pattern);
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
