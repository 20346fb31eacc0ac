// The data path, as a hardware provider has it: work requests become WQEs in the
// shared rings (nic_model/queue_format.hpp), a producer index in the doorbell
// record tells the daemon's NIC, and completions are read from the CQ ring. No
// system call, unless the daemon sleeps and has to be woken, or the CPUs are
// too few for the spinners (see empty_poll).
#include <sched.h>

#include <algorithm>
#include <cstring>

#include "verbs_shim/shim.hpp"

namespace rnicsim::shim {
namespace {

constexpr uint32_t kPollsBeforeYield = 64;

// A CQ polled empty: a spin-wait hint to the CPU and no system call, when the
// process may run on enough CPUs for two spinning programs and the daemon.
// With fewer (Context::few_cpus), a program spinning on an empty CQ gives its
// CPU away now and then, or the daemon that will write the completion waits
// for the end of a time slice: on two CPUs that took ib_send_lat's 8-byte
// typical latency from about 50 us to 10 ms (docs/PERFORMANCE.md). It gives it
// away at once on the first empty poll after posting: the daemon has work
// then, and the completion cannot come before the daemon has run. Not while
// the daemon says the CPUs are contended (verbs_proto::SegmentHeader).
void empty_poll(Cq& q) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
  if (!q.ctx->few_cpus || q.ctx->header().cpus_contended.load(std::memory_order_relaxed) != 0) return;
  const bool just_posted = q.ctx->posted.load(std::memory_order_relaxed);
  if (just_posted) q.ctx->posted.store(false, std::memory_order_relaxed);
  if (just_posted || ++q.empty_polls % kPollsBeforeYield == 0) sched_yield();
}

bool opcode_allowed(ibv_qp_type type, ibv_wr_opcode op) {
  return nic::is_qp_type(type) && nic::carries(static_cast<nic::QpType>(type), static_cast<nic::WrOpcode>(op));
}

// Copies scattered bytes into the WQE as inline data; false if they do not fit
// in `room` bytes (the QP's max_inline_data).
bool set_inline(nic::SendWqe& w, const ibv_sge* sge, int n, size_t room) {
  size_t at = 0;
  for (int i = 0; i < n; ++i) {
    if (sge[i].length > room - at) return false;
    std::memcpy(w.inline_data.data() + at, reinterpret_cast<const void*>(sge[i].addr), sge[i].length);
    at += sge[i].length;
  }
  w.send_flags |= nic::kSendInline;
  w.inline_len = static_cast<uint32_t>(at);
  w.num_sge = 0;
  return true;
}

void set_sges(nic::SendWqe& w, const ibv_sge* sge, size_t n) {
  for (size_t i = 0; i < n; ++i) w.sge[i] = nic::Sge{sge[i].addr, sge[i].length, packet::Lkey(sge[i].lkey)};
  w.num_sge = static_cast<uint8_t>(n);
}

int build_send_wqe(const Qp& q, const ibv_send_wr& wr, nic::SendWqe& w) {
  if (!opcode_allowed(q.qp.qp_type, wr.opcode)) return EINVAL;
  if (wr.num_sge < 0 || static_cast<uint32_t>(wr.num_sge) > q.cap.max_send_sge) return EINVAL;
  w = nic::SendWqe{};
  w.wr_id = wr.wr_id;
  w.opcode = static_cast<nic::WrOpcode>(wr.opcode);
  w.send_flags = static_cast<uint8_t>(wr.send_flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED));
  w.imm_data = wr.opcode == IBV_WR_SEND_WITH_INV ? wr.invalidate_rkey : wr.imm_data;
  switch (wr.opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_RDMA_READ:
      w.remote_addr = wr.wr.rdma.remote_addr;
      w.rkey = packet::Rkey(wr.wr.rdma.rkey);
      break;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      w.remote_addr = wr.wr.atomic.remote_addr;
      w.rkey = packet::Rkey(wr.wr.atomic.rkey);
      w.compare_add = wr.wr.atomic.compare_add;
      w.swap = wr.wr.atomic.swap;
      break;
    default: break;
  }
  if (q.qp.qp_type == IBV_QPT_UD) {
    if (wr.wr.ud.ah == nullptr) return EINVAL;
    w.ud_ah = reinterpret_cast<const Ah*>(wr.wr.ud.ah)->index;
    w.ud_remote_qpn = packet::Qpn(wr.wr.ud.remote_qpn);
    w.ud_remote_qkey = packet::Qkey(wr.wr.ud.remote_qkey);
  }
  if ((wr.send_flags & IBV_SEND_INLINE) && wr.opcode != IBV_WR_RDMA_READ && wr.opcode != IBV_WR_ATOMIC_CMP_AND_SWP &&
      wr.opcode != IBV_WR_ATOMIC_FETCH_AND_ADD) {
    if (!set_inline(w, wr.sg_list, wr.num_sge, q.cap.max_inline_data)) return EINVAL;
  } else {
    set_sges(w, wr.sg_list, static_cast<size_t>(wr.num_sge));
  }
  return 0;
}

