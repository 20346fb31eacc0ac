// perftest-equivalent workloads: ib_{write,send,read,atomic}_{bw,lat} run by the
// scenario's host software, with perftest's options, measurements and report
// columns (how bw and lat measure: perftest.cpp). The host's timing is the
// scenario's `host:` (HostTiming); posting costs the QP's core (HostCores).
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "scenario/workload.hpp"

namespace rnicsim::scenario {

// perftest's peak bandwidth, as the least time per message over any stretch
// from a post (every `step`-th) to a later completion: the minimum over i <= j,
// i a multiple of `step`, j in `completed_at`, of
// (tcompleted[j] - tposted[i]) / (j - i + 1), in picoseconds (infinity if
// there is no such pair).
double best_stretch_ps(std::span<const sim::Time> tposted, std::span<const sim::Time> tcompleted,
                       std::span<const uint64_t> completed_at, uint64_t step);

class PerftestWorkload : public Workload {
public:
  PerftestWorkload(World& world, const Scenario& s, const WorkloadSpec& spec, uint64_t seed);
  ~PerftestWorkload() override;
  void start(PartDone on_part_done) override;
  std::vector<const Host*> part_hosts(size_t) const override { return {&client_->host(), &server_->host()}; }
  uint64_t delivered_bytes() const override;
  uint64_t expected_bytes() const override;
  sim::Duration posting_busy() const override {
    if (shipped_) return shipped_->posting_busy;
    return std::max(client_->cores().busiest(), server_->cores().busiest());
  }
  // Its one part is the whole run: the results, and what was delivered and
  // how busy its cores were (read from the hosts where it ran).
  void write_parts(std::span<const size_t> parts, sim::ByteWriter& out) const override;
  void read_parts(sim::ByteReader& in) override;

private:
  struct LatSide;
  struct CmLink;
  bool lat() const { return spec_.pattern == WorkloadPattern::Latency; }
  // The messages of one phase (one size): a latency test's iterations, a bandwidth test's per QP.
  uint64_t phase_messages() const { return lat() ? spec_.iterations : spec_.iterations * spec_.qps; }
  // Buffer layout: per side a send region then a receive region, each `slices_`
  // slices of `slot_` bytes (QP q uses slice q, or slice 0 when they are shared).
  uint64_t send_addr(const HostSide& h, uint32_t qp) const;
  uint64_t recv_addr(const HostSide& h, uint32_t qp) const;
  uint32_t slice(uint32_t qp) const { return slices_ == 1 ? 0 : qp; }

  void start_phase();
  void end_phase();
  nic::SendWqe make_wqe(HostSide& from, uint32_t qp, uint64_t index, bool signaled);
  void post_recv(HostSide& side, uint32_t qp, uint64_t index);
  void on_cqe(HostSide& side, const nic::Cqe& c, bool recv);
  void check_imm(const nic::Cqe& c, uint64_t nth);
  void count_send_cqe(const HostSide& side, const nic::Cqe& c);

  // bw
  void bw_pump(uint32_t qp);
  void bw_on_send_cqe(uint32_t qp, uint64_t index);
  void bw_check_done();
  PerftestRow bw_row() const;

  // lat
  void lat_advance(LatSide& s);
  void lat_request_response(LatSide& s);
  // A ping-pong's steps.
  bool lat_receive(LatSide& s);
  void lat_post(LatSide& s);
  bool lat_complete(LatSide& s);
  bool lat_take_completion(LatSide& s);
  void lat_side_done(LatSide& s);
  PerftestRow lat_row() const;

  bool verify_phase();
  uint64_t received() const;

  HostTiming timing_;
  uint32_t path_mtu_;
  uint64_t slot_ = 0;
  uint32_t slices_ = 1;
  uint32_t grh_ = 0;  // UD: the GRH's 40 bytes at the start of each receive buffer
  static constexpr uint32_t kUdGrhBytes = 40;
  std::unique_ptr<HostSide> client_, server_;
  std::unique_ptr<CmLink> cm_;  // connect: rdma_cm, while the QPs connect
  size_t phase_ = 0;
  uint64_t size_ = 0;
  bool in_phase_ = false;
  uint64_t phase_base_ = 0;  // received() when the phase began

  // bw state, per phase.
  std::vector<uint64_t> scnt_, ccnt_, rcnt_;
  std::vector<bool> qp_errored_;  // per side and QP: an error completion seen
  uint64_t totscnt_ = 0, totccnt_ = 0, totrcnt_ = 0;
  std::vector<sim::Time> tposted_, tcompleted_;
  std::vector<uint64_t> completed_at_;  // the k whose tcompleted[k] was set, ascending
  std::vector<sim::Time> post_time_;    // per QP and SQ slot, for the latency histogram
  uint32_t sq_entries_ = 1;

  // lat state, per phase.
  std::unique_ptr<LatSide> lat_client_, lat_server_;
  sim::Time lat_end_;
  int lat_sides_left_ = 0;

  // Read from the rank it ran on (read_parts).
  struct Shipped {
    uint64_t delivered = 0;
    sim::Duration posting_busy;
  };
  std::optional<Shipped> shipped_;
};

}  // namespace rnicsim::scenario
