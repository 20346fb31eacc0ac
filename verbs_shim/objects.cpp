// The control path: PD, MR, completion channels, CQ, QP, SRQ and AH. Each verb is
// one request to the daemon, which creates the object on the host's NIC; rings
// live in the context's shared segment.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "verbs_shim/shim.hpp"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

using namespace rnicsim::shim;
namespace nic = rnicsim::nic;

namespace rnicsim::shim {
namespace {

constexpr unsigned kKnownAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                                  IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |
                                  IBV_ACCESS_HUGETLB;

// Optional access bits (relaxed ordering and the rest of their range) are
// hints a device may ignore and are taken off first; unknown required bits are
// an error; on-demand paging is not there.
int check_access(unsigned access) {
  if (access & IBV_ACCESS_ON_DEMAND) return EOPNOTSUPP;
  if (access & ~kKnownAccess) return EINVAL;
  return 0;
}

proto::AhWire to_wire(const ibv_ah_attr& a) {
  proto::AhWire w;
  std::memcpy(w.dgid, a.grh.dgid.raw, 16);
  w.flow_label = a.grh.flow_label;
  w.dlid = a.dlid;
  w.sgid_index = a.grh.sgid_index;
  w.hop_limit = a.grh.hop_limit;
  w.traffic_class = a.grh.traffic_class;
  w.sl = a.sl;
  w.is_global = a.is_global;
  w.port_num = a.port_num;
  return w;
}

// Removes a QP's completions from a CQ (the QP went to RESET), as hardware
// providers do: the entries behind them move up, keeping their order.
void clean_cq(ibv_cq* cq, uint32_t qpn) {
  auto* q = reinterpret_cast<Cq*>(cq);
  std::lock_guard<std::mutex> lock(q->poll_mutex);
  const uint32_t n = q->entries;
  const uint64_t end = q->visible_end();
  uint64_t removed = 0;
  for (uint64_t i = end; i-- > q->consumer;) {
    nic::Cqe c = q->ring[i % n];
    if (c.qp_num == packet::Qpn(qpn)) {
      ++removed;
    } else if (removed > 0) {
      c.owner = nic::cqe_owner_for(i + removed, n);
      q->ring[(i + removed) % n] = c;
    }
  }
  q->consumer += removed;
  publish_consumer(*q);
}

Cq* create_cq(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel, int comp_vector) {
  Context* c = context_of(context);
  if (cqe <= 0 || cqe > proto::kMaxCqe || comp_vector < 0 || comp_vector >= context->num_comp_vectors)
    return fail(EINVAL, nullptr);
  auto* q = new (std::nothrow) Cq;
  if (q == nullptr) return fail(ENOMEM, nullptr);
  register_cq(q);
  proto::CreateCqReq req;
  req.ctx = c->id;
  req.entries = static_cast<uint32_t>(cqe);
  req.has_channel = channel != nullptr;
  req.cookie = q->cookie;
  proto::RingRep rep;
  const int fd = channel != nullptr ? reinterpret_cast<CompChannel*>(channel)->write_fd : -1;
  if (call(proto::Op::CreateCq, &req, sizeof req, &rep, sizeof rep, channel != nullptr ? &fd : nullptr,
           channel != nullptr ? 1 : 0) != 0) {
    const int err = errno;
    unregister_cq(q);
    delete q;
    return fail(err, nullptr);
  }
  q->ctx = c;
  q->ring = reinterpret_cast<nic::Cqe*>(c->segment + rep.ring_offset);
  q->entries = rep.entries;
  q->db = c->doorbell(rep.doorbell);
  ibv_cq& cq = q->cq;
  cq.context = context;
  cq.channel = channel;
  cq.cq_context = cq_context;
  cq.handle = rep.id;
  cq.cqe = static_cast<int>(proto::cq_slots(static_cast<uint64_t>(cqe), rep.entries) - 1);
  pthread_mutex_init(&cq.mutex, nullptr);
  pthread_cond_init(&cq.cond, nullptr);
  if (channel != nullptr) {
    pthread_mutex_lock(&context->mutex);
    ++channel->refcnt;
    pthread_mutex_unlock(&context->mutex);
  }
  return q;
}

ibv_qp* create_qp(ibv_context* context, ibv_pd* pd, const ibv_qp_init_attr& in, ibv_qp_cap* cap_out) {
  Context* c = context_of(context);
  if (pd == nullptr || in.send_cq == nullptr || in.recv_cq == nullptr) return fail(EINVAL, nullptr);
  const ibv_qp_cap& cap = in.cap;
  if (cap.max_send_wr > proto::kMaxWr || cap.max_recv_wr > proto::kMaxWr || cap.max_send_sge > nic::kMaxSge ||
      cap.max_recv_sge > nic::kMaxSge || cap.max_inline_data > nic::kMaxInline)
    return fail(EINVAL, nullptr);
  proto::CreateQpReq req;
  req.ctx = c->id;
  req.pd = pd->handle;
  req.send_cq = in.send_cq->handle;
  req.recv_cq = in.recv_cq->handle;
  req.srq = in.srq != nullptr ? in.srq->handle : 0;
  req.qp_type = in.qp_type;
  req.sq_sig_all = in.sq_sig_all != 0;
  req.max_send_wr = cap.max_send_wr;
  req.max_recv_wr = in.srq != nullptr ? 0 : cap.max_recv_wr;
  req.max_send_sge = cap.max_send_sge;
  req.max_recv_sge = cap.max_recv_sge;
  req.max_inline = cap.max_inline_data;
  proto::CreateQpRep rep;
  if (call(proto::Op::CreateQp, req, rep) != 0) return nullptr;
  auto* q = new (std::nothrow) Qp;
  if (q == nullptr) return fail(ENOMEM, nullptr);
  q->ctx = c;
  q->sq = WqeSlots{reinterpret_cast<std::byte*>(c->segment + rep.sq_offset), rep.sq_entries, rep.sq_stride};
  q->rq = WqeSlots{reinterpret_cast<std::byte*>(c->segment + rep.rq_offset), rep.rq_entries, rep.rq_stride};
  q->db = c->doorbell(rep.doorbell);
  q->sq_sig_all = in.sq_sig_all != 0;
  q->cap.max_send_wr = cap.max_send_wr;
  q->cap.max_recv_wr = in.srq != nullptr ? 0 : cap.max_recv_wr;
  // What the slots hold, at least what was asked for (as a hardware provider
  // reports the sizes it rounded up to).
  q->cap.max_send_sge = nic::slot_sges(rep.sq_stride);
  q->cap.max_recv_sge = nic::slot_sges(rep.rq_stride);
  q->cap.max_inline_data = nic::slot_inline(rep.sq_stride);
  ibv_qp& qp = q->qp;
  qp.context = context;
  qp.qp_context = in.qp_context;
  qp.pd = pd;
  qp.send_cq = in.send_cq;
  qp.recv_cq = in.recv_cq;
  qp.srq = in.srq;
  qp.handle = rep.qpn;
  qp.qp_num = rep.qpn;
  qp.state = IBV_QPS_RESET;
  qp.qp_type = in.qp_type;
  pthread_mutex_init(&qp.mutex, nullptr);
  pthread_cond_init(&qp.cond, nullptr);
  register_qp(q);
  if (cap_out != nullptr) *cap_out = q->cap;
  return &qp;
}

}  // namespace

ibv_cq_ex* create_cq_ex(ibv_context* context, ibv_cq_init_attr_ex* attr) {
  // The standard completion fields; no timestamps, VLANs, flow tags or tag
  // matching (the CQE format carries none of them).
  if ((attr->wc_flags & ~uint64_t{IBV_WC_STANDARD_FLAGS}) != 0) return fail(EOPNOTSUPP, nullptr);
  if ((attr->comp_mask & ~uint32_t{IBV_CQ_INIT_ATTR_MASK_FLAGS}) != 0) return fail(EOPNOTSUPP, nullptr);
  if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
      (attr->flags & ~uint32_t{IBV_CREATE_CQ_ATTR_SINGLE_THREADED | IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN}) != 0)
    return fail(EOPNOTSUPP, nullptr);
  if (attr->cqe > static_cast<uint32_t>(proto::kMaxCqe)) return fail(EINVAL, nullptr);
  Cq* q = create_cq(context, static_cast<int>(attr->cqe), attr->cq_context, attr->channel,
                    static_cast<int>(attr->comp_vector));
  if (q == nullptr) return nullptr;
  init_cq_ex(q);
  return &q->cqx;
}

