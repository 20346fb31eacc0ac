// What the blocks of one NIC share: its configuration, clock and scheduler, the
// DMA engine and PCIe link, address translation, the context tables and caches,
// the counters and the congestion-control block. Nic owns each part; a block
// keeps a reference to the context and reaches its neighbours through its ports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "fabric/classify.hpp"
#include "fabric/frame.hpp"
#include "nic_model/congestion_control.hpp"
#include "nic_model/context_cache.hpp"
#include "nic_model/context_tables.hpp"
#include "nic_model/dma_engine.hpp"
#include "nic_model/jitter.hpp"
#include "nic_model/memory_translation.hpp"
#include "nic_model/nic_params.hpp"
#include "nic_model/pcie_link.hpp"
#include "nic_model/wqe_events.hpp"
#include "packet/packet.hpp"
#include "sim/simulator.hpp"

namespace rnicsim::nic {

struct NicConfig {
  std::string name = "nic";
  NicParams params;
  // RoCEv2 (IPv4/IPv6) or native IB: IbLocal (LRH only) or IbGlobal (LRH + GRH).
  packet::LinkKind link = packet::LinkKind::RoceV2Ipv4;
  packet::MacAddr mac{};  // RoCEv2 only
  packet::Ipv6Addr ip{};  // IPv4-mapped for IPv4; the port GID for IB (the GRH SGID)
  uint16_t lid = 0;       // IB: the port's LID (the LRH SLID)
  // Size-only: the NIC sends payload-carrying packets as size-only frames and
  // moves no payload bytes to or from host memory (see fabric::Frame); timing,
  // address checks and everything else are as with full bytes.
  bool elide_payload = false;
  // The fabric's priority map (its switches'): the NIC sends each frame on the
  // priority a switch will give it, from its DSCP (RoCEv2, untagged) or SL
  // (IB), as mlx5 does when it trusts DSCP, so that a pause for that priority
  // stops it and a lossless priority is lossless end to end.
  fabric::PriorityMap priorities{};
  // The algorithms params.congestion.algorithm names a row of.
  CcAlgorithmTable cc_table = cc_algorithms();
  // The unit of the model the NIC belongs to (its host): its events run as it.
  sim::Actor actor{};
};

struct NicCounters {
  uint64_t tx_packets = 0, tx_bytes = 0, rx_frames = 0, retransmitted_packets = 0, tx_drops = 0, loopback = 0;
  uint64_t cnps_sent = 0;  // by the notification point (CE-marked packets and CNPs received: RxPipeline)
  uint64_t dma_faults = 0;  // host memory accesses that failed after the checks passed (memory gone)
};

struct NicContext {
  sim::Simulator& sim;
  const NicConfig& config;
  sim::ClockDomain clock;
  fabric::FramePool& pool;
  PcieLink& pcie;
  DmaEngine& dma;
  MemoryTranslation& translation;
  ContextTables& tables;
  ContextCache& cache;
  NicCounters& stats;
  Jitter& jitter;
  // nullptr when the NIC runs none (set when the NIC is attached to its port).
  CongestionControl* congestion = nullptr;
  TimelineSink* timeline = nullptr;  // the WQE timeline's observer, null when off
  uint16_t ipv4_id = 0;  // the IPv4 identification of the next packet
  uint16_t next_ipv4_id() { return ipv4_id++; }

  sim::Scheduler& scheduler() const { return sim.scheduler(); }
  sim::Time now() const { return sim.now(); }
  sim::Duration cycles(uint32_t n) const { return clock.to_duration(sim::Cycles(n)); }
  const NicParams& params() const { return config.params; }
  sim::Actor actor() const { return config.actor; }
  QpContext* qp(Qpn qpn) const { return tables.qp(qpn); }
  sim::Time context_ready(Qpn qpn) const { return cache.context_ready(qpn, now()); }
  // A block waits for a context: it reads those of the next QPs it will serve,
  // `qpns(i)` for i = 1, 2, ... while i < count, up to the preset's depth.
  template <class Qpns>
  void prefetch_contexts(size_t count, Qpns qpns) const {
    for (size_t i = 1; i < count && i <= cache.prefetch_depth(); ++i)
      if (const std::optional<Qpn> q = qpns(i)) cache.prefetch(*q, now());
  }
  sim::Duration translation_stall() const { return cache.translation_stall(now()); }
  packet::LinkType capture_link_type() const { return packet::link_type(config.link); }
  // Headers every packet of `qp` shares (addresses, ports, QPN); opcode and the
  // rest are the caller's.
  packet::PacketFields packet_template(const QpContext& qp);
  // The priority the QP's packets go out on (config.priorities).
  uint8_t egress_priority(const QpContext& qp) const;
};

}  // namespace rnicsim::nic
