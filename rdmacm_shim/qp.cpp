// The verbs objects of an id: its QP (and the CQs and completion channels the
// library makes for it when the program gives none, their context the id, as
// rdma_get_send_comp and friends expect), its SRQ, the QP steps upstream
// librdmacm makes itself with the CM's rdma_init_qp_attr, and the endpoint
// calls (rdma_create_ep, rdma_destroy_ep) built on them.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "rdmacm_shim/cm.hpp"
#include "rdmacm_shim/devices.hpp"

namespace rnicsim::rdmacm {
namespace {

int fail(int e) {
  errno = e;
  return -1;
}

void destroy_cqs(rdma_cm_id* id) {
  if (id->recv_cq != nullptr && id->recv_cq != id->send_cq) ibv_destroy_cq(id->recv_cq);
  if (id->send_cq != nullptr) ibv_destroy_cq(id->send_cq);
  if (id->recv_cq_channel != nullptr && id->recv_cq_channel != id->send_cq_channel)
    ibv_destroy_comp_channel(id->recv_cq_channel);
  if (id->send_cq_channel != nullptr) ibv_destroy_comp_channel(id->send_cq_channel);
  id->send_cq = id->recv_cq = nullptr;
  id->send_cq_channel = id->recv_cq_channel = nullptr;
}

// A CQ with a completion channel of its own, its context the id (upstream's ucma_create_cqs).
bool make_cq(rdma_cm_id* id, int entries, ibv_cq** cq, ibv_comp_channel** channel) {
  *channel = ibv_create_comp_channel(id->verbs);
  if (*channel == nullptr) return false;
  *cq = ibv_create_cq(id->verbs, std::max(entries, 1), id, *channel, 0);
  return *cq != nullptr;
}

bool make_cqs(Id& i, int send_entries, int recv_entries) {
  rdma_cm_id* id = &i.id;
  if ((recv_entries > 0 && !make_cq(id, recv_entries, &id->recv_cq, &id->recv_cq_channel)) ||
      (send_entries > 0 && !make_cq(id, send_entries, &id->send_cq, &id->send_cq_channel))) {
    const int err = errno;
    destroy_cqs(id);
    errno = err;
    return false;
  }
  i.own_cqs = true;
  return true;
}

int init_attr(Id& i, ibv_qp_state state, ibv_qp_attr& attr, int& mask) {
  attr = ibv_qp_attr{};
  attr.qp_state = state;
  return rdma_init_qp_attr(&i.id, &attr, &mask);
}

// UD QPs go to RTS at once; connected ones to INIT (upstream's ucma_init_*_qp).
int bring_up(Id& i) {
  ibv_qp_attr attr;
  int mask = 0;
  if (init_attr(i, IBV_QPS_INIT, attr, mask) != 0 || ibv_modify_qp(i.id.qp, &attr, mask) != 0) return -1;
  if (i.id.qp_type != IBV_QPT_UD) return 0;
  for (ibv_qp_state s : {IBV_QPS_RTR, IBV_QPS_RTS})
    if (init_attr(i, s, attr, mask) != 0 || ibv_modify_qp(i.id.qp, &attr, mask) != 0) return -1;
  return 0;
}

}  // namespace

int modify_qp_to(Id& i, ibv_qp_state state, int responder_resources, int initiator_depth) {
  if (i.id.qp == nullptr) return 0;
  ibv_qp_attr attr;
  int mask = 0;
  if (state == IBV_QPS_RTR) {
    // The INIT attributes first: the access rights follow the negotiated depths.
    if (init_attr(i, IBV_QPS_INIT, attr, mask) != 0) return errno;
    if (ibv_modify_qp(i.id.qp, &attr, mask) != 0) return errno;
  }
  if (init_attr(i, state, attr, mask) != 0) return errno;
  if (responder_resources >= 0 && (mask & IBV_QP_MAX_DEST_RD_ATOMIC) != 0)
    attr.max_dest_rd_atomic = static_cast<uint8_t>(responder_resources);
  if (initiator_depth >= 0 && (mask & IBV_QP_MAX_QP_RD_ATOMIC) != 0)
    attr.max_rd_atomic = static_cast<uint8_t>(initiator_depth);
  const int rc = ibv_modify_qp(i.id.qp, &attr, mask);
  return rc == 0 ? 0 : (errno = rc, rc);
}

int modify_qp_err(Id& i) {
  if (i.id.qp == nullptr) return 0;
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  return ibv_modify_qp(i.id.qp, &attr, IBV_QP_STATE);
}

}  // namespace rnicsim::rdmacm