ibv_qp* create_qp_ex(ibv_context* context, ibv_qp_init_attr_ex* attr) {
  // Creation flags and a TSO header size are taken when they ask for nothing
  // (pyverbs' random attributes set the mask with 0 for a device not mlx5).
  constexpr uint32_t kSupported = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
                                  IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
  if ((attr->comp_mask & ~kSupported) != 0 || !(attr->comp_mask & IBV_QP_INIT_ATTR_PD))
    return fail(EOPNOTSUPP, nullptr);
  if (((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags != 0) ||
      ((attr->comp_mask & IBV_QP_INIT_ATTR_MAX_TSO_HEADER) && attr->max_tso_header != 0))
    return fail(EOPNOTSUPP, nullptr);
  // Memory windows, local invalidation, TSO and ATOMIC WRITE are not modelled.
  constexpr uint64_t kUnsupportedOps =
      IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_TSO | IBV_QP_EX_WITH_ATOMIC_WRITE;
  if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) && (attr->send_ops_flags & kUnsupportedOps))
    return fail(EOPNOTSUPP, nullptr);
  ibv_qp_init_attr in{};
  in.qp_context = attr->qp_context;
  in.send_cq = attr->send_cq;
  in.recv_cq = attr->recv_cq;
  in.srq = attr->srq;
  in.cap = attr->cap;
  in.qp_type = attr->qp_type;
  in.sq_sig_all = attr->sq_sig_all;
  ibv_qp* qp = create_qp(context, attr->pd, in, &attr->cap);
  if (qp != nullptr && (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
    init_qp_ex(reinterpret_cast<Qp*>(qp), attr->send_ops_flags);
  return qp;
}

}  // namespace rnicsim::shim

