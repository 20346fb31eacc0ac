// The layout of work queue entries and completion queue entries in host memory.
// The host side (scenario workload drivers, the verbs shim) writes WQEs and reads
// CQEs in exactly this format; the NIC reads WQEs and writes CQEs by DMA.
// All fields are little-endian (x86 host order), except imm_data, which is kept in
// network byte order exactly as ibv_send_wr/ibv_wc carry it. Enumerator values match
// <infiniband/verbs.h>, so the shim passes them through unchanged.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <span>
#include <string_view>
#include <type_traits>

#include "packet/numbers.hpp"

namespace rnicsim::nic {

enum class WrOpcode : uint8_t {  // ibv_wr_opcode
  RdmaWrite = 0,
  RdmaWriteWithImm = 1,
  Send = 2,
  SendWithImm = 3,
  RdmaRead = 4,
  AtomicCmpSwap = 5,
  AtomicFetchAdd = 6,
  LocalInv = 7,
  BindMw = 8,
  SendWithInv = 9,
};

enum class QpType : uint8_t { Rc = 2, Uc = 3, Ud = 4 };  // ibv_qp_type

// The QP types the NIC has, once: their names, and the column each has in the
// tables with one column per type (kWrCarriage here, the receive pipeline's).
// (Name first, as the scenario reader's choice() takes its rows.)
struct QpTypeInfo {
  std::string_view name;
  QpType type;
};
inline constexpr QpTypeInfo kQpTypes[] = {{"RC", QpType::Rc}, {"UC", QpType::Uc}, {"UD", QpType::Ud}};
inline constexpr size_t kQpTypeCount = std::size(kQpTypes);
// The column of a type the NIC has (kQpTypeCount for any other value).
constexpr size_t column_of(uint32_t ibv_qp_type) {
  for (size_t i = 0; i < kQpTypeCount; ++i)
    if (static_cast<uint32_t>(kQpTypes[i].type) == ibv_qp_type) return i;
  return kQpTypeCount;
}
constexpr size_t column_of(QpType t) { return column_of(static_cast<uint32_t>(t)); }
// The transport of an ibv_qp_type value, if the NIC has it.
constexpr bool is_qp_type(uint32_t ibv_qp_type) { return column_of(ibv_qp_type) < kQpTypeCount; }

// Which transports carry which work requests (IBTA 9.8.1): the one table the
// shim (ibv_post_send refuses the others with EINVAL) and the NIC (which
// completes them with LocQpOpErr) both read. Columns those of kQpTypes: RC, UC, UD.
struct WrCarriage {
  WrOpcode wr;
  bool by[kQpTypeCount];
};
inline constexpr WrCarriage kWrCarriage[] = {
    {WrOpcode::RdmaWrite, {true, true, false}},      {WrOpcode::RdmaWriteWithImm, {true, true, false}},
    {WrOpcode::Send, {true, true, true}},            {WrOpcode::SendWithImm, {true, true, true}},
    {WrOpcode::RdmaRead, {true, false, false}},      {WrOpcode::AtomicCmpSwap, {true, false, false}},
    {WrOpcode::AtomicFetchAdd, {true, false, false}}, {WrOpcode::SendWithInv, {true, false, false}},
};
constexpr bool carries(QpType type, WrOpcode wr) {
  const size_t column = column_of(type);
  for (const WrCarriage& c : kWrCarriage)
    if (c.wr == wr) return column < kQpTypeCount && c.by[column];
  return false;
}

enum SendFlags : uint8_t {  // ibv_send_flags
  kSendFence = 1,
  kSendSignaled = 2,
  kSendSolicited = 4,
  kSendInline = 8,
};

enum class WcStatus : uint8_t {  // ibv_wc_status
  Success = 0,
  LocLenErr = 1,
  LocQpOpErr = 2,
  LocEecOpErr = 3,
  LocProtErr = 4,
  WrFlushErr = 5,
  MwBindErr = 6,
  BadRespErr = 7,
  LocAccessErr = 8,
  RemInvReqErr = 9,
  RemAccessErr = 10,
  RemOpErr = 11,
  RetryExcErr = 12,
  RnrRetryExcErr = 13,
  LocRddViolErr = 14,
  RemInvRdReqErr = 15,
  RemAbortErr = 16,
  InvEecnErr = 17,
  InvEecStateErr = 18,
  FatalErr = 19,
  RespTimeoutErr = 20,
  GeneralErr = 21,
};
// rdma-core's names (ibv_wc_status_str).
inline const char* to_string(WcStatus s) {
  constexpr const char* kNames[] = {
      "success", "local length error", "local QP operation error", "local EE context operation error",
      "local protection error", "Work Request Flushed Error", "memory management operation error",
      "bad response error", "local access error", "remote invalid request error", "remote access error",
      "remote operation error", "transport retry counter exceeded", "RNR retry counter exceeded",
      "local RDD violation error", "remote invalid RD request", "aborted error", "invalid EE context number",
      "invalid EE context state", "fatal error", "response timeout error", "general error"};
  const auto i = static_cast<size_t>(s);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

enum class WcOpcode : uint8_t {  // ibv_wc_opcode (RECV values 128, 129)
  Send = 0,
  RdmaWrite = 1,
  RdmaRead = 2,
  CompSwap = 3,
  FetchAdd = 4,
  BindMw = 5,
  LocalInv = 6,
  Recv = 128,
  RecvRdmaWithImm = 129,
};

enum WcFlags : uint8_t {  // ibv_wc_flags
  kWcGrh = 1,
  kWcWithImm = 2,
  kWcWithInv = 8,
};

enum AccessFlags : uint32_t {  // ibv_access_flags
  kAccessLocalWrite = 1,
  kAccessRemoteWrite = 2,
  kAccessRemoteRead = 4,
  kAccessRemoteAtomic = 8,
};

// One scatter/gather element.
struct Sge {
  uint64_t addr;
  uint32_t length;
  packet::Lkey lkey;
};
static_assert(sizeof(Sge) == 16);

// A WQE is a 64-byte header (control and remote segments) followed by its SGEs
// or its inline data. Its slot in the ring is a power of two from 128 to 512
// bytes, fixed per queue when the queue is made from the SGEs and inline bytes
// asked for (as mlx4 sizes its WQEs): a queue of up to four SGEs keeps the
// 128-byte slot, and UCX's five or six SGEs take 256.
inline constexpr uint32_t kWqeHeaderBytes = 64;
inline constexpr uint32_t kMinWqeStride = 128;
inline constexpr uint32_t kMaxWqeStride = 512;
inline constexpr size_t kMaxSge = (kMaxWqeStride - kWqeHeaderBytes) / sizeof(Sge);  // 28
inline constexpr size_t kMaxInline = kMaxSge * sizeof(Sge);                        // 448

// The slot size of a queue whose WQEs carry up to `sges` SGEs or `inline_bytes`
// of inline data (both within kMaxSge and kMaxInline).
constexpr uint32_t wqe_stride(uint32_t sges, uint32_t inline_bytes) {
  const uint32_t body = std::max(sges * static_cast<uint32_t>(sizeof(Sge)), inline_bytes);
  return std::max(kMinWqeStride, std::bit_ceil(kWqeHeaderBytes + body));
}
// What a slot of `stride` bytes holds: SGEs, or bytes of inline data.
constexpr uint32_t slot_sges(uint32_t stride) { return (stride - kWqeHeaderBytes) / sizeof(Sge); }
constexpr uint32_t slot_inline(uint32_t stride) { return stride - kWqeHeaderBytes; }
static_assert(wqe_stride(4, 64) == 128 && wqe_stride(5, 0) == 256 && wqe_stride(kMaxSge, 0) == kMaxWqeStride);

// A send WQE as the NIC parses it. In the ring it takes the first `stride`
// bytes of this layout: the header, then up to slot_sges(stride) SGEs or
// slot_inline(stride) bytes of inline data.
struct SendWqe {
  uint64_t wr_id;        //  0
  WrOpcode opcode;       //  8
  uint8_t send_flags;    //  9  SendFlags
  uint8_t num_sge;       // 10
  uint8_t reserved0;     // 11
  uint32_t imm_data;     // 12  network order; the rkey to invalidate for SendWithInv
  uint64_t remote_addr;  // 16
  packet::Rkey rkey;     // 24
  uint32_t inline_len;   // 28  bytes of inline data (kSendInline)
  uint64_t compare_add;  // 32  atomics
  uint64_t swap;         // 40  atomics
  packet::Qpn ud_remote_qpn;    // 48  UD destination
  packet::Qkey ud_remote_qkey;  // 52
  uint32_t ud_ah;           // 56  address handle index
  uint32_t reserved1;       // 60
  union {
    std::array<Sge, kMaxSge> sge{};               // 64
    std::array<std::byte, kMaxInline> inline_data;  // 64
  };
};
static_assert(sizeof(SendWqe) == kMaxWqeStride);
static_assert(offsetof(SendWqe, remote_addr) == 16);
static_assert(offsetof(SendWqe, ud_remote_qpn) == 48);
static_assert(offsetof(SendWqe, sge) == kWqeHeaderBytes);
static_assert(std::is_trivially_copyable_v<SendWqe>);  // copied into and out of rings as bytes

// A receive WQE, laid out in its slot as a send WQE is.
struct RecvWqe {
  uint64_t wr_id;     //  0
  uint8_t num_sge;    //  8
  uint8_t reserved[55];
  std::array<Sge, kMaxSge> sge;  // 64
};
static_assert(sizeof(RecvWqe) == kMaxWqeStride);
static_assert(offsetof(RecvWqe, sge) == kWqeHeaderBytes);

// The bytes of its slot a send WQE fills, in 64-byte units. 128 for up to four SGEs.
inline uint32_t wqe_bytes(const SendWqe& w) {
  const uint32_t body = (w.send_flags & kSendInline) ? w.inline_len : w.num_sge * static_cast<uint32_t>(sizeof(Sge));
  const uint32_t used = kWqeHeaderBytes + std::min<uint32_t>(body, kMaxInline);
  return std::max(kMinWqeStride, (used + 63) / 64 * 64);
}

// What a BlueFlame write carries: the WQE in the NIC's own format, not its ring
// slot. A ConnectX send WQE is a 16-byte control segment, a UD datagram
// segment (48 bytes), the work request's own segments (below), then a 16-byte
// data segment per SGE, or inline data behind a 4-byte header, padded to 16;
// mlx5 writes it rounded up to whole 64-byte lines (rdma-core providers/mlx5,
// post_send: align(size * 16, 64)). An 8-byte inline WRITE, a one-SGE WRITE,
// READ, SEND and an atomic are one line; a UD SEND is two.
struct WrSegments {
  WrOpcode wr;
  uint8_t bytes;  // a remote-address segment (16) for RDMA; an atomic segment (16) after it for atomics
};
inline constexpr WrSegments kWrSegments[] = {
    {WrOpcode::RdmaWrite, 16},      {WrOpcode::RdmaWriteWithImm, 16}, {WrOpcode::Send, 0},
    {WrOpcode::SendWithImm, 0},     {WrOpcode::RdmaRead, 16},         {WrOpcode::AtomicCmpSwap, 32},
    {WrOpcode::AtomicFetchAdd, 32}, {WrOpcode::SendWithInv, 0},
};
inline constexpr uint32_t kControlSegmentBytes = 16, kDatagramSegmentBytes = 48, kDataSegmentBytes = 16;
inline constexpr uint32_t kInlineHeaderBytes = 4;
inline uint32_t blueflame_bytes(const SendWqe& w, QpType type) {
  uint32_t bytes = kControlSegmentBytes + (type == QpType::Ud ? kDatagramSegmentBytes : 0);
  for (const WrSegments& s : kWrSegments)
    if (s.wr == w.opcode) bytes += s.bytes;
  bytes += (w.send_flags & kSendInline) ? (kInlineHeaderBytes + w.inline_len + 15) / 16 * 16
                                        : w.num_sge * kDataSegmentBytes;
  return (bytes + 63) / 64 * 64;
}

// A WQE read from its slot (`slot.size()` bytes, the queue's stride or only its
// header): what the slot does not hold reads as zero.
template <class W>
W load_wqe(std::span<const std::byte> slot) {
  W w{};
  std::memcpy(&w, slot.data(), std::min(slot.size(), sizeof(W)));
  return w;
}
// Writes a WQE into a slot of `stride` bytes.
template <class W>
void store_wqe(std::byte* slot, const W& w, uint32_t stride) {
  std::memcpy(slot, &w, std::min<size_t>(stride, sizeof(W)));
}

// A completion queue entry: 64 bytes. `owner` flips on every pass over the ring:
// an entry is valid when owner == ((index / entries) & 1) ^ 1, so a zeroed ring
// holds no valid entry.
struct Cqe {
  uint64_t wr_id;       //  0
  WcStatus status;      //  8
  WcOpcode opcode;      //  9
  uint8_t wc_flags;     // 10  WcFlags
  uint8_t owner;        // 11
  uint32_t byte_len;    // 12
  uint32_t imm_data;    // 16  network order (or the invalidated rkey)
  packet::Qpn qp_num;   // 20
  packet::Qpn src_qp;   // 24
  uint16_t slid;        // 28
  uint8_t sl;           // 30
  uint8_t dlid_path_bits;  // 31
  uint16_t pkey_index;  // 32
  uint16_t reserved0;   // 34
  uint32_t vendor_err;  // 36
  uint8_t reserved1[24];
};
static_assert(sizeof(Cqe) == 64);
static_assert(offsetof(Cqe, byte_len) == 12);
static_assert(offsetof(Cqe, vendor_err) == 36);
static_assert(std::is_trivially_copyable_v<Cqe>);

inline constexpr uint8_t cqe_owner_for(uint64_t index, uint32_t entries) {
  return static_cast<uint8_t>(((index / entries) & 1) ^ 1);
}

template <class T>
T load_struct(std::span<const std::byte> bytes) {
  T v;
  std::memcpy(&v, bytes.data(), sizeof(T));
  return v;
}
template <class T>
std::span<const std::byte> bytes_of(const T& v) {
  return {reinterpret_cast<const std::byte*>(&v), sizeof(T)};
}

}  // namespace rnicsim::nic
