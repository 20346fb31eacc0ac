// Timing parameters of the RNIC model, with their defaults. What each means,
// its unit and range are in its row of param_table.cpp (`rnicsim params`
// prints them); scenario files set them by name.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "nic_model/congestion_control.hpp"
#include "nic_model/named_rows.hpp"
#include "nic_model/pcie_link.hpp"

namespace rnicsim::nic {

// How a lost packet is recovered (docs/ARCHITECTURE.md, "Loss recovery"): one
// row per way, named as scenarios write it (param_table.cpp says which NICs
// recover so).
enum class LossRecovery : uint8_t { GoBackN, GoBack0, SelectiveRepeat };
struct LossRecoveryRow {
  LossRecovery mode;
  std::string_view name;
};
inline constexpr std::array<LossRecoveryRow, 3> kLossRecoveries{{
    {LossRecovery::GoBackN, "go_back_n"},
    {LossRecovery::GoBack0, "go_back_0"},
    {LossRecovery::SelectiveRepeat, "selective_repeat"},
}};
inline std::string_view to_string(LossRecovery m) { return kLossRecoveries[static_cast<size_t>(m)].name; }
inline std::optional<LossRecovery> loss_recovery_named(std::string_view name) {
  if (const auto i = row_named(std::span<const LossRecoveryRow>(kLossRecoveries), name)) return kLossRecoveries[*i].mode;
  return std::nullopt;
}
inline std::string loss_recovery_names(std::string_view separator) {
  return row_names(std::span<const LossRecoveryRow>(kLossRecoveries), separator);
}

struct NicParams {
  uint64_t clock_hz = 500'000'000;
  uint32_t doorbell_cycles = 4;
  uint32_t wqe_fetch_batch = 8;
  uint32_t wqe_fetch_outstanding = 8;
  uint32_t requester_cycles_per_packet = 20;
  uint32_t requester_cycles_per_wqe = 8;
  // Processing units (processing_units.hpp): the requester's, and the receive
  // side's (inbound requests and responses, and the answers they make).
  uint32_t requester_units = 1;
  uint32_t responder_units = 1;
  // Atomics lock their target by address bucket (the 8-byte word's address
  // modulo the count): two on one bucket run one after the other, on different
  // buckets at once (Kalia et al., ATC 2016: ConnectX-3 serialises all, one
  // bucket; Connect-IB has 4096).
  uint32_t atomic_buckets = 1;
  uint32_t datapath_bytes_per_cycle = 64;
  uint32_t tx_latency_cycles = 0;  // latency apart from occupancy (which bounds rates)
  uint32_t rx_latency_cycles = 0;
  // More receive latency for a request that names remote memory (RETH or
  // AtomicETH: its R_Key validated, the address translated).
  uint32_t rkey_check_cycles = 0;
  // The mean of an exponential delay drawn for each packet's pass through the
  // transmit and receive pipelines (jitter.hpp); zero: none, the model exact.
  sim::Duration jitter_mean = sim::Duration::zero();
  uint32_t responder_cycles_per_packet = 20;
  // A MIDDLE or LAST packet of a message: its checks and DMA set-up were the
  // FIRST packet's (0: as responder_cycles_per_packet).
  uint32_t responder_cycles_per_segment = 0;
  uint32_t completer_cycles_per_packet = 10;
  uint32_t rx_parse_cycles = 6;
  uint32_t tx_pipeline_packets = 32;
  // A request's payload read from host memory in chunks of this many bytes: a
  // chunk's first packet reads the whole chunk, its later packets take their
  // bytes from the NIC's buffer (0, or no more than the path MTU: every packet
  // reads its own).
  uint32_t tx_read_chunk_bytes = 0;
  uint32_t tx_buffer_bytes = 128 * 1024;  // the requester and responder wait when it is full
  uint32_t ack_coalesce_packets = 32;
  uint32_t max_inflight_psns = 1u << 16;
  LossRecovery loss_recovery = LossRecovery::GoBackN;
  uint32_t reorder_window_packets = 1024;
  sim::Duration nak_repeat_interval = sim::Duration::us(32);  // NAK a gap still open again after this (0: off)
  uint32_t mtu = 4096;  // path MTU is per QP
  uint32_t eth_mtu = 0;  // RoCE: the port's Ethernet MTU (0: see ethernet_mtu)
  // On-chip caches: a miss is a DMA read of the entry, and the block that needed it waits.
  // Each is set-associative (set_cache.hpp), `ways` entries to a set.
  uint32_t qpc_cache_entries = 2048;
  uint32_t qpc_cache_ways = 8;
  uint32_t qpc_entry_bytes = 256;
  uint32_t qpc_prefetch = 0;  // contexts read ahead while a block waits for one
  // The requester's WQEs of READs and atomics under way, which their answers
  // are placed by (0: unlimited, never missed).
  uint32_t wqe_cache_entries = 0;
  uint32_t wqe_cache_ways = 8;
  uint32_t wqe_prefetch = 0;  // WQEs of the answers behind one that misses, read meanwhile
  uint32_t mtt_cache_entries = 8192;
  uint32_t mtt_cache_ways = 8;
  uint32_t mtt_page_bytes = 4096;
  uint32_t mtt_entry_bytes = 64;
  // Completion events: one per `cq_moderation_count` CQEs of an armed CQ, or
  // `cq_moderation_period` after the first pending one, whichever is first.
  uint32_t cq_moderation_count = 1;
  sim::Duration cq_moderation_period = sim::Duration::zero();
  PcieParams pcie;
  CongestionParams congestion;  // off by default
};

// RoCE: the largest IB MTU an Ethernet MTU carries, as the kernel's iboe_get_mtu
// takes it (less GRH 40, UDP 8, BTH 12, XRC 4, AtomicETH 28 and ICRC 4 bytes);
// 0 when not even 256 fits.
constexpr uint32_t roce_mtu_for(uint32_t eth_mtu) {
  constexpr uint32_t kHeaders = 40 + 8 + 12 + 4 + 28 + 4;
  for (uint32_t ib = 4096; ib >= 256; ib /= 2)
    if (eth_mtu >= ib + kHeaders) return ib;
  return 0;
}

// The Ethernet MTU of a RoCE port: as set, else the smaller of the usual
// settings (1500, 4200) that carries the port's IB MTU.
constexpr uint32_t ethernet_mtu(const NicParams& p) {
  if (p.eth_mtu != 0) return p.eth_mtu;
  return roce_mtu_for(1500) >= p.mtu ? 1500 : 4200;
}

static_assert([] {
  for (size_t i = 0; i < kLossRecoveries.size(); ++i)
    if (static_cast<size_t>(kLossRecoveries[i].mode) != i) return false;
  return true;
}(), "kLossRecoveries is indexed by the mode");

}  // namespace rnicsim::nic