extern "C" {

// --- protection domains ---

ibv_pd* ibv_alloc_pd(ibv_context* context) {
  proto::ObjectReq req{context_of(context)->id, 0, 0};
  proto::ObjectRep rep;
  if (call(proto::Op::AllocPd, req, rep) != 0) return nullptr;
  auto* p = new (std::nothrow) Pd{};
  if (p == nullptr) return fail(ENOMEM, nullptr);
  p->pd.context = context;
  p->pd.handle = rep.id;
  return &p->pd;
}

int ibv_dealloc_pd(ibv_pd* pd) {
  proto::ObjectReq req{context_of(pd->context)->id, pd->handle, 0};
  if (const int rc = call(proto::Op::DeallocPd, req); rc != 0) return rc;
  delete reinterpret_cast<Pd*>(pd);
  return 0;
}

// --- memory regions ---

ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned int access) {
  access &= ~static_cast<unsigned>(IBV_ACCESS_OPTIONAL_RANGE);
  if (const int rc = check_access(access); rc != 0) return fail(rc, nullptr);
  if (length == 0 || addr == nullptr) return fail(EINVAL, nullptr);
  proto::RegMrReq req;
  req.ctx = context_of(pd->context)->id;
  req.pd = pd->handle;
  req.addr = reinterpret_cast<uint64_t>(addr);
  req.length = length;
  req.iova = (access & IBV_ACCESS_ZERO_BASED) ? 0 : iova;
  req.access = access;
  proto::RegMrRep rep;
  if (register_region(proto::Op::RegMr, req, rep) != 0) return nullptr;
  auto* m = new (std::nothrow) Mr{};
  if (m == nullptr) return fail(ENOMEM, nullptr);
  m->mr.context = pd->context;
  m->mr.pd = pd;
  m->mr.addr = addr;
  m->mr.length = length;
  m->mr.handle = rep.lkey;
  m->mr.lkey = rep.lkey;
  m->mr.rkey = rep.rkey;
  m->access = access;
  return &m->mr;
}

ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  return ibv_reg_mr_iova2(pd, addr, length, reinterpret_cast<uint64_t>(addr), static_cast<unsigned>(access));
}

ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access) {
  return ibv_reg_mr_iova2(pd, addr, length, iova, static_cast<unsigned>(access));
}

int ibv_dereg_mr(ibv_mr* mr) {
  proto::ObjectReq req{context_of(mr->context)->id, mr->lkey, 0};
  if (const int rc = call(proto::Op::DeregMr, req); rc != 0) return rc;
  delete reinterpret_cast<Mr*>(mr);
  return 0;
}

