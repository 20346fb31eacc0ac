#include "emulation/op_table.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <type_traits>

#include "emulation/rdma_cm.hpp"
#include "emulation/session.hpp"

namespace rnicsim::emulation {
namespace proto = verbs_proto;

namespace {

// The request as a handler takes it: the protocol struct the body must be
// exactly, the whole message (proto::Received), or nothing but the context.
// `serve(q, rep)` runs the handler; the reply is written if it succeeded.
template <class Req, class Rep, class Serve>
int serve_call(Call& call, Serve serve) {
  Rep rep{};
  int rc = 0;
  if constexpr (std::is_same_v<Req, proto::Received>) {
    rc = serve(call.request, rep);
  } else if constexpr (std::is_same_v<Req, ContextOnly>) {
    rc = serve(ContextOnly{}, rep);
  } else {
    Req q;
    if (!proto::body_as(call.request, q)) return EPROTO;
    rc = serve(q, rep);
  }
  if constexpr (!std::is_same_v<Rep, NoReply>) {
    if (rc == 0) {
      std::memcpy(call.body, &rep, sizeof rep);
      call.length = sizeof rep;
    }
  }
  return rc;
}

// The three kinds of handler: the daemon's verbs, the RDMA CM's on the
// session, and the RDMA CM's on the session's id the request names (EINVAL
// when it names none, as the kernel's ucma answers).
template <class Req, class Rep>
using Handler = int (ControlOps::*)(Call&, const Req&, Rep&);
template <class Req, class Rep>
using CmHandler = int (RdmaCm::*)(int session, const Req&, Rep&);
template <class Req, class Rep>
using IdHandler = int (RdmaCm::*)(RdmaCm::Id&, const Req&, Rep&);

template <class Req, class Rep, Handler<Req, Rep> F>
int run(ControlOps& ops, Call& call) {
  return serve_call<Req, Rep>(call, [&](const Req& q, Rep& rep) { return (ops.*F)(call, q, rep); });
}

template <class Req, class Rep, CmHandler<Req, Rep> F>
int run_cm(ControlOps& ops, Call& call) {
  RdmaCm& cm = ops.rdma_cm(call.session);
  return serve_call<Req, Rep>(call, [&](const Req& q, Rep& rep) { return (cm.*F)(call.session.fd, q, rep); });
}

template <class Req, class Rep, IdHandler<Req, Rep> F>
int run_id(ControlOps& ops, Call& call) {
  RdmaCm& cm = ops.rdma_cm(call.session);
  return serve_call<Req, Rep>(call, [&](const Req& q, Rep& rep) {
    RdmaCm::Id* id = cm.id_of(call.session.fd, q.id);
    return id == nullptr ? EINVAL : (cm.*F)(*id, q, rep);
  });
}

template <proto::Op O, OpScope S, class Req, class Rep, Handler<Req, Rep> F>
constexpr OpRow row() {
  return OpRow{O, S, &run<Req, Rep, F>};
}
template <proto::Op O, class Req, class Rep, CmHandler<Req, Rep> F>
constexpr OpRow cm_row() {
  return OpRow{O, OpScope::Cm, &run_cm<Req, Rep, F>};
}
template <proto::Op O, class Req, class Rep, IdHandler<Req, Rep> F>
constexpr OpRow id_row() {
  return OpRow{O, OpScope::Cm, &run_id<Req, Rep, F>};
}

using Op = proto::Op;
using S = OpScope;
using C = ControlOps;
using Cm = RdmaCm;
using Raw = proto::Received;

constexpr OpRow kOps[] = {
    row<Op::Hello, S::Session, proto::HelloReq, proto::DeviceInfo, &C::hello>(),
    row<Op::OpenContext, S::Session, Raw, proto::OpenContextRep, &C::open_context>(),
    row<Op::CloseContext, S::Context, ContextOnly, NoReply, &C::close_context>(),
    row<Op::AllocPd, S::Context, ContextOnly, proto::ObjectRep, &C::alloc_pd>(),
    row<Op::DeallocPd, S::Context, proto::ObjectReq, NoReply, &C::dealloc_pd>(),
    row<Op::RegMr, S::Context, Raw, proto::RegMrRep, &C::reg_mr>(),
    row<Op::DeregMr, S::Context, proto::ObjectReq, NoReply, &C::dereg_mr>(),
    row<Op::CreateCq, S::Context, proto::CreateCqReq, proto::RingRep, &C::create_cq>(),
    row<Op::DestroyCq, S::Context, proto::ObjectReq, NoReply, &C::destroy_cq>(),
    row<Op::CreateQp, S::Context, proto::CreateQpReq, proto::CreateQpRep, &C::create_qp>(),
    row<Op::ModifyQp, S::Context, proto::ModifyQpReq, NoReply, &C::modify_qp>(),
    row<Op::QueryQp, S::Context, proto::ObjectReq, proto::ObjectRep, &C::query_qp>(),
    row<Op::DestroyQp, S::Context, proto::ObjectReq, NoReply, &C::destroy_qp>(),
    row<Op::CreateSrq, S::Context, proto::CreateSrqReq, proto::RingRep, &C::create_srq>(),
    row<Op::ModifySrq, S::Context, proto::ObjectReq, NoReply, &C::modify_srq>(),
    row<Op::DestroySrq, S::Context, proto::ObjectReq, NoReply, &C::destroy_srq>(),
    row<Op::CreateAh, S::Context, proto::CreateAhReq, proto::ObjectRep, &C::create_ah>(),
    // The registration's runs (ShareRuns) are taken before its body is read.
    row<Op::ReregMr, S::Context, Raw, proto::RegMrRep, &C::rereg_mr>(),
    row<Op::SettleCq, S::Context, proto::ObjectReq, NoReply, &C::settle_cq>(),
    row<Op::ResizeCq, S::Context, proto::ObjectReq, NoReply, &C::resize_cq>(),
    row<Op::ShareRuns, S::Context, Raw, NoReply, &C::share_runs>(),
    row<Op::DestroyAh, S::Context, proto::ObjectReq, NoReply, &C::destroy_ah>(),
    cm_row<Op::CmOpenChannel, Raw, proto::CmChannelRep, &Cm::open_channel>(),
    cm_row<Op::CmCloseChannel, proto::CmIdReq, NoReply, &Cm::close_channel>(),
    cm_row<Op::CmCreateId, proto::CmCreateIdReq, proto::ObjectRep, &Cm::create_id>(),
    id_row<Op::CmDestroyId, proto::CmIdReq, NoReply, &Cm::destroy_id>(),
    id_row<Op::CmMigrateId, proto::CmIdReq, NoReply, &Cm::migrate_id>(),
    id_row<Op::CmBind, proto::CmIdReq, proto::CmAddrRep, &Cm::bind>(),
    id_row<Op::CmResolveAddr, proto::CmIdReq, NoReply, &Cm::resolve_addr>(),
    id_row<Op::CmResolveRoute, proto::CmIdReq, NoReply, &Cm::resolve_route>(),
    id_row<Op::CmListen, proto::CmIdReq, NoReply, &Cm::listen>(),
    id_row<Op::CmConnect, proto::CmConnReq, NoReply, &Cm::connect>(),
    id_row<Op::CmAccept, proto::CmConnReq, NoReply, &Cm::accept>(),
    id_row<Op::CmReject, proto::CmConnReq, NoReply, &Cm::reject>(),
    id_row<Op::CmEstablish, proto::CmIdReq, NoReply, &Cm::establish>(),
    id_row<Op::CmDisconnect, proto::CmIdReq, NoReply, &Cm::disconnect>(),
    id_row<Op::CmInitQpAttr, proto::CmIdReq, proto::CmQpAttrRep, &Cm::init_qp_attr>(),
    id_row<Op::CmSetOption, proto::CmOptionReq, NoReply, &Cm::set_option>(),
};

// Rows in the order of the ops' values, from Hello (1) on: row i is op i + 1.
constexpr bool in_op_order() {
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (static_cast<size_t>(kOps[i].op) != i + 1) return false;
  return true;
}
static_assert(in_op_order());

}  // namespace

std::span<const OpRow> op_table() { return kOps; }

const OpRow* find_op(uint16_t op) { return op >= 1 && op <= std::size(kOps) ? &kOps[op - 1] : nullptr; }

int dispatch(ControlOps& ops, Call& call) {
  const OpRow* row = find_op(call.request.header.op);
  if (row != nullptr && row->scope == OpScope::Session) return row->run(ops, call);
  if (row != nullptr && row->scope == OpScope::Cm) return call.session.said_hello() ? row->run(ops, call) : EPROTO;
  // Every other request names a context of this session first; so does an
  // unknown op, refused only once its context is found (EPROTO, EBADF, then
  // EOPNOTSUPP, as programs and the hostile-input tests see it).
  uint32_t ctx_id = 0;
  if (call.request.header.length < sizeof ctx_id) return EPROTO;
  std::memcpy(&ctx_id, call.request.body, sizeof ctx_id);
  call.ctx = ops.context_of(call.session, ctx_id);
  if (call.ctx == nullptr) return EBADF;
  return row == nullptr ? EOPNOTSUPP : row->run(ops, call);
}

}  // namespace rnicsim::emulation
