// One request of the control protocol being served, and the shapes a
// handler's request and reply take in the op table (op_table.hpp). Apart from
// the handlers, so that the RDMA CM's take the same shapes as the verbs'.
#pragma once

#include <cstddef>
#include <vector>

#include "verbs_shim/wire.hpp"

namespace rnicsim::emulation {

struct Session;
struct Context;

struct Call {
  Session& session;
  const verbs_proto::Received& request;
  unsigned char* body;     // the reply's body ...
  size_t& length;          // ... and its length
  std::vector<int>& fds;   // descriptors sent with the reply
  Context* ctx = nullptr;  // the context a context-scoped request named
};

// Request and reply types of the table that are not protocol structs.
struct NoReply {};
struct ContextOnly {};  // the request is its context (its first word) only

inline constexpr int kDeferred = -1;  // a handler's status: the reply comes later

}  // namespace rnicsim::emulation
