// Workload drivers: the host software of a scenario. Each workload owns a QP on
// each of its two hosts, posts work requests through the rings and doorbells like
// a verbs program, and reaps completions by polling its CQ ring.
//   bw:  perftest's *_bw: keep tx_depth requests outstanding until `count` complete.
//   lat: perftest's *_lat: a ping-pong; latency is half the round trip.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "nic_model/host_queues.hpp"
#include "scenario/scenario.hpp"
#include "scenario/world.hpp"
#include "sim/stats.hpp"

namespace rnicsim::scenario {

struct HostParams {
  sim::Duration poll_delay = sim::Duration::ns(50);  // from a CQE landing to the host acting on it
};

class Workload {
public:
  Workload(World& world, const WorkloadSpec& spec, uint32_t path_mtu, uint64_t seed);
  ~Workload();
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  // Starts at the current simulated time; `on_done` runs when it has finished.
  void start(std::function<void()> on_done);
  bool finished() const { return finished_; }
  bool failed() const { return failed_; }
  const std::string& failure() const { return failure_; }
  const WorkloadSpec& spec() const { return spec_; }

  uint64_t messages() const { return completed_; }
  uint64_t bytes() const { return completed_ * spec_.size; }
  sim::Duration elapsed() const { return end_ - start_; }
  const sim::Histogram& latency_ps() const { return latency_; }
  // Whether the receiver's buffer holds exactly what the sender sent.
  bool data_verified() const { return data_verified_; }

private:
  class Endpoint;
  void on_cqe(Endpoint& ep, const nic::Cqe& c);
  void post_send(Endpoint& ep, uint64_t index);
  void post_recv(Endpoint& ep);
  void finish();
  void fail(const std::string& why);

  World& world_;
  WorkloadSpec spec_;
  HostParams host_params_;
  std::unique_ptr<Endpoint> client_, server_;
  std::function<void()> on_done_;
  sim::Time start_, end_;
  uint64_t posted_ = 0, completed_ = 0, received_ = 0;
  std::vector<sim::Time> post_time_;  // by WQE slot, for bw latency
  sim::Time ping_sent_;
  sim::Histogram latency_;
  bool finished_ = false, failed_ = false, data_verified_ = false;
  std::string failure_;
};

}  // namespace rnicsim::scenario
