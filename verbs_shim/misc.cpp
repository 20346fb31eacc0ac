// The rest of libibverbs' public ABI: names of enum values, rate conversions,
// fork support, and the verbs this device does not have (they fail with the
// error their documentation gives), plus the provider-internal functions that
// programs linking a vendor provider (perftest links libmlx5 and libefa) need
// to find at load time.
#include <cerrno>
#include <cstdarg>

#include "verbs_shim/shim.hpp"

using namespace rnicsim::shim;

namespace {

struct RateRow {
  ibv_rate rate;
  int mult;  // of 2.5 Gb/s; 0 for the rates that are not multiples of it
  int mbps;
};
constexpr RateRow kRates[] = {
    {IBV_RATE_2_5_GBPS, 1, 2500},      {IBV_RATE_5_GBPS, 2, 5000},       {IBV_RATE_10_GBPS, 4, 10000},
    {IBV_RATE_20_GBPS, 8, 20000},      {IBV_RATE_30_GBPS, 12, 30000},    {IBV_RATE_40_GBPS, 16, 40000},
    {IBV_RATE_60_GBPS, 24, 60000},     {IBV_RATE_80_GBPS, 32, 80000},    {IBV_RATE_120_GBPS, 48, 120000},
    {IBV_RATE_14_GBPS, 0, 14062},      {IBV_RATE_56_GBPS, 0, 56250},     {IBV_RATE_112_GBPS, 0, 112500},
    {IBV_RATE_168_GBPS, 0, 168750},    {IBV_RATE_25_GBPS, 0, 25781},     {IBV_RATE_100_GBPS, 0, 103125},
    {IBV_RATE_200_GBPS, 0, 206250},    {IBV_RATE_300_GBPS, 0, 309375},   {IBV_RATE_28_GBPS, 0, 28125},
    {IBV_RATE_50_GBPS, 0, 53125},      {IBV_RATE_400_GBPS, 0, 425000},   {IBV_RATE_600_GBPS, 0, 637500},
    {IBV_RATE_800_GBPS, 0, 850000},    {IBV_RATE_1200_GBPS, 0, 1275000},
};

}  // namespace