int ibv_rereg_mr(ibv_mr* mr, int flags, ibv_pd* pd, void* addr, size_t length, int access) {
  auto* m = reinterpret_cast<Mr*>(mr);
  if (flags <= 0 || (flags & ~(IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS)))
    return IBV_REREG_MR_ERR_INPUT;
  ibv_pd* new_pd = (flags & IBV_REREG_MR_CHANGE_PD) ? pd : mr->pd;
  void* new_addr = (flags & IBV_REREG_MR_CHANGE_TRANSLATION) ? addr : mr->addr;
  const size_t new_length = (flags & IBV_REREG_MR_CHANGE_TRANSLATION) ? length : mr->length;
  unsigned new_access = (flags & IBV_REREG_MR_CHANGE_ACCESS) ? static_cast<unsigned>(access) : m->access;
  new_access &= ~static_cast<unsigned>(IBV_ACCESS_OPTIONAL_RANGE);
  if (new_pd == nullptr || new_addr == nullptr || new_length == 0 || check_access(new_access) != 0) {
    errno = EINVAL;
    return IBV_REREG_MR_ERR_INPUT;
  }
  proto::RegMrReq req;
  req.ctx = context_of(mr->context)->id;
  req.pd = new_pd->handle;
  req.addr = reinterpret_cast<uint64_t>(new_addr);
  req.length = new_length;
  req.iova = req.addr;
  req.access = new_access;
  req.lkey = mr->lkey;
  proto::RegMrRep rep;
  if (register_region(proto::Op::ReregMr, req, rep) != 0) return IBV_REREG_MR_ERR_CMD;
  mr->pd = new_pd;
  mr->addr = new_addr;
  mr->length = new_length;
  m->access = new_access;
  return 0;
}

// --- completion channels and CQs ---

ibv_comp_channel* ibv_create_comp_channel(ibv_context* context) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return nullptr;
  auto* ch = new (std::nothrow) CompChannel{};
  if (ch == nullptr) return fail(ENOMEM, nullptr);
  ch->channel.context = context;
  ch->channel.fd = p[0];
  ch->channel.refcnt = 0;
  ch->write_fd = p[1];
  return &ch->channel;
}

int ibv_destroy_comp_channel(ibv_comp_channel* channel) {
  pthread_mutex_lock(&channel->context->mutex);
  const int refs = channel->refcnt;
  pthread_mutex_unlock(&channel->context->mutex);
  if (refs != 0) return EBUSY;
  auto* ch = reinterpret_cast<CompChannel*>(channel);
  close(ch->channel.fd);
  close(ch->write_fd);
  delete ch;
  return 0;
}

ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel, int comp_vector) {
  Cq* q = create_cq(context, cqe, cq_context, channel, comp_vector);
  return q != nullptr ? &q->cq : nullptr;
}

int ibv_destroy_cq(ibv_cq* cq) {
  auto* q = reinterpret_cast<Cq*>(cq);
  proto::ObjectReq req{q->ctx->id, cq->handle, 0};
  if (const int rc = call(proto::Op::DestroyCq, req); rc != 0) return rc;
  if (cq->channel != nullptr) {
    pthread_mutex_lock(&cq->context->mutex);
    --cq->channel->refcnt;
    pthread_mutex_unlock(&cq->context->mutex);
  }
  unregister_cq(q);
  wait_for_acks(cq->mutex, cq->cond, cq->comp_events_completed, q->reported.comp);
  wait_for_acks(cq->mutex, cq->cond, cq->async_events_completed, q->reported.async);
  delete q;
  return 0;
}

int ibv_resize_cq(ibv_cq* cq, int cqe) {
  auto* q = reinterpret_cast<Cq*>(cq);
  if (cqe <= 0 || cqe > proto::kMaxCqe) return EINVAL;
  // The ring does not move: a CQ can shrink or grow within the ring it has.
  if (static_cast<uint32_t>(cqe) >= q->entries) return EINVAL;
  // Not below the completions the CQ holds once the work already posted
  // towards it has completed (the daemon answers when nothing is in flight).
  proto::ObjectReq settle{q->ctx->id, cq->handle, 0};
  if (const int rc = call(proto::Op::SettleCq, settle); rc != 0) return rc;
  {
    std::lock_guard<std::mutex> lock(q->poll_mutex);
    if (q->visible_end() - q->consumer > static_cast<uint64_t>(cqe)) return EINVAL;
  }
  proto::ObjectReq resize{q->ctx->id, cq->handle, static_cast<uint64_t>(cqe)};
  if (const int rc = call(proto::Op::ResizeCq, resize); rc != 0) return rc;
  cq->cqe = static_cast<int>(proto::cq_slots(static_cast<uint64_t>(cqe), q->entries) - 1);
  return 0;
}

