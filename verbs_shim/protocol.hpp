// The emulation control protocol between the verbs shim (in the program) and the
// daemon (rnicsim serve), and the layout of the memory they share: requests
// and replies on a Unix socket for the control path (MsgHeader), rings and
// doorbell records in a shared segment for the data path (SegmentHeader).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace rnicsim::verbs_proto {

inline constexpr uint32_t kMagic = 0x524E4943;  // "RNIC"
inline constexpr uint16_t kVersion = 7;

// Environment the launcher sets for the program.
inline constexpr const char* kSocketEnv = "RNICSIM_SOCKET";
inline constexpr const char* kHostEnv = "RNICSIM_HOST";
// How the daemon reaches registered memory: auto (the default), process
// (process_vm_readv/writev only) or shared (memory shared with the daemon).
inline constexpr const char* kHostMemoryEnv = "RNICSIM_HOST_MEMORY";

enum class Op : uint16_t {
  Hello = 1,      // HelloReq -> DeviceInfo; claims a host for the process
  OpenContext,    // OpenContextReq (+ async event pipe) -> OpenContextRep (+ memfd, wake eventfd)
  CloseContext,   // ObjectReq
  AllocPd,        // ObjectReq(ctx) -> ObjectRep
  DeallocPd,      // ObjectReq
  RegMr,          // RegMrReq -> RegMrRep
  DeregMr,        // ObjectReq(lkey)
  CreateCq,       // CreateCqReq (+ completion channel pipe) -> RingRep
  DestroyCq,      // ObjectReq
  CreateQp,       // CreateQpReq -> CreateQpRep
  ModifyQp,       // ModifyQpReq
  QueryQp,        // ObjectReq -> ObjectRep(state)
  DestroyQp,      // ObjectReq
  CreateSrq,      // CreateSrqReq -> RingRep
  ModifySrq,      // ObjectReq(srqn, value = limit)
  DestroySrq,     // ObjectReq
  CreateAh,       // CreateAhReq -> ObjectRep(index)
  ReregMr,        // RegMrReq with lkey: the region keeps its keys
  SettleCq,       // ObjectReq(cqn): answered once no completion is on its way to the CQ
  ResizeCq,       // ObjectReq(cqn, value = CQEs it holds)
  ShareRuns,      // ShareRunsReq (+ one memfd per run): pages of the next RegMr/ReregMr
  DestroyAh,      // ObjectReq(index)
  // The RDMA CM (cm_protocol.hpp), on a session of librdmacm's own after its Hello.
  CmOpenChannel,   // (+ the write end of the channel's pipe) -> CmChannelRep
  CmCloseChannel,  // CmIdReq(id = channel)
  CmCreateId,      // CmCreateIdReq -> ObjectRep(id)
  CmDestroyId,     // CmIdReq
  CmMigrateId,     // CmIdReq(value = channel)
  CmBind,          // CmIdReq(src) -> CmAddrRep
  CmResolveAddr,   // CmIdReq(src, dst, value = timeout ms); then ADDR_RESOLVED or ADDR_ERROR
  CmResolveRoute,  // CmIdReq(value = timeout ms); then ROUTE_RESOLVED
  CmListen,        // CmIdReq(value = backlog)
  CmConnect,       // CmConnReq; then CONNECT_RESPONSE, REJECTED or UNREACHABLE (UD: ESTABLISHED)
  CmAccept,        // CmConnReq
  CmReject,        // CmConnReq (private data only)
  CmEstablish,     // CmIdReq: active side, the QP is up: the RTU; passive side: traffic came first
  CmDisconnect,    // CmIdReq; then DISCONNECTED
  CmInitQpAttr,    // CmIdReq(value = ibv_qp_state) -> CmQpAttrRep
  CmSetOption,     // CmOptionReq (rdma_set_option at level RDMA_OPTION_ID)
};

// The ops that let go of an object (they succeed on a lost device).
inline bool releases(Op op) {
  switch (op) {
    case Op::CloseContext: case Op::DeallocPd: case Op::DeregMr: case Op::DestroyCq:
    case Op::DestroyQp: case Op::DestroySrq: case Op::DestroyAh: case Op::CmCloseChannel:
    case Op::CmDestroyId: return true;
    default: return false;
  }
}

// Control path: a SOCK_SEQPACKET Unix socket, one connection per process. Every
// message is a MsgHeader and one fixed-size body; file descriptors travel as
// SCM_RIGHTS. The shim sends a request and waits for the reply (status 0 or an
// errno); the daemon never sends anything unasked.
struct MsgHeader {
  uint32_t magic = kMagic;
  uint16_t version = kVersion;
  uint16_t op = 0;
  uint32_t length = 0;  // of the body that follows
  int32_t status = 0;   // replies: 0 or an errno
};