extern "C" {

const char* ibv_wc_status_str(ibv_wc_status status) {
  if (status == IBV_WC_TM_ERR) return "TM error";
  if (status == IBV_WC_TM_RNDV_INCOMPLETE) return "TM software rendezvous";
  if (status < 0 || status > IBV_WC_GENERAL_ERR) return "unknown";
  return rnicsim::nic::to_string(static_cast<rnicsim::nic::WcStatus>(status));
}

const char* ibv_node_type_str(ibv_node_type t) {
  static constexpr const char* kNames[] = {"unknown", "InfiniBand channel adapter", "InfiniBand switch",
                                           "InfiniBand router", "iWARP NIC", "usNIC", "usNIC UDP", "unspecified"};
  return t < IBV_NODE_CA || t > IBV_NODE_UNSPECIFIED ? "unknown" : kNames[t];
}

const char* ibv_port_state_str(ibv_port_state s) {
  static constexpr const char* kNames[] = {"no state change (NOP)", "down", "init", "armed", "active",
                                           "active defer"};
  return s < IBV_PORT_NOP || s > IBV_PORT_ACTIVE_DEFER ? "unknown" : kNames[s];
}

const char* ibv_event_type_str(ibv_event_type e) {
  static constexpr const char* kNames[] = {
      "CQ error", "local work queue catastrophic error", "invalid request local work queue error",
      "local access violation work queue error", "communication established", "send queue drained",
      "path migrated", "path migration request error", "local catastrophic error", "port active", "port error",
      "LID change", "P_Key change", "SM change", "SRQ catastrophic error", "SRQ limit reached", "last WQE reached",
      "client reregistration", "GID table change", "WQ fatal"};
  return e < IBV_EVENT_CQ_ERR || e > IBV_EVENT_WQ_FATAL ? "unknown" : kNames[e];
}

int ibv_rate_to_mult(ibv_rate rate) {
  for (const RateRow& r : kRates)
    if (r.rate == rate && r.mult != 0) return r.mult;
  return -1;
}

ibv_rate mult_to_ibv_rate(int mult) {
  for (const RateRow& r : kRates)
    if (r.mult == mult && mult != 0) return r.rate;
  return IBV_RATE_MAX;
}

int ibv_rate_to_mbps(ibv_rate rate) {
  for (const RateRow& r : kRates)
    if (r.rate == rate) return r.mbps;
  return -1;
}

ibv_rate mbps_to_ibv_rate(int mbps) {
  for (const RateRow& r : kRates)
    if (r.mbps == mbps) return r.rate;
  return IBV_RATE_MAX;
}

// The DMA of this device is done by the daemon through process_vm_readv/writev,
// which a fork does not disturb, or through pages shared with it, which a
// child does not inherit once ibv_fork_init was called (MADV_DONTFORK).
int ibv_fork_init(void) {
  note_fork_init();
  return 0;
}
ibv_fork_status ibv_is_fork_initialized(void) { return IBV_FORK_UNNEEDED; }
int ibv_dontfork_range(void*, size_t) { return 0; }
int ibv_dofork_range(void*, size_t) { return 0; }

// Not on this device: multicast, object import from another process's
// context, dma-buf memory, layer-2 resolution (the daemon resolves addresses).
int ibv_attach_mcast(ibv_qp*, const ibv_gid*, uint16_t) { return EOPNOTSUPP; }
int ibv_detach_mcast(ibv_qp*, const ibv_gid*, uint16_t) { return EOPNOTSUPP; }
int ibv_resolve_eth_l2_from_gid(ibv_context*, ibv_ah_attr*, uint8_t*, uint16_t*) { return EOPNOTSUPP; }
ibv_context* ibv_import_device(int) { return fail(EOPNOTSUPP, static_cast<ibv_context*>(nullptr)); }
ibv_pd* ibv_import_pd(ibv_context*, uint32_t) { return fail(EOPNOTSUPP, static_cast<ibv_pd*>(nullptr)); }
void ibv_unimport_pd(ibv_pd*) {}
ibv_mr* ibv_import_mr(ibv_pd*, uint32_t) { return fail(EOPNOTSUPP, static_cast<ibv_mr*>(nullptr)); }
void ibv_unimport_mr(ibv_mr*) {}
ibv_dm* ibv_import_dm(ibv_context*, uint32_t) { return fail(EOPNOTSUPP, static_cast<ibv_dm*>(nullptr)); }
void ibv_unimport_dm(ibv_dm*) {}
ibv_mr* ibv_reg_dmabuf_mr(ibv_pd*, uint64_t, size_t, uint64_t, int, int) {
  return fail(EOPNOTSUPP, static_cast<ibv_mr*>(nullptr));
}

// Conversions from the kernel's command structures: there is no kernel device
// here, so nothing ever holds one of those.
void ibv_copy_qp_attr_from_kern(void*, void*) {}
void ibv_copy_ah_attr_from_kern(void*, void*) {}
void ibv_copy_path_rec_from_kern(void*, void*) {}
void ibv_copy_path_rec_to_kern(void*, void*) {}

// --- IBVERBS_PRIVATE: for providers, which never run on this library ---
// (the ibv_cmd_* commands and verbs_register_driver_NN are generated at
// configure time from the system library's exports.)
bool verbs_allow_disassociate_destroy = false;
int execute_ioctl(void*, void*) { return EOPNOTSUPP; }
unsigned int __ioctl_final_num_attrs(unsigned int, void*) { return 0; }
void __verbs_log(void*, int, const char*, ...) {}
void* _verbs_init_and_alloc_context(void*, int, size_t, size_t, uint32_t) {
  return fail(EOPNOTSUPP, static_cast<void*>(nullptr));
}
void* verbs_open_device(void*, void*) { return fail(EOPNOTSUPP, static_cast<void*>(nullptr)); }
int verbs_init_cq(void*, void*, void*, void*) { return EOPNOTSUPP; }
void verbs_set_ops(void*, const void*) {}
void verbs_uninit_context(void*) {}
int ibv_read_ibdev_sysfs_file(char*, size_t, void*, const char*, ...) { return fail(ENOENT, -1); }

}  // extern "C"
