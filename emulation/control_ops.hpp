// What the daemon does for each request of the control protocol (the op table,
// op_table.hpp, says which request and reply each one reads and writes). Every
// handler returns 0 or the errno the program's verb returns.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <ostream>
#include <vector>

#include "emulation/call.hpp"
#include "emulation/rdma_cm.hpp"
#include "emulation/registry.hpp"
#include "emulation/serve_options.hpp"
#include "emulation/session.hpp"
#include "verbs_shim/protocol.hpp"
#include "verbs_shim/wire.hpp"

namespace rnicsim::emulation {

class HostNetwork;

// A SettleCq request waiting for the work in flight towards its CQ.
struct Settling {
  int fd = -1;
  size_t host = 0;
  uint32_t cqn = 0;
  std::chrono::steady_clock::time_point deadline;
};

class ControlOps {
public:
  ControlOps(const scenario::Scenario& s, const ServeOptions& o, std::ostream& out, Registry& registry,
             std::vector<std::unique_ptr<RdmaCm>>& rdma_cms, std::vector<Settling>& settling, int wake_fd)
      : scenario_(s), options_(o), out_(out), registry_(registry), rdma_cms_(rdma_cms), settling_(settling),
        wake_fd_(wake_fd) {}
  Context* context_of(const Session& s, uint32_t ctx) const { return registry_.context_of(s.fd, ctx); }
  // The RDMA CM of the session's host: its requests' handlers (op_table.cpp).
  RdmaCm& rdma_cm(const Session& s) const { return *rdma_cms_[s.host]; }
  // The hosts' network, if they have one: Hello tells a program how to join it.
  void set_network(const HostNetwork* network) { network_ = network; }

  // Session-scoped: before any context.
  int hello(Call& c, const verbs_proto::HelloReq& q, verbs_proto::DeviceInfo& info);
  int open_context(Call& c, const verbs_proto::Received& r, verbs_proto::OpenContextRep& rep);

  // Context-scoped: c.ctx is the session's context the request names.
  int close_context(Call& c, const ContextOnly&, NoReply&);
  int alloc_pd(Call& c, const ContextOnly&, verbs_proto::ObjectRep& rep);
  int dealloc_pd(Call& c, const verbs_proto::ObjectReq& q, NoReply&);
  int share_runs(Call& c, const verbs_proto::Received& r, NoReply&);
  int reg_mr(Call& c, const verbs_proto::Received& r, verbs_proto::RegMrRep& rep);
  int rereg_mr(Call& c, const verbs_proto::Received& r, verbs_proto::RegMrRep& rep);
  int dereg_mr(Call& c, const verbs_proto::ObjectReq& q, NoReply&);
  int create_cq(Call& c, const verbs_proto::CreateCqReq& q, verbs_proto::RingRep& rep);
  int destroy_cq(Call& c, const verbs_proto::ObjectReq& q, NoReply&);
  int resize_cq(Call& c, const verbs_proto::ObjectReq& q, NoReply&);
  int settle_cq(Call& c, const verbs_proto::ObjectReq& q, NoReply&);
  int create_qp(Call& c, const verbs_proto::CreateQpReq& q, verbs_proto::CreateQpRep& rep);
  int modify_qp(Call& c, const verbs_proto::ModifyQpReq& q, NoReply&);
  int query_qp(Call& c, const verbs_proto::ObjectReq& q, verbs_proto::ObjectRep& rep);
  int destroy_qp(Call& c, const verbs_proto::ObjectReq& q, NoReply&);
  int create_srq(Call& c, const verbs_proto::CreateSrqReq& q, verbs_proto::RingRep& rep);
  int modify_srq(Call& c, const verbs_proto::ObjectReq& q, NoReply&);
  int destroy_srq(Call& c, const verbs_proto::ObjectReq& q, NoReply&);
  int create_ah(Call& c, const verbs_proto::CreateAhReq& q, verbs_proto::ObjectRep& rep);
  int destroy_ah(Call& c, const verbs_proto::ObjectReq& q, NoReply&);

private:
  // The host a process is put on (see control_ops.cpp), or the number of hosts plus an errno.
  size_t host_for(pid_t pid, const std::string& want) const;
  void describe_host(const Session& s, verbs_proto::DeviceInfo& info) const;
  int register_mr(Call& c, const verbs_proto::Received& r, bool again, verbs_proto::RegMrRep& rep);
  int create_cq_ring(Context& c, const verbs_proto::CreateCqReq& q, int channel, verbs_proto::RingRep& rep);
  int to_address_vector(const Context& c, const verbs_proto::AhWire& ah, nic::AddressVector& av);

  const scenario::Scenario& scenario_;
  const ServeOptions& options_;
  std::ostream& out_;
  Registry& registry_;
  std::vector<std::unique_ptr<RdmaCm>>& rdma_cms_;
  std::vector<Settling>& settling_;
  int wake_fd_;
  const HostNetwork* network_ = nullptr;
};

}  // namespace rnicsim::emulation