// ibv_port_attr.link_layer values.
inline constexpr uint8_t kLinkLayerIb = 1;
inline constexpr uint8_t kLinkLayerEthernet = 2;

// The link-local GID of a RoCE port with MAC `m` (fe80::/64 and the MAC's
// EUI-64): the first entries of the shim's GID table, and a GID the daemon
// resolves to the host with that MAC.
inline std::array<uint8_t, 16> link_local_gid(const std::array<uint8_t, 6>& m) {
  return {0xfe, 0x80, 0, 0, 0, 0, 0, 0, static_cast<uint8_t>(m[0] ^ 2), m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]};
}

struct HelloReq {
  int32_t pid = 0;
  char host[64] = {};  // empty: the first free host
  // A word of the process and its value: the daemon tries to read it with
  // process_vm_readv and says in DeviceInfo whether it could.
  uint64_t probe_addr = 0;
  uint64_t probe_value = 0;
};

struct DeviceInfo {
  char host[64] = {};
  char device[64] = {};
  uint64_t node_guid = 0;  // network byte order, as ibv_get_device_guid returns it
  uint64_t rate_bps = 0;
  uint32_t mtu = 0;  // bytes
  uint16_t lid = 0;
  uint8_t link_layer = kLinkLayerEthernet;
  uint8_t gid_type_v2 = 1;  // RoCEv2 GIDs (Ethernet)
  uint8_t gid[16] = {};
  uint8_t mac[6] = {};
  int32_t daemon_pid = 0;
  uint32_t process_memory = 0;  // 1: the daemon read the probe word (process_vm_readv works)
  // The host's network (emulation/host_network), 0 where it has none: processes
  // whose user and network namespaces a program on the host joins, and the
  // name of its interface there.
  int32_t user_ns_pid = 0;
  int32_t net_ns_pid = 0;
  char netdev[16] = {};
};

struct OpenContextReq {
  uint32_t reserved = 0;
};
struct OpenContextRep {
  uint32_t ctx = 0;
  uint32_t reserved = 0;
  uint64_t segment_bytes = 0;
};

// A request naming one object (and the context it belongs to), with a value.
struct ObjectReq {
  uint32_t ctx = 0;
  uint32_t id = 0;
  uint64_t value = 0;
};
struct ObjectRep {
  uint32_t id = 0;
  uint32_t value = 0;
};

struct RegMrReq {
  uint32_t ctx = 0, pd = 0;
  uint64_t addr = 0, length = 0, iova = 0;
  uint32_t access = 0;
  uint32_t lkey = 0;  // ReregMr: the region
  // The runs of shared pages the ShareRuns requests just before this one sent
  // (0: the daemon reaches the region with process_vm_readv/writev).
  uint32_t shared_runs = 0;
  uint32_t reserved = 0;
};

// Shared host memory (RNICSIM_HOST_MEMORY=shared, or auto where the daemon
// cannot use process_vm_readv): the shim has moved a region's pages onto
// memfds mapped MAP_SHARED at the same addresses, and sends them, up to
// kRunsPerMessage runs (one descriptor each) per ShareRuns request. A run:
// page-aligned `length` bytes at program address `addr`, at `offset` in its
// memfd (sealed against shrinking).
inline constexpr uint32_t kRunsPerMessage = 4;
struct MemoryRun {
  uint64_t addr = 0, length = 0, offset = 0;
};
struct ShareRunsReq {
  uint32_t ctx = 0;
  uint32_t count = 0;
  MemoryRun runs[kRunsPerMessage] = {};
};
struct RegMrRep {
  uint32_t lkey = 0, rkey = 0;
};

// The CQEs a CQ created or resized for `cqe` holds before it overruns: cqe + 1
// rounded up to a power of two, as hardware providers size their rings (the CQ
// reports one less as its cqe), and never more than its ring's `entries`.
inline uint32_t cq_slots(uint64_t cqe, uint32_t entries) {
  uint64_t size = 1;
  while (size < cqe + 1) size <<= 1;
  return static_cast<uint32_t>(std::min<uint64_t>(size, entries));
}

struct CreateCqReq {
  uint32_t ctx = 0;
  uint32_t entries = 0;
  uint32_t has_channel = 0;  // a pipe's write end came with the request
  uint32_t cookie = 0;       // written to the channel on each completion event
};