int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context) {
  for (;;) {
    uint32_t cookie = 0;
    ssize_t n;
    do n = read(channel->fd, &cookie, sizeof cookie);
    while (n < 0 && errno == EINTR);
    if (n != sizeof cookie) return -1;
    Cq* q = cq_for_comp_event(cookie);
    if (q == nullptr) continue;  // destroyed since
    *cq = &q->cq;
    *cq_context = q->cq.cq_context;
    return 0;
  }
}

void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents) {
  pthread_mutex_lock(&cq->mutex);
  cq->comp_events_completed += nevents;
  pthread_cond_signal(&cq->cond);
  pthread_mutex_unlock(&cq->mutex);
}

// --- queue pairs ---

ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  return create_qp(pd->context, pd, *attr, &attr->cap);
}

ibv_qp_ex* ibv_qp_to_qp_ex(ibv_qp* qp) {
  auto* q = reinterpret_cast<Qp*>(qp);
  return q->qpx.wr_start != nullptr ? &q->qpx : nullptr;
}

int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
  auto* q = reinterpret_cast<Qp*>(qp);
  proto::ModifyQpReq req;
  req.ctx = q->ctx->id;
  req.qpn = qp->qp_num;
  req.mask = static_cast<uint32_t>(mask);
  req.state = attr->qp_state;
  req.cur_state = attr->cur_qp_state;
  req.path_mtu = attr->path_mtu;
  req.qkey = attr->qkey;
  req.rq_psn = attr->rq_psn;
  req.sq_psn = attr->sq_psn;
  req.dest_qpn = attr->dest_qp_num;
  req.access = attr->qp_access_flags;
  req.pkey_index = attr->pkey_index;
  req.port_num = attr->port_num;
  req.max_rd_atomic = attr->max_rd_atomic;
  req.max_dest_rd_atomic = attr->max_dest_rd_atomic;
  req.min_rnr_timer = attr->min_rnr_timer;
  req.timeout = attr->timeout;
  req.retry_cnt = attr->retry_cnt;
  req.rnr_retry = attr->rnr_retry;
  req.ah = to_wire(attr->ah_attr);
  if (const int rc = call(proto::Op::ModifyQp, req); rc != 0) return rc;
  if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
    // The daemon emptied the rings: they start again at index 0.
    std::scoped_lock lock(q->sq_mutex, q->rq_mutex);
    q->sq_producer = q->rq_producer = 0;
    q->rq_completed.store(0);
    clean_cq(qp->send_cq, qp->qp_num);
    if (qp->recv_cq != qp->send_cq) clean_cq(qp->recv_cq, qp->qp_num);
  }
  ibv_qp_attr& a = q->attr;
  if (mask & IBV_QP_STATE) qp->state = a.qp_state = attr->qp_state;
  if (mask & IBV_QP_PATH_MTU) a.path_mtu = attr->path_mtu;
  if (mask & IBV_QP_QKEY) a.qkey = attr->qkey;
  if (mask & IBV_QP_RQ_PSN) a.rq_psn = attr->rq_psn;
  if (mask & IBV_QP_SQ_PSN) a.sq_psn = attr->sq_psn;
  if (mask & IBV_QP_DEST_QPN) a.dest_qp_num = attr->dest_qp_num;
  if (mask & IBV_QP_ACCESS_FLAGS) a.qp_access_flags = attr->qp_access_flags;
  if (mask & IBV_QP_AV) a.ah_attr = attr->ah_attr;
  if (mask & IBV_QP_PKEY_INDEX) a.pkey_index = attr->pkey_index;
  if (mask & IBV_QP_PORT) a.port_num = attr->port_num;
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC) a.max_rd_atomic = attr->max_rd_atomic;
  if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) a.max_dest_rd_atomic = attr->max_dest_rd_atomic;
  if (mask & IBV_QP_MIN_RNR_TIMER) a.min_rnr_timer = attr->min_rnr_timer;
  if (mask & IBV_QP_TIMEOUT) a.timeout = attr->timeout;
  if (mask & IBV_QP_RETRY_CNT) a.retry_cnt = attr->retry_cnt;
  if (mask & IBV_QP_RNR_RETRY) a.rnr_retry = attr->rnr_retry;
  return 0;
}