using namespace rnicsim::rdmacm;

extern "C" {

int rdma_init_qp_attr(struct rdma_cm_id* id, struct ibv_qp_attr* qp_attr, int* qp_attr_mask) {
  if (id == nullptr || qp_attr == nullptr || qp_attr_mask == nullptr) return fail(EINVAL);
  proto::CmIdReq q;
  q.id = of(id)->number;
  q.value = qp_attr->qp_state;
  proto::CmQpAttrRep rep;
  if (cm_call(proto::Op::CmInitQpAttr, &q, sizeof q, &rep, sizeof rep) != 0) return -1;
  *qp_attr = ibv_qp_attr{};
  qp_attr->qp_state = static_cast<ibv_qp_state>(rep.state);
  qp_attr->path_mtu = static_cast<ibv_mtu>(rep.path_mtu);
  qp_attr->qkey = rep.qkey;
  qp_attr->rq_psn = rep.rq_psn;
  qp_attr->sq_psn = rep.sq_psn;
  qp_attr->dest_qp_num = rep.dest_qpn;
  qp_attr->qp_access_flags = rep.access;
  qp_attr->pkey_index = rep.pkey_index;
  qp_attr->port_num = rep.port_num;
  qp_attr->max_rd_atomic = rep.max_rd_atomic;
  qp_attr->max_dest_rd_atomic = rep.max_dest_rd_atomic;
  qp_attr->min_rnr_timer = rep.min_rnr_timer;
  qp_attr->timeout = rep.timeout;
  qp_attr->retry_cnt = rep.retry_cnt;
  qp_attr->rnr_retry = rep.rnr_retry;
  ibv_ah_attr& a = qp_attr->ah_attr;
  a.is_global = rep.ah.is_global;
  std::memcpy(a.grh.dgid.raw, rep.ah.dgid, 16);
  a.grh.flow_label = rep.ah.flow_label;
  a.grh.sgid_index = rep.ah.sgid_index;
  a.grh.hop_limit = rep.ah.hop_limit;
  a.grh.traffic_class = rep.ah.traffic_class;
  a.dlid = rep.ah.dlid;
  a.sl = rep.ah.sl;
  a.port_num = rep.ah.port_num;
  *qp_attr_mask = static_cast<int>(rep.mask);
  return 0;
}

int rdma_create_qp_ex(struct rdma_cm_id* id, struct ibv_qp_init_attr_ex* attr) {
  if (id == nullptr || attr == nullptr || id->verbs == nullptr) return fail(EINVAL);
  Id& i = *of(id);
  if ((attr->comp_mask & IBV_QP_INIT_ATTR_PD) == 0 || attr->pd == nullptr) {
    attr->pd = id->pd != nullptr ? id->pd : default_pd(id->verbs);
    attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
  }
  if (attr->pd == nullptr || attr->pd->context != id->verbs) return fail(EINVAL);
  const bool made = attr->send_cq == nullptr || attr->recv_cq == nullptr;
  if (made && !make_cqs(i, attr->send_cq == nullptr ? static_cast<int>(attr->cap.max_send_wr) : 0,
                        attr->recv_cq == nullptr && attr->srq == nullptr ? static_cast<int>(attr->cap.max_recv_wr) : 0))
    return -1;
  if (attr->send_cq == nullptr) attr->send_cq = id->send_cq;
  if (attr->recv_cq == nullptr) attr->recv_cq = id->recv_cq != nullptr ? id->recv_cq : id->send_cq;
  if (attr->srq == nullptr && id->srq != nullptr) attr->srq = id->srq;
  ibv_qp* qp = ibv_create_qp_ex(id->verbs, attr);
  if (qp == nullptr) {
    const int err = errno;
    if (made) destroy_cqs(id);
    return fail(err);
  }
  id->qp = qp;
  id->pd = attr->pd;
  if (bring_up(i) != 0) {
    const int err = errno;
    rdma_destroy_qp(id);
    return fail(err);
  }
  return 0;
}

int rdma_create_qp(struct rdma_cm_id* id, struct ibv_pd* pd, struct ibv_qp_init_attr* qp_init_attr) {
  if (id == nullptr || qp_init_attr == nullptr) return fail(EINVAL);
  ibv_qp_init_attr_ex ex{};
  ex.qp_context = qp_init_attr->qp_context;
  ex.send_cq = qp_init_attr->send_cq;
  ex.recv_cq = qp_init_attr->recv_cq;
  ex.srq = qp_init_attr->srq;
  ex.cap = qp_init_attr->cap;
  ex.qp_type = qp_init_attr->qp_type;
  ex.sq_sig_all = qp_init_attr->sq_sig_all;
  ex.pd = pd;
  ex.comp_mask = pd != nullptr ? IBV_QP_INIT_ATTR_PD : 0;
  const int rc = rdma_create_qp_ex(id, &ex);
  if (rc != 0) return rc;
  qp_init_attr->send_cq = ex.send_cq;
  qp_init_attr->recv_cq = ex.recv_cq;
  qp_init_attr->srq = ex.srq;
  qp_init_attr->cap = ex.cap;
  return 0;
}

void rdma_destroy_qp(struct rdma_cm_id* id) {
  if (id == nullptr || id->qp == nullptr) return;
  ibv_destroy_qp(id->qp);
  id->qp = nullptr;
  if (of(id)->own_cqs) destroy_cqs(id);
  of(id)->own_cqs = false;
}

int rdma_create_srq_ex(struct rdma_cm_id* id, struct ibv_srq_init_attr_ex* attr) {
  if (id == nullptr || attr == nullptr || id->verbs == nullptr) return fail(EINVAL);
  ibv_pd* pd = (attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) != 0 && attr->pd != nullptr ? attr->pd
               : id->pd != nullptr                                                    ? id->pd
                                                                                      : default_pd(id->verbs);
  ibv_srq_init_attr plain{};
  plain.srq_context = attr->srq_context;
  plain.attr = attr->attr;
  ibv_srq* srq = ibv_create_srq(pd, &plain);
  if (srq == nullptr) return -1;
  attr->attr = plain.attr;
  id->srq = srq;
  id->pd = pd;
  return 0;
}

int rdma_create_srq(struct rdma_cm_id* id, struct ibv_pd* pd, struct ibv_srq_init_attr* attr) {
  if (attr == nullptr) return fail(EINVAL);
  ibv_srq_init_attr_ex ex{};
  ex.srq_context = attr->srq_context;
  ex.attr = attr->attr;
  ex.pd = pd;
  ex.comp_mask = pd != nullptr ? IBV_SRQ_INIT_ATTR_PD : 0;
  const int rc = rdma_create_srq_ex(id, &ex);
  if (rc == 0) attr->attr = ex.attr;
  return rc;
}

void rdma_destroy_srq(struct rdma_cm_id* id) {
  if (id == nullptr || id->srq == nullptr) return;
  ibv_destroy_srq(id->srq);
  id->srq = nullptr;
}

// --- endpoints (synchronous ids) ---

int rdma_create_ep(struct rdma_cm_id** id, struct rdma_addrinfo* res, struct ibv_pd* pd,
                   struct ibv_qp_init_attr* qp_init_attr) {
  if (id == nullptr || res == nullptr) return fail(EINVAL);
  rdma_cm_id* cm_id = nullptr;
  if (rdma_create_id(nullptr, &cm_id, nullptr, static_cast<rdma_port_space>(res->ai_port_space)) != 0) return -1;
  Id& i = *of(cm_id);
  if (res->ai_qp_type != 0) cm_id->qp_type = static_cast<ibv_qp_type>(res->ai_qp_type);
  // The QP is of the address's type whatever the attributes say (as upstream).
  if (qp_init_attr != nullptr) qp_init_attr->qp_type = cm_id->qp_type;
  int rc = 0;
  if ((res->ai_flags & RAI_PASSIVE) != 0) {
    rc = rdma_bind_addr(cm_id, res->ai_src_addr);
    if (rc == 0 && qp_init_attr != nullptr) {
      // Its requests get a QP each (rdma_get_request), like this one.
      i.listen_qp_attr = new ibv_qp_init_attr(*qp_init_attr);
      cm_id->pd = pd;
    }
  } else {
    rc = rdma_resolve_addr(cm_id, res->ai_src_addr, res->ai_dst_addr, 2000);
    if (rc == 0) rc = rdma_resolve_route(cm_id, 2000);
    if (rc == 0 && qp_init_attr != nullptr) rc = rdma_create_qp(cm_id, pd, qp_init_attr);
  }
  if (rc != 0) {
    const int err = errno;
    rdma_destroy_id(cm_id);
    return fail(err);
  }
  *id = cm_id;
  return 0;
}

void rdma_destroy_ep(struct rdma_cm_id* id) {
  if (id == nullptr) return;
  rdma_destroy_qp(id);
  rdma_destroy_srq(id);
  rdma_destroy_id(id);
}

}  // extern "C"
