// What a workload's requester posts, one row per op: perftest's verbs
// (ib_write_*, ib_send_*, ib_read_*, ib_atomic_* with -A FETCH_AND_ADD or
// CMP_AND_SWAP). The parser, the perftest and flow workloads, and the report
// read the facts of an op from its row; adding an op is adding a row.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "nic_model/queue_format.hpp"

namespace rnicsim::scenario {

enum class WorkloadOp : uint8_t { Write, WriteImm, Send, SendImm, Read, FetchAdd, CmpSwap };

// The shape of its work request: data to the peer (WRITE, SEND), data from
// it (READ), or 8 bytes swapped or added at the peer (atomics).
enum class OpShape : uint8_t { Message, Read, Atomic };

struct WorkloadOpRow {
  WorkloadOp op;
  std::string_view name;   // the scenario's word for it
  std::string_view alias;  // another word the scenario accepts ("" if none)
  nic::WrOpcode opcode;    // the work request that carries one message
  OpShape shape;
  bool needs_recv;  // the responder's host sees a receive completion for each message
  bool immediate;   // carries immediate data
  bool can_inline;  // its data may go inline in the WQE (perftest's -I)
  bool in_flows;    // a flow may use it
};

// clang-format off
inline constexpr WorkloadOpRow kWorkloadOps[] = {
  //  op                     name         alias     opcode                            shape             recv   imm    inline flows
  {WorkloadOp::Write,     "write",     "",       nic::WrOpcode::RdmaWrite,        OpShape::Message, false, false, true,  true},
  {WorkloadOp::WriteImm,  "write_imm", "",       nic::WrOpcode::RdmaWriteWithImm, OpShape::Message, true,  true,  true,  true},
  {WorkloadOp::Send,      "send",      "",       nic::WrOpcode::Send,             OpShape::Message, true,  false, true,  true},
  {WorkloadOp::SendImm,   "send_imm",  "",       nic::WrOpcode::SendWithImm,      OpShape::Message, true,  true,  false, false},
  {WorkloadOp::Read,      "read",      "",       nic::WrOpcode::RdmaRead,         OpShape::Read,    false, false, false, true},
  {WorkloadOp::FetchAdd,  "fetch_add", "atomic", nic::WrOpcode::AtomicFetchAdd,   OpShape::Atomic,  false, false, false, false},
  {WorkloadOp::CmpSwap,   "cmp_swap",  "",       nic::WrOpcode::AtomicCmpSwap,    OpShape::Atomic,  false, false, false, false},
};
// clang-format on

constexpr const WorkloadOpRow& op_row(WorkloadOp op) {
  for (const WorkloadOpRow& r : kWorkloadOps)
    if (r.op == op) return r;
  return kWorkloadOps[0];  // every op has a row (static_assert below)
}
static_assert(std::size(kWorkloadOps) == static_cast<size_t>(WorkloadOp::CmpSwap) + 1);

inline const char* to_string(WorkloadOp op) { return op_row(op).name.data(); }
inline bool is_atomic(WorkloadOp op) { return op_row(op).shape == OpShape::Atomic; }
inline bool needs_recv(WorkloadOp op) { return op_row(op).needs_recv; }
inline bool is_send(WorkloadOp op) {
  const nic::WrOpcode o = op_row(op).opcode;
  return o == nic::WrOpcode::Send || o == nic::WrOpcode::SendWithImm;
}

// The words the scenario's `op` key takes (each row's alias first, then its
// name), or a flow's (rows a flow may use): (word, op) pairs for a choice.
template <bool kFlowsOnly>
constexpr auto op_words() {
  constexpr size_t n = [] {
    size_t k = 0;
    for (const WorkloadOpRow& r : kWorkloadOps)
      if (!kFlowsOnly || r.in_flows) k += 1 + (!kFlowsOnly && !r.alias.empty());
    return k;
  }();
  std::array<std::pair<std::string_view, WorkloadOp>, n> words{};
  size_t i = 0;
  for (const WorkloadOpRow& r : kWorkloadOps) {
    if (kFlowsOnly && !r.in_flows) continue;
    if (!kFlowsOnly && !r.alias.empty()) words[i++] = {r.alias, r.op};
    words[i++] = {r.name, r.op};
  }
  return words;
}

}  // namespace rnicsim::scenario