int ibv_query_qp(ibv_qp* qp, ibv_qp_attr* attr, int, ibv_qp_init_attr* init_attr) {
  auto* q = reinterpret_cast<Qp*>(qp);
  proto::ObjectReq req{q->ctx->id, qp->qp_num, 0};
  proto::ObjectRep rep;
  if (const int rc = call(proto::Op::QueryQp, req, rep); rc != 0) return rc;
  *attr = q->attr;
  qp->state = attr->qp_state = attr->cur_qp_state = static_cast<ibv_qp_state>(rep.value);
  attr->cap = q->cap;
  if (init_attr != nullptr) {
    *init_attr = ibv_qp_init_attr{};
    init_attr->qp_context = qp->qp_context;
    init_attr->send_cq = qp->send_cq;
    init_attr->recv_cq = qp->recv_cq;
    init_attr->srq = qp->srq;
    init_attr->cap = q->cap;
    init_attr->qp_type = qp->qp_type;
    init_attr->sq_sig_all = q->sq_sig_all;
  }
  return 0;
}

int ibv_destroy_qp(ibv_qp* qp) {
  auto* q = reinterpret_cast<Qp*>(qp);
  proto::ObjectReq req{q->ctx->id, qp->qp_num, 0};
  if (const int rc = call(proto::Op::DestroyQp, req); rc != 0) return rc;
  unregister_qp(q);
  wait_for_acks(qp->mutex, qp->cond, qp->events_completed, q->reported.async);
  delete q;
  return 0;
}

int ibv_query_qp_data_in_order(ibv_qp*, ibv_wr_opcode, uint32_t) { return 0; }
int ibv_query_ece(ibv_qp*, ibv_ece*) { return EOPNOTSUPP; }
int ibv_set_ece(ibv_qp*, ibv_ece*) { return EOPNOTSUPP; }

// --- shared receive queues ---

ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) {
  Context* c = context_of(pd->context);
  if (attr->attr.max_wr == 0 || attr->attr.max_wr > proto::kMaxWr || attr->attr.max_sge > nic::kMaxSge ||
      attr->attr.srq_limit > attr->attr.max_wr)
    return fail(EINVAL, nullptr);
  proto::CreateSrqReq req;
  req.ctx = c->id;
  req.pd = pd->handle;
  req.max_wr = attr->attr.max_wr;
  req.max_sge = attr->attr.max_sge;
  req.limit = attr->attr.srq_limit;
  proto::RingRep rep;
  if (call(proto::Op::CreateSrq, req, rep) != 0) return nullptr;
  auto* s = new (std::nothrow) Srq;
  if (s == nullptr) return fail(ENOMEM, nullptr);
  s->ctx = c;
  s->ring = WqeSlots{reinterpret_cast<std::byte*>(c->segment + rep.ring_offset), rep.entries, rep.stride};
  s->db = c->doorbell(rep.doorbell);
  s->max_wr = attr->attr.max_wr;
  s->max_sge = nic::slot_sges(rep.stride);
  s->limit = attr->attr.srq_limit;
  attr->attr.max_sge = s->max_sge;
  ibv_srq& srq = s->srq;
  srq.context = pd->context;
  srq.srq_context = attr->srq_context;
  srq.pd = pd;
  srq.handle = rep.id;
  pthread_mutex_init(&srq.mutex, nullptr);
  pthread_cond_init(&srq.cond, nullptr);
  register_srq(s);
  return &srq;
}

int ibv_modify_srq(ibv_srq* srq, ibv_srq_attr* attr, int mask) {
  auto* s = reinterpret_cast<Srq*>(srq);
  if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)) return EINVAL;
  if (mask & IBV_SRQ_MAX_WR) {
    // The ring does not move: a resize within it is fine.
    if (attr->max_wr == 0 || attr->max_wr > s->ring.entries) return EINVAL;
    s->max_wr = attr->max_wr;
  }
  if (mask & IBV_SRQ_LIMIT) {
    if (attr->srq_limit > s->max_wr) return EINVAL;
    proto::ObjectReq req{s->ctx->id, srq->handle, attr->srq_limit};
    if (const int rc = call(proto::Op::ModifySrq, req); rc != 0) return rc;
    s->limit = attr->srq_limit;
  }
  return 0;
}