void fill_recv_wqe(const ibv_recv_wr& wr, nic::RecvWqe& w) {
  w = nic::RecvWqe{};
  w.wr_id = wr.wr_id;
  w.num_sge = static_cast<uint8_t>(wr.num_sge);
  for (int i = 0; i < wr.num_sge; ++i)
    w.sge[static_cast<size_t>(i)] = nic::Sge{wr.sg_list[i].addr, wr.sg_list[i].length, packet::Lkey(wr.sg_list[i].lkey)};
}

uint32_t total_bytes(const ibv_sge* sge, int n) {
  uint32_t sum = 0;
  for (int i = 0; i < n; ++i) sum += sge[i].length;
  return sum;
}

void trace_send(uint32_t qpn, const ibv_send_wr& wr) {
  trace_event("\"wr\":\"send\",\"qp\":%u,\"wr_id\":%llu,\"opcode\":%d,\"flags\":%u,\"bytes\":%u", qpn,
              static_cast<unsigned long long>(wr.wr_id), static_cast<int>(wr.opcode), wr.send_flags,
              total_bytes(wr.sg_list, wr.num_sge));
}

// A receive WQE of a QP's own RQ is done: counted for the RQ's full check.
// What the QP of a polled CQE has completed: receives (the RQ's room) and
// send WQEs (what a lost device still flushes, device_loss.cpp).
void count_completion(const Cq& q, const nic::Cqe& c) {
  Qp* owner = qp_by_number(q.ctx, c.qp_num.value());
  if (owner == nullptr) return;
  if ((static_cast<uint8_t>(c.opcode) & IBV_WC_RECV) == 0)
    owner->sq_done.store(send_completed(*owner, owner->sq_done.load(std::memory_order_relaxed), c),
                         std::memory_order_relaxed);
  else if (owner->qp.srq == nullptr)
    owner->rq_completed.fetch_add(1, std::memory_order_relaxed);
}

void trace_completion(const Cq& q, const nic::Cqe& c) {
  trace_event("\"wc\":\"cq\",\"cq\":%u,\"qp\":%u,\"wr_id\":%llu,\"status\":%u,\"opcode\":%u,\"byte_len\":%u",
              q.cq.handle, c.qp_num.value(), static_cast<unsigned long long>(c.wr_id), static_cast<unsigned>(c.status),
              static_cast<unsigned>(c.opcode), c.byte_len);
}

void publish_sq(Qp& q) {
  q.db->sq_producer.store(q.sq_producer, std::memory_order_release);
  q.ctx->wake();
}

}  // namespace

