// Registers memory, then unmaps it, and lets the NIC use it: a DMA the daemon
// cannot make must not be a silent success. An RDMA WRITE into a responder's
// unmapped buffer breaks the responder's QP (IBV_EVENT_QP_ACCESS_ERR, QP in
// ERR); an RDMA WRITE from the requester's unmapped buffer completes with
// IBV_WC_LOC_PROT_ERR. (The daemon logs each with the QP, address, length.)
// Run with RNICSIM_HOST_MEMORY=process: shared pages would keep the memory.
// The buffers are unmapped by mapping an inaccessible range over them: a plain
// munmap could see the range mapped again at once (by a sanitizer's allocator).
#include <endian.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

enum { kBytes = 8192 };
static struct ibv_context* ctx;
static struct ibv_pd* pd;
static struct ibv_cq* cq;
static union ibv_gid gid;

static struct ibv_qp* new_qp(void) {
  struct ibv_qp_init_attr a = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
                               .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
  struct ibv_qp* qp = ibv_create_qp(pd, &a);
  struct ibv_qp_attr init = {.qp_state = IBV_QPS_INIT, .port_num = 1,
                             .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE};
  if (qp == NULL || ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
    return NULL;
  return qp;
}

// Both QPs to RTS, each the other's peer (the NIC's loopback carries it).
static int connect_to(struct ibv_qp* qp, uint32_t peer) {
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096, .dest_qp_num = peer, .rq_psn = 1,
                          .max_dest_rd_atomic = 1, .min_rnr_timer = 12,
                          .ah_attr = {.is_global = 1, .port_num = 1, .grh = {.dgid = gid, .hop_limit = 64}}};
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    return -1;
  struct ibv_qp_attr s = {.qp_state = IBV_QPS_RTS, .timeout = 10, .retry_cnt = 1, .rnr_retry = 1, .sq_psn = 1,
                          .max_rd_atomic = 1};
  return ibv_modify_qp(qp, &s, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                   IBV_QP_MAX_QP_RD_ATOMIC);
}

static void take_away(char* p) { mmap(p, kBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0); }

static char* region(struct ibv_mr** mr) {
  char* p = mmap(NULL, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  *mr = p == MAP_FAILED ? NULL : ibv_reg_mr(pd, p, kBytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  return *mr ? p : NULL;
}

static int write_from_to(struct ibv_qp* qp, char* src, struct ibv_mr* smr, char* dst, struct ibv_mr* dmr) {
  struct ibv_sge sge = {.addr = (uintptr_t)src, .length = kBytes, .lkey = smr->lkey};
  struct ibv_send_wr w = {.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                          .send_flags = IBV_SEND_SIGNALED,
                          .wr.rdma = {.remote_addr = (uintptr_t)dst, .rkey = dmr->rkey}},
                     *bad;
  return ibv_post_send(qp, &w, &bad);
}

// The next completion of `qp` (the first pair's may still come in).
static int wait_completion(struct ibv_qp* qp, struct ibv_wc* wc) {
  for (int i = 0; i < 3000; ++i) {
    if (ibv_poll_cq(cq, 1, wc) == 1 && wc->qp_num == qp->qp_num) return 0;
    struct timespec t = {0, 1000000};
    nanosleep(&t, NULL);
  }
  return -1;
}

int main(void) {
  struct ibv_device** list = ibv_get_device_list(NULL);
  ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
  pd = ctx ? ibv_alloc_pd(ctx) : NULL;
  cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
  if (cq == NULL || ibv_query_gid(ctx, 1, 3, &gid)) return fprintf(stderr, "set-up failed\n"), 1;
  int failures = 0;

  // A responder whose buffer is gone.
  struct ibv_qp *a = new_qp(), *b = new_qp();
  struct ibv_mr *amr, *bmr;
  char *asrc = region(&amr), *bdst = region(&bmr);
  if (!a || !b || !asrc || !bdst || connect_to(a, b->qp_num) || connect_to(b, a->qp_num))
    return fprintf(stderr, "set-up of the first pair failed: %s\n", strerror(errno)), 1;
  take_away(bdst);
  if (write_from_to(a, asrc, amr, bdst, bmr)) return fprintf(stderr, "post failed\n"), 1;
  struct pollfd p = {.fd = ctx->async_fd, .events = POLLIN};
  struct ibv_async_event ev;
  if (poll(&p, 1, 3000) != 1 || ibv_get_async_event(ctx, &ev)) {
    printf("FAIL: no asynchronous event for the responder's QP\n");
    ++failures;
  } else {
    const int ok = ev.event_type == IBV_EVENT_QP_ACCESS_ERR && ev.element.qp == b;
    printf("responder: %s on QP %u\n", ibv_event_type_str(ev.event_type), ev.element.qp->qp_num);
    if (!ok) printf("FAIL: expected IBV_EVENT_QP_ACCESS_ERR on QP %u\n", b->qp_num), ++failures;
    ibv_ack_async_event(&ev);
  }
  struct ibv_qp_attr qa;
  struct ibv_qp_init_attr qi;
  if (ibv_query_qp(b, &qa, IBV_QP_STATE, &qi) || qa.qp_state != IBV_QPS_ERR)
    printf("FAIL: the responder's QP is not in ERR\n"), ++failures;
  struct ibv_wc wc;

  // A requester whose source buffer is gone.
  struct ibv_qp *c = new_qp(), *d = new_qp();
  struct ibv_mr *cmr, *dmr;
  char *csrc = region(&cmr), *ddst = region(&dmr);
  if (!c || !d || !csrc || !ddst || connect_to(c, d->qp_num) || connect_to(d, c->qp_num))
    return fprintf(stderr, "set-up of the second pair failed\n"), 1;
  take_away(csrc);
  if (write_from_to(c, csrc, cmr, ddst, dmr)) return fprintf(stderr, "post failed\n"), 1;
  if (wait_completion(c, &wc)) {
    printf("FAIL: no completion for the WRITE from unmapped memory\n");
    ++failures;
  } else {
    printf("requester: %s on QP %u\n", ibv_wc_status_str(wc.status), wc.qp_num);
    if (wc.status != IBV_WC_LOC_PROT_ERR || wc.qp_num != c->qp_num)
      printf("FAIL: expected IBV_WC_LOC_PROT_ERR on QP %u\n", c->qp_num), ++failures;
  }
  struct ibv_qp* qps[] = {a, b, c, d};
  for (int i = 0; i < 4; ++i) ibv_destroy_qp(qps[i]);
  struct ibv_mr* mrs[] = {amr, bmr, cmr, dmr};
  for (int i = 0; i < 4; ++i) ibv_dereg_mr(mrs[i]);
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  ibv_free_device_list(list);
  return failures == 0 ? 0 : 1;
}
