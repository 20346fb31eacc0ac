// What a run measured: per workload (perftest's report rows, flows' completion
// times), the fabric's counters and the totals. The runner fills it; the
// report, the output files, `expect:` and sweep tables read it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fabric/shared_buffer.hpp"
#include "scenario/spec.hpp"
#include "scenario/workload_counts.hpp"
#include "sim/time.hpp"

namespace rnicsim::scenario {

// One line of perftest's report: the bw columns or the lat columns.
struct PerftestRow {
  uint64_t bytes = 0, iterations = 0;
  // bw: #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]
  double bw_peak_gbps = 0, bw_avg_gbps = 0, msg_rate_mpps = 0;
  // lat: #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9% (usec)
  double t_min_us = 0, t_max_us = 0, t_typical_us = 0, t_avg_us = 0, t_stdev_us = 0, t_p99_us = 0, t_p999_us = 0;
};

// One flow of a flows workload, once run.
struct FlowResult {
  FlowSpec spec;
  sim::Time start, end;  // posted; its completion reaped by the sender
  bool done = false;
  double fct_us = 0, ideal_us = 0, slowdown = 0;
};

// An expectation of `expect:`, checked against the run.
struct ExpectResult {
  Expectation expectation;
  double measured = 0;
  std::string measured_text;  // with its unit
  bool ok = false;
};

struct WorkloadSummary {
  std::string name, op, pattern;
  uint64_t messages = 0, bytes = 0, size = 0;
  double seconds = 0, gbps = 0, mmsg_per_s = 0;
  uint64_t lat_p50_ps = 0, lat_p99_ps = 0, lat_min_ps = 0, lat_max_ps = 0;
  double lat_mean_ps = 0;
  double post_cpu_busy = 0;  // the busiest posting core's share of the run (1: the host bounds the rate)
  bool completed = false, data_verified = false;
  bool data_checked = true;  // false: payload bytes not materialised (size-only run)
  WorkloadCounts counts;
  std::array<uint64_t, kCompletionStatuses> send_completions{};
  bool completion_order_ok = true;
  std::string failure;
  // What perftest prints about a test, and its report lines (one per size).
  std::string from, to, link_type, nic_preset, device;
  uint32_t qps = 1, tx_depth = 0, rx_depth = 0, cq_mod = 0, post_list = 1, inline_size = 0, mtu = 0, outs = 0;
  bool rdma_cm = false;  // connected through the RDMA CM
  std::string connection = "RC";  // the QPs' transport (perftest's Connection type)
  std::vector<PerftestRow> rows;
  // pattern flows: every flow with its completion time and slowdown.
  std::vector<FlowResult> flows;
};

// The fabric's counters, summed over switches and ports.
struct FabricSummary {
  uint32_t switches = 0;
  uint64_t forwarded = 0;
  uint64_t ecn_marked = 0;   // frames switches marked CE
  uint64_t ecn_ce_received = 0, cnps_received = 0;  // at NICs, for known QPs
  uint64_t cnps_sent = 0;                           // by NICs' notification points
  std::array<uint64_t, static_cast<size_t>(fabric::DropCause::Count)> switch_drops{};
  uint64_t peak_buffer_bytes = 0;  // the fullest any switch's buffer got
  // PFC per priority: sent by switches and NICs (XOFF, refreshes, XON) and
  // received by the ports they paused, with the time those stood paused.
  uint64_t pfc_frames_sent = 0;
  std::array<uint64_t, 8> xoff_sent{}, refresh_sent{}, xon_sent{}, pause_received{}, xon_received{};
  std::array<double, 8> paused_us{};
  uint64_t watchdog_trips = 0;
  // IB credits: how often, and how long, a VL's head frame waited for credit.
  uint64_t credit_stalls = 0;
  double credit_stall_us = 0;
  bool pfc_used() const { return pfc_frames_sent > 0; }
};

struct Summary {
  std::string name;
  uint64_t seed = 0;
  bool size_only = false;  // payload bytes not materialised
  std::vector<WorkloadSummary> workloads;
  uint64_t messages = 0, bytes = 0;
  uint64_t packets = 0;          // every frame put on a wire
  uint64_t data_packets = 0;     // request packets sent by requesters (retransmissions included)
  uint64_t retransmissions = 0;
  uint64_t drops = 0;            // lost on the wire or at full queues
  uint64_t rx_errors = 0;        // malformed or bad ICRC, dropped by receivers
  FabricSummary fabric;
  double sim_seconds = 0, wall_seconds = 0;
  uint64_t events = 0;
  double events_per_sec = 0;
  // DMA writes of payload that a later write covered before anybody looked at
  // the bytes: never copied (see RunOptions::defer_writes).
  uint64_t payload_writes_dropped = 0;
  bool completed = false;        // every workload finished without error
  std::array<uint64_t, kCompletionStatuses> completions{};  // CQEs the hosts reaped, by ibv_wc_status
  std::vector<ExpectResult> expectations;  // the scenario's expect:, checked
  bool expectations_met = true;
};

}  // namespace rnicsim::scenario