int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  auto* q = reinterpret_cast<Qp*>(qp);
  std::lock_guard<std::mutex> lock(q->sq_mutex);
  int rc = 0;
  for (; wr != nullptr; wr = wr->next) {
    if (device_lost()) {
      rc = EIO;
      break;
    }
    if (qp->state < IBV_QPS_RTS && qp->state != IBV_QPS_SQD) {
      rc = EINVAL;
      break;
    }
    nic::SendWqe w;
    if ((rc = build_send_wqe(*q, *wr, w)) != 0) break;
    if (tracing()) trace_send(qp->qp_num, *wr);
    q->sq.store(q->sq_producer, w);
    ++q->sq_producer;
  }
  if (rc != 0 && bad != nullptr) *bad = wr;
  publish_sq(*q);
  return rc;
}

namespace {
// Writes a list of receive WQEs into a ring and publishes the producer index.
// `completed` (if given) and `capacity` say when the queue is full.
// `kind` ("qp" or "srq") and `queue` (its number) name it in the trace, with
// the key a send's trace line uses for its QP.
int post_receives(Context& ctx, const char* kind, uint32_t queue, const WqeSlots& ring, uint32_t max_sge,
                  uint64_t& producer, std::atomic<uint64_t>& doorbell, bool allowed,
                  const std::atomic<uint64_t>* completed, uint64_t capacity, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  int rc = 0;
  for (; wr != nullptr; wr = wr->next) {
    if (device_lost()) {
      rc = EIO;
      break;
    }
    if (!allowed || wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > max_sge) {
      rc = EINVAL;
      break;
    }
    if (completed != nullptr && producer - completed->load(std::memory_order_relaxed) >= capacity) {
      rc = ENOMEM;
      break;
    }
    nic::RecvWqe w;
    fill_recv_wqe(*wr, w);
    ring.store(producer, w);
    ++producer;
    if (tracing())
      trace_event("\"wr\":\"recv\",\"%s\":%u,\"wr_id\":%llu,\"bytes\":%u", kind, queue,
                  static_cast<unsigned long long>(wr->wr_id), total_bytes(wr->sg_list, wr->num_sge));
  }
  if (rc != 0 && bad != nullptr) *bad = wr;
  doorbell.store(producer, std::memory_order_release);
  ctx.wake();
  return rc;
}
}  // namespace

int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  auto* q = reinterpret_cast<Qp*>(qp);
  std::lock_guard<std::mutex> lock(q->rq_mutex);
  return post_receives(*q->ctx, "qp", qp->qp_num, q->rq, q->cap.max_recv_sge, q->rq_producer, q->db->rq_producer,
                       qp->srq == nullptr && qp->state != IBV_QPS_RESET, &q->rq_completed,
                       std::max<uint64_t>(q->cap.max_recv_wr, 1), wr, bad);
}

int post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  auto* s = reinterpret_cast<Srq*>(srq);
  std::lock_guard<std::mutex> lock(s->mutex);
  return post_receives(*s->ctx, "srq", srq->handle, s->ring, s->max_sge, s->producer, s->db->sq_producer, true, nullptr,
                       0, wr, bad);
}

// Tells the NIC which slots the program is done with: it never overwrites an
// unconsumed CQE, and a CQ that has no room overruns (IBV_EVENT_CQ_ERR).
void publish_consumer(Cq& q) { q.db->cq_consumer.store(q.consumer, std::memory_order_release); }

int poll_cq(ibv_cq* cq, int n, ibv_wc* wc) {
  auto* q = reinterpret_cast<Cq*>(cq);
  std::lock_guard<std::mutex> lock(q->poll_mutex);
  int got = 0;
  for (; got < n; ++got) {
    nic::Cqe& slot = q->ring[q->consumer % q->entries];
    const uint8_t owner = std::atomic_ref<uint8_t>(slot.owner).load(std::memory_order_acquire);
    if (owner != nic::cqe_owner_for(q->consumer, q->entries)) break;
    const nic::Cqe c = slot;
    ++q->consumer;
    ibv_wc& w = wc[got];
    w.wr_id = c.wr_id;
    w.status = static_cast<ibv_wc_status>(c.status);
    w.opcode = static_cast<ibv_wc_opcode>(c.opcode);
    w.vendor_err = c.vendor_err;
    w.byte_len = c.byte_len;
    w.imm_data = c.imm_data;
    w.qp_num = c.qp_num.value();
    w.src_qp = c.src_qp.value();
    w.wc_flags = c.wc_flags;
    w.pkey_index = c.pkey_index;
    w.slid = c.slid;
    w.sl = c.sl;
    w.dlid_path_bits = c.dlid_path_bits;
    count_completion(*q, c);
    if (tracing()) trace_completion(*q, c);
  }
  if (got == 0) empty_poll(*q);
  else publish_consumer(*q);
  return got;
}

