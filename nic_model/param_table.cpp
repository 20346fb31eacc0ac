#include "nic_model/param_table.hpp"

namespace rnicsim::nic {
namespace {

const ParamKey<NicParams> kNicKeys[] = {
    {"clock_hz", ParamKind::Frequency, 1'000'000, 100'000'000'000, &NicParams::clock_hz, false, "NIC core clock"},
    {"doorbell_cycles", ParamKind::Cycles, 0, 1'000'000, &NicParams::doorbell_cycles, false, "doorbell unit time per MMIO write"},
    {"wqe_fetch_batch", ParamKind::Count, 1, 256, &NicParams::wqe_fetch_batch, false, "WQEs read by one DMA read at most"},
    {"wqe_fetch_outstanding", ParamKind::Count, 1, 4096, &NicParams::wqe_fetch_outstanding, false, "WQE/RQE DMA reads in flight at most"},
    {"requester_cycles_per_packet", ParamKind::Cycles, 1, 1'000'000, &NicParams::requester_cycles_per_packet, false, "requester occupancy per packet (segmentation, header build)"},
    {"requester_cycles_per_wqe", ParamKind::Cycles, 0, 1'000'000, &NicParams::requester_cycles_per_wqe, false, "requester occupancy to decode a WQE, on its first packet"},
    {"requester_units", ParamKind::Count, 1, 256, &NicParams::requester_units, false, "requester processing units side by side, each QP on one (by QPN)"},
    {"responder_units", ParamKind::Count, 1, 256, &NicParams::responder_units, false, "receive-side processing units (requests, responses, answers), each QP on one (by QPN)"},
    {"atomic_buckets", ParamKind::Count, 1, 65536, &NicParams::atomic_buckets, false, "atomics lock their target by address bucket: on one bucket one at a time, on different ones at once"},
    {"datapath_bytes_per_cycle", ParamKind::Bytes, 1, 4096, &NicParams::datapath_bytes_per_cycle, false, "payload bytes the requester and responder move per cycle"},
    {"tx_latency_cycles", ParamKind::Cycles, 0, 1'000'000, &NicParams::tx_latency_cycles, false, "transmit pipeline latency from build to wire (beyond occupancy)"},
    {"rx_latency_cycles", ParamKind::Cycles, 0, 1'000'000, &NicParams::rx_latency_cycles, false, "receive pipeline latency from last bit to effect (beyond occupancy)"},
    {"rkey_check_cycles", ParamKind::Cycles, 0, 1'000'000, &NicParams::rkey_check_cycles, false, "receive latency a request naming remote memory adds (RDMA WRITE first/only, READ, atomics: R_Key check and translation)"},
    {"jitter_mean", ParamKind::Time, 0, 0, &NicParams::jitter_mean, false, "mean of the exponential delay each packet draws in the transmit and in the receive pipeline (0: none, exact)"},
    {"responder_cycles_per_packet", ParamKind::Cycles, 1, 1'000'000, &NicParams::responder_cycles_per_packet, false, "responder occupancy per request (checks, DMA set-up)"},
    {"responder_cycles_per_segment", ParamKind::Cycles, 0, 1'000'000, &NicParams::responder_cycles_per_segment, false, "responder occupancy per MIDDLE or LAST packet of a message (0: as responder_cycles_per_packet)"},
    {"completer_cycles_per_packet", ParamKind::Cycles, 0, 1'000'000, &NicParams::completer_cycles_per_packet, false, "completer occupancy per ACK/NAK/response"},
    {"rx_parse_cycles", ParamKind::Cycles, 0, 1'000'000, &NicParams::rx_parse_cycles, false, "parse and ICRC check per received packet"},
    {"tx_pipeline_packets", ParamKind::Count, 1, 65536, &NicParams::tx_pipeline_packets, false, "packets waiting for payload DMA at most"},
    {"tx_read_chunk_bytes", ParamKind::Bytes, 0, 1u << 20, &NicParams::tx_read_chunk_bytes, false, "a request's payload is read in chunks of this size: a chunk's first packet waits for all of it, the later ones take their bytes from the NIC (0: each packet reads its own)"},
    {"tx_buffer_bytes", ParamKind::Bytes, 8192, 1u << 30, &NicParams::tx_buffer_bytes, false, "frames in the transmit pipeline and the port's queue at most (bytes)"},
    {"ack_coalesce_packets", ParamKind::Count, 1, 65536, &NicParams::ack_coalesce_packets, false, "the responder ACKs at least every N packets"},
    {"max_inflight_psns", ParamKind::Count, 1, 1u << 23, &NicParams::max_inflight_psns, false, "unacknowledged PSNs per QP at most"},
    {"mtu", ParamKind::IbMtu, 256, 4096, &NicParams::mtu, false, "port MTU (the default path MTU of QPs)"},
    {"eth_mtu", ParamKind::Bytes, 0, 9216, &NicParams::eth_mtu, false, "RoCE: Ethernet MTU, e.g. 1500, 4200, 9000; caps the IB MTU to what it carries (0: 1500 or 4200, whichever carries mtu)"},
    {"qpc_cache_entries", ParamKind::Count, 0, 1u << 24, &NicParams::qpc_cache_entries, false, "QP contexts held on the NIC (0: unlimited)"},
    {"qpc_cache_ways", ParamKind::Count, 1, 64, &NicParams::qpc_cache_ways, false, "QP-context cache entries per set (LRU within a set; ways >= entries: one exact LRU)"},
    {"wqe_cache_entries", ParamKind::Count, 0, 1u << 24, &NicParams::wqe_cache_entries, false, "READ and atomic WQEs under way held on the NIC for their answers (0: unlimited); an answer whose WQE was dropped reads it again"},
    {"wqe_cache_ways", ParamKind::Count, 1, 64, &NicParams::wqe_cache_ways, false, "WQE cache entries per set"},
    {"wqe_prefetch", ParamKind::Count, 0, 64, &NicParams::wqe_prefetch, false, "WQEs of the answers queued behind one whose WQE misses, read meanwhile"},
    {"qpc_entry_bytes", ParamKind::Bytes, 16, 4096, &NicParams::qpc_entry_bytes, false, "bytes read from host memory on a QP-context miss"},
    {"qpc_prefetch", ParamKind::Count, 0, 64, &NicParams::qpc_prefetch, false, "QP contexts a unit reads ahead for the next QPs it serves while it waits for a missing one (0: none)"},
    {"mtt_cache_entries", ParamKind::Count, 0, 1u << 24, &NicParams::mtt_cache_entries, false, "memory translation entries (pages) held (0: unlimited)"},
    {"mtt_cache_ways", ParamKind::Count, 1, 64, &NicParams::mtt_cache_ways, false, "translation cache entries per set (LRU within a set)"},
    {"mtt_page_bytes", ParamKind::Bytes, 4096, 1u << 30, &NicParams::mtt_page_bytes, true, "bytes one translation entry maps"},
    {"mtt_entry_bytes", ParamKind::Bytes, 8, 4096, &NicParams::mtt_entry_bytes, false, "bytes read on a translation miss (MPT + MTT line)"},
    {"cq_moderation_count", ParamKind::Count, 1, 65535, &NicParams::cq_moderation_count, false, "one completion event per this many CQEs of an armed CQ"},
    {"cq_moderation_period", ParamKind::Time, 0, 0, &NicParams::cq_moderation_period, false, "or this long after the first pending CQE (0: no timer)"},
    {"loss_recovery", ParamKind::Recovery, 0, 0, &NicParams::loss_recovery, false, "loss recovery: go_back_n (ConnectX-5), selective_repeat (ConnectX-6) or go_back_0 (ConnectX-3 Pro)"},
    {"nak_repeat_interval", ParamKind::Time, 0, 0, &NicParams::nak_repeat_interval, false, "a gap still open this long after its NAK is NAKed again, each repeat waiting twice as long (a lost NAK or resend; 0: off); a lost resend is also NAKed again as soon as the packets behind it show up"},
    {"reorder_window_packets", ParamKind::Count, 1, 65536, &NicParams::reorder_window_packets, false, "selective repeat: packets kept after a gap"},
};
const ParamKey<PcieParams> kPcieKeys[] = {
    {"generation", ParamKind::Count, 1, 5, &PcieParams::generation, false, "PCIe generation 1-5 (2.5, 5, 8, 16, 32 GT/s per lane)"},
    {"lanes", ParamKind::Lanes, 1, 32, &PcieParams::lanes, false, "PCIe lanes"},
    {"latency", ParamKind::Time, 0, 0, &PcieParams::latency, false, "one-way PCIe latency, NIC to root complex"},
    {"host_memory_latency", ParamKind::Time, 0, 0, &PcieParams::host_memory_latency, false, "host DRAM read latency"},
    {"max_payload_bytes", ParamKind::Bytes, 128, 4096, &PcieParams::max_payload_bytes, true, "max payload size (MPS) of writes and completions"},
    {"max_read_request_bytes", ParamKind::Bytes, 128, 4096, &PcieParams::max_read_request_bytes, true, "max read request size (MRRS)"},
    {"tlp_overhead_bytes", ParamKind::Bytes, 0, 256, &PcieParams::tlp_overhead_bytes, false, "header, framing and DLLP share per TLP"},
    {"max_read_tags", ParamKind::Count, 0, 1024, &PcieParams::max_read_tags, false, "non-posted read requests outstanding (0: unlimited)"},  // 0: unlimited
    {"mmio_line_time", ParamKind::Time, 0, 0, &PcieParams::mmio_line_time, false, "least time per 64-byte line of MMIO writes: the write-combining rate (0: the link's rate)"},
};

const ParamKey<CongestionParams> kCongestionKeys[] = {
    {"algorithm", ParamKind::Algorithm, 0, 0, &CongestionParams::algorithm, false, "congestion control algorithm"},
    {"dce_tcp_g", ParamKind::Count, 0, 1023, &CongestionParams::dce_tcp_g, false, "alpha gain g/1024 per alpha update period"},
    {"dce_tcp_rtt", ParamKind::Time, 0, 0, &CongestionParams::dce_tcp_rtt, false, "alpha update period"},
    {"initial_alpha_value", ParamKind::Count, 0, 1023, &CongestionParams::initial_alpha_value, false, "alpha (of 1024) when the first CNP arrives"},
    {"rate_to_set_on_first_cnp", ParamKind::Rate, 0, 0, &CongestionParams::rate_to_set_on_first_cnp, false, "rate on the first CNP (0: line rate, then cut)"},
    {"rpg_min_dec_fac", ParamKind::Count, 0, 100, &CongestionParams::rpg_min_dec_fac, false, "one cut keeps at least this percentage of the rate"},
    {"rpg_min_rate", ParamKind::Rate, 0, 0, &CongestionParams::rpg_min_rate, false, "lowest rate of a QP"},
    {"rpg_gd", ParamKind::Count, 0, 63, &CongestionParams::rpg_gd, false, "a cut removes rate x alpha / 2^rpg_gd"},
    {"rate_reduce_monitor_period", ParamKind::Time, 0, 0, &CongestionParams::rate_reduce_monitor_period, false, "at most one cut per period"},
    {"clamp_tgt_rate", ParamKind::Count, 0, 1, &CongestionParams::clamp_tgt_rate, false, "1: every cut sets the target rate to the current rate"},
    {"clamp_tgt_rate_after_time_inc", ParamKind::Count, 0, 1, &CongestionParams::clamp_tgt_rate_after_time_inc, false, "1: so does a cut after a timer increase"},
    {"rpg_time_reset", ParamKind::Time, 0, 0, &CongestionParams::rpg_time_reset, false, "rate increase timer"},
    {"rpg_byte_reset", ParamKind::Bytes, 1, 1ull << 40, &CongestionParams::rpg_byte_reset, false, "bytes sent per byte-counter increase event"},
    {"rpg_threshold", ParamKind::Count, 0, 1024, &CongestionParams::rpg_threshold, false, "increase events spent in fast recovery (F)"},
    {"rpg_ai_rate", ParamKind::Rate, 0, 0, &CongestionParams::rpg_ai_rate, false, "additive increase step of the target rate"},
    {"rpg_hai_rate", ParamKind::Rate, 0, 0, &CongestionParams::rpg_hai_rate, false, "hyper increase step of the target rate"},
    {"rpg_max_rate", ParamKind::Rate, 0, 0, &CongestionParams::rpg_max_rate, false, "rate ceiling (0: line rate)"},
    {"min_time_between_cnps", ParamKind::Time, 0, 0, &CongestionParams::min_time_between_cnps, false, "notification point: at most one CNP per QP per period"},
    {"cnp_dscp", ParamKind::Count, 0, 63, &CongestionParams::cnp_dscp, false, "DSCP of CNPs"},
    {"cnp_802p_prio", ParamKind::Count, 0, 7, &CongestionParams::cnp_802p_prio, false, "egress priority of CNPs"},
};

}  // namespace

std::span<const ParamKey<NicParams>> nic_param_keys() { return kNicKeys; }
std::span<const ParamKey<PcieParams>> pcie_param_keys() { return kPcieKeys; }
std::span<const ParamKey<CongestionParams>> congestion_param_keys() { return kCongestionKeys; }

}  // namespace rnicsim::nic