// Where a queue's ring and doorbell record are in the context's segment.
struct RingRep {
  uint32_t id = 0;  // CQN or SRQ number
  uint32_t entries = 0;
  uint64_t ring_offset = 0;
  uint32_t doorbell = 0;  // index of the doorbell record
  uint32_t stride = 0;    // an SRQ's bytes per WQE slot (nic::wqe_stride); 0 for a CQ
};

struct CreateQpReq {
  uint32_t ctx = 0, pd = 0, send_cq = 0, recv_cq = 0, srq = 0;
  uint32_t qp_type = 0;  // ibv_qp_type
  uint32_t sq_sig_all = 0;
  uint32_t max_send_wr = 0, max_recv_wr = 0, max_send_sge = 0, max_recv_sge = 0, max_inline = 0;
};
struct CreateQpRep {
  uint32_t qpn = 0;
  uint32_t sq_entries = 0, rq_entries = 0;
  uint32_t doorbell = 0;
  uint64_t sq_offset = 0, rq_offset = 0;
  uint32_t sq_stride = 0, rq_stride = 0;  // bytes per WQE slot (nic::wqe_stride)
};

// An address vector as ibv_ah_attr gives it.
struct AhWire {
  uint8_t dgid[16] = {};
  uint32_t flow_label = 0;
  uint16_t dlid = 0;
  uint8_t sgid_index = 0, hop_limit = 0, traffic_class = 0, sl = 0, is_global = 0, port_num = 0;
};

struct ModifyQpReq {
  uint32_t ctx = 0, qpn = 0;
  uint32_t mask = 0;  // ibv_qp_attr_mask
  uint32_t state = 0, cur_state = 0;
  uint32_t path_mtu = 0;  // ibv_mtu
  uint32_t qkey = 0, rq_psn = 0, sq_psn = 0, dest_qpn = 0, access = 0;
  uint16_t pkey_index = 0;
  uint8_t port_num = 0, max_rd_atomic = 0, max_dest_rd_atomic = 0, min_rnr_timer = 0, timeout = 0, retry_cnt = 0,
          rnr_retry = 0, reserved[3] = {};
  AhWire ah;
};

struct CreateSrqReq {
  uint32_t ctx = 0, pd = 0, max_wr = 0, max_sge = 0, limit = 0, reserved = 0;
};

struct CreateAhReq {
  uint32_t ctx = 0, pd = 0;
  AhWire ah;
};

// --- the shared segment ---
// One per opened device context (a memfd the daemon creates): a header page,
// doorbell records, then the SQ/RQ/SRQ rings and CQ rings in the WQE/CQE
// format of nic_model/queue_format.hpp. The shim writes WQEs and publishes
// producer indices in doorbell records; the daemon writes CQEs. Neither
// posting nor polling makes a system call; the shim writes the wake-up eventfd
// only when the daemon has said it sleeps.

inline constexpr uint64_t kSegmentBytes = uint64_t{1} << 30;  // sparse: only touched pages cost memory
inline constexpr uint64_t kDoorbellOffset = 4096;
inline constexpr uint32_t kDoorbellRecords = 4096;
inline constexpr uint64_t kRingsOffset = kDoorbellOffset + uint64_t{kDoorbellRecords} * 64;

struct SegmentHeader {
  uint32_t magic;
  uint32_t version;
  // The daemon sets this before it sleeps; a shim that publishes a producer index
  // and then sees it set writes the wake-up eventfd.
  std::atomic<uint32_t> daemon_sleeping;
  // The daemon sets this while programs spin on every CPU (a yield of its own
  // waited for a whole scheduler slice). A shim then does not give its CPU away
  // when it polls a CQ empty: that would hand a slice to a spinner, while the
  // daemon, which sleeps then, is woken by the doorbell.
  std::atomic<uint32_t> cpus_contended;
};

// One cache line per queue. QPs use sq_producer and rq_producer, SRQs
// sq_producer, CQs the consumer and arm fields. The daemon zeroes a record
// when it hands it out.
struct alignas(64) DoorbellRecord {
  std::atomic<uint64_t> sq_producer;
  std::atomic<uint64_t> rq_producer;
  std::atomic<uint64_t> arm_seen;      // the CQEs the program could see when it armed (index after the last)
  std::atomic<uint32_t> arm_seq;       // +1 per ibv_req_notify_cq
  std::atomic<uint32_t> arm_solicited;
  std::atomic<uint64_t> cq_consumer;   // the CQ's consumer index, published after each poll
};
static_assert(sizeof(DoorbellRecord) == 64);
static_assert(std::atomic<uint64_t>::is_always_lock_free);

}  // namespace rnicsim::verbs_proto