int ibv_query_srq(ibv_srq* srq, ibv_srq_attr* attr) {
  auto* s = reinterpret_cast<Srq*>(srq);
  attr->max_wr = s->max_wr;
  attr->max_sge = s->max_sge;
  attr->srq_limit = s->limit;
  return 0;
}

int ibv_destroy_srq(ibv_srq* srq) {
  auto* s = reinterpret_cast<Srq*>(srq);
  proto::ObjectReq req{s->ctx->id, srq->handle, 0};
  if (const int rc = call(proto::Op::DestroySrq, req); rc != 0) return rc;
  unregister_srq(s);
  wait_for_acks(srq->mutex, srq->cond, srq->events_completed, s->reported.async);
  delete s;
  return 0;
}

// --- address handles ---

ibv_ah* ibv_create_ah(ibv_pd* pd, ibv_ah_attr* attr) {
  if (attr->port_num != 1) return fail(EINVAL, nullptr);
  proto::CreateAhReq req;
  req.ctx = context_of(pd->context)->id;
  req.pd = pd->handle;
  req.ah = to_wire(*attr);
  proto::ObjectRep rep;
  if (call(proto::Op::CreateAh, req, rep) != 0) return nullptr;
  auto* a = new (std::nothrow) Ah{};
  if (a == nullptr) return fail(ENOMEM, nullptr);
  a->ah.context = pd->context;
  a->ah.pd = pd;
  a->ah.handle = rep.id;
  a->index = rep.id;
  return &a->ah;
}

int ibv_destroy_ah(ibv_ah* ah) {
  proto::ObjectReq req{context_of(ah->context)->id, reinterpret_cast<Ah*>(ah)->index, 0};
  if (const int rc = call(proto::Op::DestroyAh, req); rc != 0) return rc;
  delete reinterpret_cast<Ah*>(ah);
  return 0;
}

int ibv_init_ah_from_wc(ibv_context*, uint8_t port_num, ibv_wc* wc, ibv_grh* grh, ibv_ah_attr* ah_attr) {
  *ah_attr = ibv_ah_attr{};
  ah_attr->dlid = wc->slid;
  ah_attr->sl = wc->sl;
  ah_attr->src_path_bits = wc->dlid_path_bits;
  ah_attr->port_num = port_num;
  if ((wc->wc_flags & IBV_WC_GRH) == 0) return 0;
  ah_attr->is_global = 1;
  ah_attr->grh.hop_limit = 0xFF;
  const uint32_t flow = be32toh(grh->version_tclass_flow);
  const auto* ipv4 = reinterpret_cast<const uint8_t*>(grh) + 20;
  if ((flow >> 28) != 6 && (ipv4[0] >> 4) == 4) {
    // RoCEv2 over IPv4: the receive buffer's first 40 bytes hold the IPv4
    // header in their last 20; the peer is its IPv4-mapped source address,
    // reached from the port's IPv4 RoCEv2 GID (as rdma-core reads it).
    ah_attr->grh.dgid = ibv_gid{};
    ah_attr->grh.dgid.raw[10] = ah_attr->grh.dgid.raw[11] = 0xFF;
    std::memcpy(ah_attr->grh.dgid.raw + 12, ipv4 + 12, 4);
    ah_attr->grh.traffic_class = ipv4[1];
    ah_attr->grh.sgid_index = proto::kGidIndexIpv4RoceV2;
    return 0;
  }
  ah_attr->grh.dgid = grh->sgid;
  ah_attr->grh.flow_label = flow & 0xFFFFF;
  ah_attr->grh.traffic_class = static_cast<uint8_t>((flow >> 20) & 0xFF);
  ah_attr->grh.sgid_index = 0;
  return 0;
}

ibv_ah* ibv_create_ah_from_wc(ibv_pd* pd, ibv_wc* wc, ibv_grh* grh, uint8_t port_num) {
  ibv_ah_attr attr;
  if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr) != 0) return nullptr;
  return ibv_create_ah(pd, &attr);
}

}  // extern "C"