int req_notify_cq(ibv_cq* cq, int solicited_only) {
  auto* q = reinterpret_cast<Cq*>(cq);
  {
    std::lock_guard<std::mutex> lock(q->poll_mutex);
    q->db->arm_solicited.store(solicited_only != 0, std::memory_order_relaxed);
    // The event is for a CQE the program has not seen yet (IBTA 11.4.2.2),
    // not for one it saw and will poll after arming.
    q->db->arm_seen.store(q->visible_end(), std::memory_order_relaxed);
  }
  q->db->arm_seq.fetch_add(1, std::memory_order_release);
  q->ctx->wake();
  return 0;
}

// --- the extended CQ API (struct ibv_cq_ex: ibv_start_poll, ibv_wc_read_*) ---
namespace {

Cq* of(ibv_cq_ex* x) { return reinterpret_cast<Cq*>(x); }

// The next completion into `current`, if there is one (poll_mutex held).
int take_next(Cq& q) {
  nic::Cqe& slot = q.ring[q.consumer % q.entries];
  if (std::atomic_ref<uint8_t>(slot.owner).load(std::memory_order_acquire) != nic::cqe_owner_for(q.consumer, q.entries))
    return ENOENT;
  q.current = slot;
  ++q.consumer;
  q.cqx.status = static_cast<ibv_wc_status>(q.current.status);
  q.cqx.wr_id = q.current.wr_id;
  count_completion(q, q.current);
  if (tracing()) trace_completion(q, q.current);
  return 0;
}

int start_poll(ibv_cq_ex* x, ibv_poll_cq_attr* attr) {
  if (attr != nullptr && attr->comp_mask != 0) return EINVAL;
  Cq& q = *of(x);
  q.poll_mutex.lock();
  const int rc = take_next(q);
  if (rc != 0) {
    q.poll_mutex.unlock();
    empty_poll(q);
  }
  return rc;
}
int next_poll(ibv_cq_ex* x) { return take_next(*of(x)); }
void end_poll(ibv_cq_ex* x) {
  publish_consumer(*of(x));
  of(x)->poll_mutex.unlock();
}
ibv_wc_opcode read_opcode(ibv_cq_ex* x) { return static_cast<ibv_wc_opcode>(of(x)->current.opcode); }
uint32_t read_vendor_err(ibv_cq_ex* x) { return of(x)->current.vendor_err; }
uint32_t read_byte_len(ibv_cq_ex* x) { return of(x)->current.byte_len; }
__be32 read_imm_data(ibv_cq_ex* x) { return of(x)->current.imm_data; }
uint32_t read_qp_num(ibv_cq_ex* x) { return of(x)->current.qp_num.value(); }
uint32_t read_src_qp(ibv_cq_ex* x) { return of(x)->current.src_qp.value(); }
unsigned int read_wc_flags(ibv_cq_ex* x) { return of(x)->current.wc_flags; }
uint32_t read_slid(ibv_cq_ex* x) { return of(x)->current.slid; }
uint8_t read_sl(ibv_cq_ex* x) { return of(x)->current.sl; }
uint8_t read_dlid_path_bits(ibv_cq_ex* x) { return of(x)->current.dlid_path_bits; }

}  // namespace

void init_cq_ex(Cq* q) {
  ibv_cq_ex& x = q->cqx;
  x.start_poll = start_poll;
  x.next_poll = next_poll;
  x.end_poll = end_poll;
  x.read_opcode = read_opcode;
  x.read_vendor_err = read_vendor_err;
  x.read_byte_len = read_byte_len;
  x.read_imm_data = read_imm_data;
  x.read_qp_num = read_qp_num;
  x.read_src_qp = read_src_qp;
  x.read_wc_flags = read_wc_flags;
  x.read_slid = read_slid;
  x.read_sl = read_sl;
  x.read_dlid_path_bits = read_dlid_path_bits;
}

