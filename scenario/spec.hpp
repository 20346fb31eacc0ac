// What a scenario is: its hosts, network, NIC, workloads, faults and
// expectations, as the loaders (scenario.hpp) leave them, every value final.
// Nothing here reads YAML; the world, the workloads and the runner read these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fabric/fault_model.hpp"
#include "fabric/pcap_tap.hpp"
#include "fabric/pfc.hpp"
#include "fabric/switch.hpp"
#include "fabric/topology.hpp"
#include "nic_model/nic_params.hpp"
#include "nic_model/queue_format.hpp"
#include "scenario/workload_ops.hpp"
#include "sim/time.hpp"

namespace rnicsim::scenario {

enum class LinkLayer : uint8_t { RoceV2Ipv4, RoceV2Ipv6, Ib };
enum class WorkloadPattern : uint8_t { Bandwidth, Latency, Flows };

// The verbs device a host's program sees unless the host's `device:` names another.
inline constexpr std::string_view kDefaultDeviceName = "rnicsim0";

struct HostSpec {
  std::string name;
  std::string ip;  // dotted IPv4; IPv6 text for roce_v2_ipv6; for ib the port GID (IPv6 text)
  uint16_t lid = 0;  // ib: the port's LID; 0 = the host's place in the list (1, 2, ...)
  std::string device;  // emulation: the verbs device name its program sees (empty: kDefaultDeviceName)
  // Its own NIC where it differs from the scenario's (`nic:` under the host):
  // the scenario's settings with the host's over them, the MTU the scenario's.
  std::optional<nic::NicParams> nic;
};

struct LinkSpec {
  std::string a, b;
  uint64_t rate_bps = 100'000'000'000;
  sim::Duration delay = sim::Duration::ns(1000);
  double loss = 0.0;
  fabric::GilbertElliott gilbert_elliott;
  std::vector<std::pair<sim::Duration, sim::Duration>> down;  // [from, to) the link is down
};

// One flow of a flows workload: a single message from `from` to `to`.
struct FlowSpec {
  std::string from, to;
  WorkloadOp op = WorkloadOp::Write;
  uint64_t size = 0;
  sim::Duration start;  // after the workload starts
  std::optional<uint8_t> priority;  // absent: the workload's priority
};

// A workload. perftest's options keep perftest's names and defaults (which depend on
// the pattern and op; the loader resolves them, so every field here is final).
struct WorkloadSpec {
  std::string name;
  WorkloadOp op = WorkloadOp::Write;
  WorkloadPattern pattern = WorkloadPattern::Bandwidth;
  std::string from, to;
  uint64_t size = 65536;            // the largest of `sizes`
  std::vector<uint64_t> sizes;      // run one after another (all_sizes: 2 B to 8 MiB)
  bool all_sizes = false;
  uint64_t iterations = 1000;       // per QP (`count` is an alias)
  uint32_t qps = 1;                 // QP pairs; each runs `iterations`
  uint32_t processes = 1;           // the client's cores posting, QP i on core i mod processes
  uint32_t tx_depth = 128;          // send queue depth: WQEs outstanding per QP at most
  uint32_t rx_depth = 512;          // receive WQEs kept posted per QP (send, write_imm)
  uint32_t cq_mod = 100;            // bw: every cq_mod-th WQE is signaled
  uint32_t post_list = 1;           // WQEs per doorbell
  uint32_t inline_size = 0;         // messages up to this size go inline in the WQE
  uint32_t outs = 16;               // outstanding READs/atomics per QP (max_rd_atomic)
  // connect: rdma_cm: the QPs connect through the RDMA CM on the wire (REQ,
  // REP, RTU on QP1, simulated and timed) before the traffic starts; else
  // their numbers are exchanged out of band, as perftest does without -R.
  bool rdma_cm = false;
  // The QPs' transport, perftest's -c: RC; UC (no ACKs: WRITE and SEND);
  // UD (datagrams: SENDs of one packet, the receive buffer 40 bytes longer for the GRH).
  nic::QpType connection = nic::QpType::Rc;
  std::optional<sim::Duration> start;  // absent: when the previous workload ends
  // pattern: flows
  std::vector<FlowSpec> flows;
  bool qp_per_flow = false;         // else one QP pair per (from, to) pair of hosts
  std::optional<sim::Duration> base_rtt;  // for slowdowns; absent: 2 x the path's delay
  uint8_t priority = 0;             // traffic priority: SL = priority, DSCP = 8 x priority
  // The RC QPs' retransmission attributes (ibv_modify_qp at RTS; perftest's -u is timeout).
  uint8_t timeout = 14;             // local ACK timeout 4.096 us x 2^timeout; 0: none
  sim::Duration ack_timeout{};      // `timeout` given as a time: exactly this (zero: from timeout)
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;            // 7: retry without end
};

// The host software's timing (the workload drivers are the host's CPU).
struct HostTiming {
  // From a CQE, or a polled byte, becoming visible in host memory to the host
  // acting on it (the poll that misses in the cache, plus the driver's own work).
  sim::Duration poll_delay = sim::Duration::ns(50);
  // How often a host spinning on a memory byte (perftest's write latency test)
  // reads it.
  sim::Duration mem_poll_interval = sim::Duration::ns(10);
  // The driver writes a WQE posted on its own with the doorbell (BlueFlame), so
  // the NIC does not fetch it; a post list rings a plain doorbell. mlx5 does this
  // unless MLX5_SHUT_UP_BF=1.
  bool blueflame = true;
  // How many 64-byte lines a BlueFlame write takes: the WQE's ring slot (128
  // bytes for up to four SGEs: two lines, as the presets were calibrated), or
  // the WQE at its own size as mlx5 writes it (nic::blueflame_bytes: one line
  // for a small WRITE, READ, SEND or atomic).
  bool blueflame_wqe_size = false;
  // A core's time to build one WQE in the ring (ibv_post_send's own work), and
  // to write one 64-byte line by MMIO, the store into the write-combining
  // buffer and its flush (a doorbell is one line; a BlueFlame WQE its lines):
  // the host side of posting (host_cores.hpp). Estimates: a lone 64-byte WRITE
  // costs 25 + 2 x 30 = 85 ns of a core, about 12 M posts/s, as perftest's
  // single-QP message rate on a Xeon; in a post list the MMIO is shared.
  sim::Duration post_cost = sim::Duration::ns(25);
  sim::Duration mmio_cost = sim::Duration::ns(30);
};

// The network: every form a scenario gives it in (point-to-point links, switches
// and links listed one by one, a generated single switch, leaf-spine or
// fat-tree) ends up as one topology of hosts, switches and links.
struct FabricSpec {
  std::string kind = "links";  // links, single_switch, leaf_spine, fat_tree
  fabric::Topology topology;
  fabric::SwitchParams switch_params;  // every switch (pfc inside)
  // NICs: PFC on their receive buffer (pfc.priorities as the switches) and the
  // PFC watchdog of every port.
  uint64_t nic_rx_buffer_bytes = 256 * 1024;
  // InfiniBand link-level credits: each port's receive buffer per VL (0 = off).
  uint64_t ib_vl_buffer_bytes = 0;
  sim::Duration pfc_watchdog = sim::Duration::zero();
  sim::Duration pfc_response_delay = fabric::kPfcResponseDelay;  // see fabric::PortParams
  bool has_switches() const {
    for (const auto& n : topology.nodes)
      if (n.is_switch) return true;
    return false;
  }
};

// A capture on one port: a host's (its only port) or a switch's port `port`
// (its port-th link in the scenario's order), to its own pcap file.
struct CaptureSpec {
  std::string node;          // host or switch name
  uint32_t port = 0;         // switch port; 0 for a host
  std::string file;          // relative to --out if given, else to the working directory
  uint32_t snaplen = 65535;  // bytes kept per frame
  uint8_t priorities = 0xFF; // data frames of these priorities (bit p); PFC frames always
};

// A rule of `faults:` (fabric/fault_model.hpp): where it acts, a link (both
// directions) or a host's side of its link, and what it does.
struct FaultSpec {
  std::string link_a, link_b;
  std::string host;
  bool tx = false, rx = false;
  fabric::FaultRule rule;
};

enum class ExpectOp : uint8_t { Less, LessEqual, Greater, GreaterEqual, Equal, NotEqual };

// One condition of `expect:`, "METRIC OP VALUE" (expect.hpp lists the metrics).
struct Expectation {
  std::string text;    // as written
  std::string metric;  // e.g. write_stream.throughput
  ExpectOp op = ExpectOp::Equal;
  double value = 0;    // in the metric's base unit (bits/s, seconds, count, ratio)
};

struct Scenario {
  std::string file;
  std::string name;
  uint64_t seed = 1;
  LinkLayer link_layer = LinkLayer::RoceV2Ipv4;
  bool ib_grh = false;  // ib: every packet carries a GRH (global routing, LNH = 3)
  fabric::IbCapture ib_capture = fabric::IbCapture::Erf;  // ib: how captures are written
  // size_only: payload bytes are not materialised (fabric::Frame's size-only
  // frames); captures hold the headers, workloads cannot check the data.
  bool size_only = false;
  std::optional<uint32_t> partitions;  // unset: default_partitions(); the world's cut (scenario/partition_map.hpp): outputs are the same for any
  std::optional<sim::Duration> duration;
  std::vector<HostSpec> hosts;
  std::vector<LinkSpec> links;  // as listed under links: (hosts and switches)
  FabricSpec fabric;
  nic::NicParams nic;
  std::string nic_preset;  // the preset the NIC settings started from, if any
  uint32_t path_mtu = 4096;
  HostTiming host;
  std::vector<WorkloadSpec> workloads;
  std::vector<FaultSpec> faults;
  std::vector<Expectation> expect;
  std::vector<CaptureSpec> captures;
};

}  // namespace rnicsim::scenario
