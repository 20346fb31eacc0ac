// Timing parameters of the RNIC model. Every parameter has a unit in its name or
// comment and a default; scenario files override them by name.
#pragma once

#include <cstdint>

#include "nic_model/congestion_control.hpp"
#include "nic_model/pcie_link.hpp"

namespace rnicsim::nic {

struct NicParams {
  uint64_t clock_hz = 500'000'000;            // NIC core clock
  uint32_t doorbell_cycles = 4;               // doorbell unit, per MMIO write
  uint32_t wqe_fetch_batch = 8;               // WQEs read per DMA read at most
  uint32_t wqe_fetch_outstanding = 8;         // WQE/RQE DMA reads in flight at most
  uint32_t requester_cycles_per_packet = 20;  // segmentation + header build per packet
  uint32_t requester_cycles_per_wqe = 8;      // decoding a WQE, on its first packet
  uint32_t datapath_bytes_per_cycle = 64;     // payload bytes the requester and responder move per cycle
  // Pipeline latency, apart from the occupancy above (which bounds rates): a packet
  // leaves the transmit pipeline no sooner than this after it was built, and a
  // received packet takes effect no sooner than this after its last bit arrived.
  uint32_t tx_latency_cycles = 0;
  uint32_t rx_latency_cycles = 0;
  uint32_t responder_cycles_per_packet = 20;  // checks + DMA set-up per received request
  uint32_t completer_cycles_per_packet = 10;  // per received ACK/NAK/response
  uint32_t rx_parse_cycles = 6;               // parse + ICRC check per received packet
  uint32_t tx_pipeline_packets = 32;          // packets waiting for payload DMA at most
  // The NIC's transmit buffer: bytes of frames in the transmit pipeline and the
  // port's queue together; the requester and responder wait when it is full.
  uint32_t tx_buffer_bytes = 128 * 1024;
  uint32_t ack_coalesce_packets = 32;         // responder ACKs at least every N packets
  uint32_t max_inflight_psns = 1u << 16;      // unacknowledged PSNs per QP at most
  // Loss recovery of RC: 0 = go-back-N (ConnectX-5 behaviour): a NAK resends
  // everything from the lost PSN on; 1 = selective repeat (ConnectX-6 behaviour):
  // the responder keeps up to `reorder_window_packets` packets that arrive after a
  // gap and the requester resends only the PSNs NAKed.
  uint32_t selective_repeat = 0;
  uint32_t reorder_window_packets = 1024;
  uint32_t mtu = 4096;                        // port MTU in bytes (path MTU is per QP)
  // On-chip context caches. A miss is a DMA read of the entry from the context
  // tables in host memory, and the block that needed it waits for it.
  uint32_t qpc_cache_entries = 2048;          // QP contexts held on the NIC (0 = unlimited)
  uint32_t qpc_entry_bytes = 256;             // bytes read on a QP-context miss
  uint32_t mtt_cache_entries = 8192;          // memory translation entries (pages) held (0 = unlimited)
  uint32_t mtt_page_bytes = 4096;             // bytes one translation entry maps
  uint32_t mtt_entry_bytes = 64;              // bytes read on a translation miss (MPT + MTT line)
  // Completion events (interrupts) for armed CQs: one event per `cq_moderation_count`
  // CQEs, or `cq_moderation_period` after the first pending one, whichever is first.
  uint32_t cq_moderation_count = 1;
  sim::Duration cq_moderation_period = sim::Duration::zero();
  PcieParams pcie;
  CongestionParams congestion;  // congestion control (DCQCN), off by default
};

}  // namespace rnicsim::nic