// --- the ibv_wr_* API (struct ibv_qp_ex) ---
namespace {

Qp* of(ibv_qp_ex* x) { return reinterpret_cast<Qp*>(x); }

// Commits the WQE being built, if any, to the ring (not yet published).
void commit(Qp& q) {
  if (!q.building) return;
  q.building = false;
  q.sq.store(q.sq_producer, q.pending);
  ++q.sq_producer;
}

void begin(ibv_qp_ex* x, ibv_wr_opcode op) {
  Qp& q = *of(x);
  commit(q);
  if (!opcode_allowed(q.qp.qp_type, op)) q.batch_error = EINVAL;
  q.pending = nic::SendWqe{};
  q.pending.wr_id = x->wr_id;
  q.pending.opcode = static_cast<nic::WrOpcode>(op);
  q.pending.send_flags =
      static_cast<uint8_t>(x->wr_flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED));
  q.building = true;
}

void wr_start(ibv_qp_ex* x) {
  Qp& q = *of(x);
  q.sq_mutex.lock();
  q.batch_start = q.sq_producer;
  q.batch_error = 0;
  q.building = false;
}

int wr_complete(ibv_qp_ex* x) {
  Qp& q = *of(x);
  commit(q);
  if (q.qp.state < IBV_QPS_RTS && q.qp.state != IBV_QPS_SQD && q.sq_producer != q.batch_start) q.batch_error = EINVAL;
  if (device_lost()) q.batch_error = EIO;
  const int rc = q.batch_error;
  if (rc != 0) q.sq_producer = q.batch_start;
  else publish_sq(q);
  q.sq_mutex.unlock();
  return rc;
}

void wr_abort(ibv_qp_ex* x) {
  Qp& q = *of(x);
  q.building = false;
  q.sq_producer = q.batch_start;
  q.sq_mutex.unlock();
}

void wr_send(ibv_qp_ex* x) { begin(x, IBV_WR_SEND); }
void wr_send_imm(ibv_qp_ex* x, __be32 imm) {
  begin(x, IBV_WR_SEND_WITH_IMM);
  of(x)->pending.imm_data = imm;
}
void wr_send_inv(ibv_qp_ex* x, uint32_t rkey) {
  begin(x, IBV_WR_SEND_WITH_INV);
  of(x)->pending.imm_data = rkey;
}
void remote(ibv_qp_ex* x, ibv_wr_opcode op, uint32_t rkey, uint64_t addr) {
  begin(x, op);
  of(x)->pending.rkey = packet::Rkey(rkey);
  of(x)->pending.remote_addr = addr;
}
void wr_rdma_write(ibv_qp_ex* x, uint32_t rkey, uint64_t addr) { remote(x, IBV_WR_RDMA_WRITE, rkey, addr); }
void wr_rdma_write_imm(ibv_qp_ex* x, uint32_t rkey, uint64_t addr, __be32 imm) {
  remote(x, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr);
  of(x)->pending.imm_data = imm;
}
void wr_rdma_read(ibv_qp_ex* x, uint32_t rkey, uint64_t addr) { remote(x, IBV_WR_RDMA_READ, rkey, addr); }
void wr_atomic_cmp_swp(ibv_qp_ex* x, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap) {
  remote(x, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr);
  of(x)->pending.compare_add = compare;
  of(x)->pending.swap = swap;
}
void wr_atomic_fetch_add(ibv_qp_ex* x, uint32_t rkey, uint64_t addr, uint64_t add) {
  remote(x, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr);
  of(x)->pending.compare_add = add;
}
void wr_unsupported_local_inv(ibv_qp_ex* x, uint32_t) { of(x)->batch_error = EOPNOTSUPP; }
void wr_unsupported_bind_mw(ibv_qp_ex* x, ibv_mw*, uint32_t, const ibv_mw_bind_info*) {
  of(x)->batch_error = EOPNOTSUPP;
}
void wr_unsupported_tso(ibv_qp_ex* x, void*, uint16_t, uint16_t) { of(x)->batch_error = EOPNOTSUPP; }
void wr_unsupported_xrc(ibv_qp_ex* x, uint32_t) { of(x)->batch_error = EOPNOTSUPP; }
void wr_unsupported_atomic_write(ibv_qp_ex* x, uint32_t, uint64_t, const void*) { of(x)->batch_error = EOPNOTSUPP; }

