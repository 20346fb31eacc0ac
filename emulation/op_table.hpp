// The control protocol's ops, one row each: the op, where it applies, the
// request it reads and the reply it writes, its handler (control_ops.hpp).
#pragma once

#include <cstdint>
#include <span>

#include "emulation/control_ops.hpp"

namespace rnicsim::emulation {

// Session: before any context (Hello, OpenContext). Cm: the RDMA CM's, after
// a Hello. Context: the request's first word names a context of the session.
enum class OpScope : uint8_t { Session, Cm, Context };

struct OpRow {
  verbs_proto::Op op;
  OpScope scope;
  // Reads the request, runs the handler, writes the reply if it succeeded.
  int (*run)(ControlOps& ops, Call& call);
};

std::span<const OpRow> op_table();
// The row of `op`, or null for an op the daemon does not have.
const OpRow* find_op(uint16_t op);
// Serves one request: its status (0, an errno, or kDeferred).
int dispatch(ControlOps& ops, Call& call);

}  // namespace rnicsim::emulation
