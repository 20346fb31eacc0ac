// What each host and switch of a world did, as the outputs read it
// (summary.json's sums, stats.json's counters, qps.csv): plain values copied
// out of the units once the run is over. The outputs are made from these, not
// from the units themselves, so that a run across ranks (sim/rank_link.hpp)
// can bring every rank's units' reports to rank 0 as bytes and write the same
// files there. A report holds what its unit counted, whatever its world's
// partitioning; the order of the reports is the scenario's.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fabric/pfc.hpp"
#include "fabric/port.hpp"
#include "fabric/switch.hpp"
#include "nic_model/congestion_control.hpp"
#include "nic_model/nic_context.hpp"
#include "nic_model/responder.hpp"
#include "nic_model/rx_pipeline.hpp"
#include "scenario/summary.hpp"

namespace rnicsim::scenario {

class World;
struct Host;

// A port: its counters (paused time including a pause still running), its PFC
// generator's (if it has one) and the headroom kept for its lossless priorities.
struct PortReport {
  fabric::Port::Counters counters;
  bool has_pfc = false;
  fabric::PfcSendCounters pfc;
  uint64_t headroom = 0;
};

// A QP's row of qps.csv.
struct QpReport {
  nic::Qpn qpn{};
  nic::QpType type{};
  nic::QpState state{};
  uint64_t tx_packets = 0, rx_packets = 0, retransmitted_packets = 0, ecn_ce_received = 0, cnps_received = 0;
  nic::CcSummary cc;
};

// A host: its NIC's counters by block, its memory's dropped writes, the
// completions its programs reaped, its port, and its QPs in the NIC's order.
struct HostReport {
  struct Counters {
    nic::NicCounters nic;
    nic::RxPipeline::Counters rx;
    nic::Responder::Counters responder;
    uint64_t completer_naks = 0, completer_timeouts = 0, dma_reads = 0, dma_writes = 0;
    uint64_t pcie_upstream_bytes = 0, pcie_downstream_bytes = 0, cq_overruns = 0, rx_buffer_peak = 0;
    uint64_t packets_sent = 0, payload_writes_dropped = 0;
    std::array<uint64_t, kCompletionStatuses> completions{};
    bool has_port = false;
    PortReport port;
  } counters;
  std::vector<QpReport> qps;
};

// A switch: its counters, its buffer's peak and each port's report.
struct SwitchReport {
  fabric::SwitchCounters counters;
  uint64_t buffer_peak = 0;
  std::vector<PortReport> ports;
};

// Every unit's report, hosts and switches in the scenario's order, with the
// names the outputs give them.
struct UnitReports {
  std::vector<std::string> host_names, switch_names;
  std::vector<HostReport> hosts;
  std::vector<SwitchReport> switches;
};

HostReport report(const Host& h);
SwitchReport report(const fabric::Switch& sw);
// Every unit of `world`.
UnitReports reports(World& world);

// The reports of some units as bytes, and back: `hosts` and `switches` say
// which (by index), the bytes carry the reports alone. read_reports() fills
// the units that the bytes name into `into` (sized for the whole world) and
// throws std::runtime_error on bytes that do not parse.
std::vector<std::byte> write_reports(const UnitReports& from, std::span<const size_t> hosts, std::span<const size_t> switches);
void read_reports(std::span<const std::byte> bytes, UnitReports& into);

// summary.json's sums over the hosts (packets, drops, retransmissions, errors,
// completions) and over the fabric (switches, PFC, ECN, credits).
void summarise_hosts(const UnitReports& r, Summary& sum);
void summarise_fabric(const UnitReports& r, Summary& sum);

}  // namespace rnicsim::scenario