void wr_set_sge(ibv_qp_ex* x, uint32_t lkey, uint64_t addr, uint32_t length) {
  of(x)->pending.sge[0] = nic::Sge{addr, length, packet::Lkey(lkey)};
  of(x)->pending.num_sge = 1;
}
void wr_set_sge_list(ibv_qp_ex* x, size_t n, const ibv_sge* list) {
  if (n > of(x)->cap.max_send_sge) {
    of(x)->batch_error = EINVAL;
    return;
  }
  set_sges(of(x)->pending, list, n);
}
void wr_set_inline_data(ibv_qp_ex* x, void* addr, size_t length) {
  ibv_sge s{reinterpret_cast<uint64_t>(addr), static_cast<uint32_t>(length), 0};
  if (!set_inline(of(x)->pending, &s, 1, of(x)->cap.max_inline_data)) of(x)->batch_error = EINVAL;
}
void wr_set_inline_data_list(ibv_qp_ex* x, size_t n, const ibv_data_buf* bufs) {
  nic::SendWqe& w = of(x)->pending;
  const size_t room = of(x)->cap.max_inline_data;
  size_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    if (bufs[i].length > room - at) {
      of(x)->batch_error = EINVAL;
      return;
    }
    std::memcpy(w.inline_data.data() + at, bufs[i].addr, bufs[i].length);
    at += bufs[i].length;
  }
  w.send_flags |= nic::kSendInline;
  w.inline_len = static_cast<uint32_t>(at);
  w.num_sge = 0;
}
void wr_set_ud_addr(ibv_qp_ex* x, ibv_ah* ah, uint32_t remote_qpn, uint32_t remote_qkey) {
  nic::SendWqe& w = of(x)->pending;
  w.ud_ah = reinterpret_cast<Ah*>(ah)->index;
  w.ud_remote_qpn = packet::Qpn(remote_qpn);
  w.ud_remote_qkey = packet::Qkey(remote_qkey);
}

}  // namespace

void init_qp_ex(Qp* q, uint64_t) {
  ibv_qp_ex& x = q->qpx;
  x.wr_start = wr_start;
  x.wr_complete = wr_complete;
  x.wr_abort = wr_abort;
  x.wr_send = wr_send;
  x.wr_send_imm = wr_send_imm;
  x.wr_send_inv = wr_send_inv;
  x.wr_send_tso = wr_unsupported_tso;
  x.wr_rdma_write = wr_rdma_write;
  x.wr_rdma_write_imm = wr_rdma_write_imm;
  x.wr_rdma_read = wr_rdma_read;
  x.wr_atomic_cmp_swp = wr_atomic_cmp_swp;
  x.wr_atomic_fetch_add = wr_atomic_fetch_add;
  x.wr_atomic_write = wr_unsupported_atomic_write;
  x.wr_bind_mw = wr_unsupported_bind_mw;
  x.wr_local_inv = wr_unsupported_local_inv;
  x.wr_set_sge = wr_set_sge;
  x.wr_set_sge_list = wr_set_sge_list;
  x.wr_set_inline_data = wr_set_inline_data;
  x.wr_set_inline_data_list = wr_set_inline_data_list;
  x.wr_set_ud_addr = wr_set_ud_addr;
  x.wr_set_xrc_srqn = wr_unsupported_xrc;
}

}  // namespace rnicsim::shim
