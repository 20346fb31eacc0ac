// Threads sharing one context of the shim, as multi-threaded RDMA programs do:
// two RC QP pairs on the host's own port (the NIC loops the packets back).
//   - a sender posts SEND_WITH_IMM messages on QP a (the immediate is the
//     message's number, the 64-byte payload repeats its low byte);
//   - an event thread takes a's send completions through a completion channel
//     (ibv_req_notify_cq, ibv_get_cq_event, ibv_ack_cq_events) and gives the
//     sender its credits back;
//   - two pollers poll b's receive CQ at the same time, check each message,
//     and post its receive again from whichever thread took it;
//   - a writer runs RDMA WRITEs on the second pair (c -> d) and polls its own CQ;
//   - an async thread waits on the context's asynchronous events.
// Every message must arrive exactly once with its bytes; every WRITE must land.
// usage: threads [MESSAGES]
#include <infiniband/verbs.h>

#include "loopback_rc.h"
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kDepth = 32, kMsg = 64, kWriteBytes = 4096, kWrites = 200 };

static int messages = 2000;
static struct ibv_context* ctx;
static struct ibv_pd* pd;
static struct ibv_comp_channel* channel;
static struct ibv_cq *cq_a, *cq_b, *cq_c;
static struct ibv_qp *qa, *qb, *qc, *qd;
static struct ibv_mr* mr;
static uint8_t* mem;  // [send slots | receive slots | write source | write target]
static atomic_int credits = kDepth;
static atomic_int sent_done, received, stop_async;
static atomic_uchar* seen;

#define SEND_SLOT(i) (mem + (size_t)((i) % kDepth) * kMsg)
#define RECV_SLOT(i) (mem + (size_t)(kDepth + (i)) * kMsg)
#define WRITE_SRC (mem + (size_t)2 * kDepth * kMsg)
#define WRITE_DST (WRITE_SRC + kWriteBytes)

static void die(const char* what) {
  perror(what);
  exit(1);
}

static struct ibv_qp* make_qp(struct ibv_cq* scq, struct ibv_cq* rcq) {
  struct ibv_qp_init_attr a = {.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
                               .cap = {.max_send_wr = kDepth, .max_recv_wr = kDepth, .max_send_sge = 1,
                                       .max_recv_sge = 1}};
  struct ibv_qp* qp = ibv_create_qp(pd, &a);
  if (qp == NULL) die("ibv_create_qp");
  return qp;
}

static void post_recv(int slot) {
  struct ibv_sge s = {.addr = (uintptr_t)RECV_SLOT(slot), .length = kMsg, .lkey = mr->lkey};
  struct ibv_recv_wr w = {.wr_id = (uint64_t)slot, .sg_list = &s, .num_sge = 1}, *bad;
  if (ibv_post_recv(qb, &w, &bad)) die("ibv_post_recv");
}

static void* sender(void* unused) {
  (void)unused;
  for (int i = 0; i < messages; ++i) {
    while (atomic_load(&credits) == 0) sched_yield();
    atomic_fetch_sub(&credits, 1);
    memset(SEND_SLOT(i), i & 0xFF, kMsg);
    struct ibv_sge s = {.addr = (uintptr_t)SEND_SLOT(i), .length = kMsg, .lkey = mr->lkey};
    struct ibv_send_wr w = {.wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
                            .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32((uint32_t)i)},
                       *bad;
    if (ibv_post_send(qa, &w, &bad)) die("ibv_post_send");
  }
  return NULL;
}

static void* events(void* unused) {
  (void)unused;
  while (atomic_load(&sent_done) < messages) {
    struct ibv_cq* cq;
    void* cq_ctx;
    if (ibv_get_cq_event(channel, &cq, &cq_ctx)) die("ibv_get_cq_event");
    ibv_ack_cq_events(cq, 1);
    if (ibv_req_notify_cq(cq, 0)) die("ibv_req_notify_cq");
    struct ibv_wc wc[16];
    int n;
    while ((n = ibv_poll_cq(cq, 16, wc)) > 0) {
      for (int k = 0; k < n; ++k)
        if (wc[k].status != IBV_WC_SUCCESS) {
          fprintf(stderr, "FAIL: send %llu: %s\n", (unsigned long long)wc[k].wr_id, ibv_wc_status_str(wc[k].status));
          exit(1);
        }
      atomic_fetch_add(&sent_done, n);
      atomic_fetch_add(&credits, n);
    }
  }
  return NULL;
}

static void* receiver(void* unused) {
  (void)unused;
  while (atomic_load(&received) < messages) {
    struct ibv_wc wc;
    if (ibv_poll_cq(cq_b, 1, &wc) != 1) continue;
    if (wc.status != IBV_WC_SUCCESS || !(wc.wc_flags & IBV_WC_WITH_IMM) || wc.byte_len != kMsg) {
      fprintf(stderr, "FAIL: receive %llu: %s, flags %u, %u bytes\n", (unsigned long long)wc.wr_id,
              ibv_wc_status_str(wc.status), wc.wc_flags, wc.byte_len);
      exit(1);
    }
    const uint32_t i = be32toh(wc.imm_data);
    const uint8_t* p = RECV_SLOT(wc.wr_id);
    for (int k = 0; k < kMsg; ++k)
      if (p[k] != (i & 0xFF)) {
        fprintf(stderr, "FAIL: message %u byte %d is %u\n", i, k, p[k]);
        exit(1);
      }
    if (i >= (uint32_t)messages || atomic_exchange(&seen[i], 1) != 0) {
      fprintf(stderr, "FAIL: message %u delivered twice or never sent\n", i);
      exit(1);
    }
    post_recv((int)wc.wr_id);
    atomic_fetch_add(&received, 1);
  }
  return NULL;
}

static void* writer(void* unused) {
  (void)unused;
  for (int i = 0; i < kWrites; ++i) {
    memset(WRITE_SRC, i & 0xFF, kWriteBytes);
    struct ibv_sge s = {.addr = (uintptr_t)WRITE_SRC, .length = kWriteBytes, .lkey = mr->lkey};
    struct ibv_send_wr w = {.wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                            .send_flags = IBV_SEND_SIGNALED},
                       *bad;
    w.wr.rdma.remote_addr = (uintptr_t)WRITE_DST;
    w.wr.rdma.rkey = mr->rkey;
    if (ibv_post_send(qc, &w, &bad)) die("ibv_post_send (WRITE)");
    struct ibv_wc wc;
    int n;
    while ((n = ibv_poll_cq(cq_c, 1, &wc)) == 0) {
    }
    if (n < 0 || wc.status != IBV_WC_SUCCESS) {
      fprintf(stderr, "FAIL: WRITE %d: %s\n", i, ibv_wc_status_str(wc.status));
      exit(1);
    }
    for (int k = 0; k < kWriteBytes; ++k)
      if (WRITE_DST[k] != (i & 0xFF)) {
        fprintf(stderr, "FAIL: WRITE %d did not land (byte %d is %u)\n", i, k, WRITE_DST[k]);
        exit(1);
      }
  }
  return NULL;
}

static void* async_events(void* unused) {
  (void)unused;
  struct pollfd p = {.fd = ctx->async_fd, .events = POLLIN};
  while (!atomic_load(&stop_async)) {
    if (poll(&p, 1, 10) <= 0) continue;
    struct ibv_async_event e;
    if (ibv_get_async_event(ctx, &e)) die("ibv_get_async_event");
    fprintf(stderr, "FAIL: unexpected asynchronous event %s\n", ibv_event_type_str(e.event_type));
    exit(1);
  }
  return NULL;
}

// A run that stalls says where, instead of waiting for the test's timeout.
static void stalled(int sig) {
  (void)sig;
  char line[160];
  const int n = snprintf(line, sizeof line, "FAIL: stalled: %d of %d sends completed, %d received, %d credits\n",
                         atomic_load(&sent_done), messages, atomic_load(&received), atomic_load(&credits));
  if (write(2, line, (size_t)n) < 0) {}
  _exit(1);
}

int main(int argc, char** argv) {
  if (argc > 1) messages = atoi(argv[1]);
  signal(SIGALRM, stalled);
  alarm(120);
  int n;
  struct ibv_device** list = ibv_get_device_list(&n);
  if (list == NULL || n == 0) die("no device");
  ctx = ibv_open_device(list[0]);
  if (ctx == NULL) die("ibv_open_device");
  union ibv_gid gid;
  if (ibv_query_gid(ctx, 1, 0, &gid)) die("ibv_query_gid");
  pd = ibv_alloc_pd(ctx);
  channel = ibv_create_comp_channel(ctx);
  const size_t bytes = (size_t)2 * kDepth * kMsg + 2 * kWriteBytes;
  mem = calloc(1, bytes);
  seen = calloc((size_t)messages, 1);
  if (pd == NULL || channel == NULL || mem == NULL || seen == NULL) die("set-up");
  mr = ibv_reg_mr(pd, mem, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  cq_a = ibv_create_cq(ctx, kDepth, NULL, channel, 0);
  cq_b = ibv_create_cq(ctx, kDepth, NULL, NULL, 0);
  cq_c = ibv_create_cq(ctx, kDepth, NULL, NULL, 0);
  if (mr == NULL || cq_a == NULL || cq_b == NULL || cq_c == NULL) die("set-up");
  qa = make_qp(cq_a, cq_c);
  qb = make_qp(cq_c, cq_b);
  qc = make_qp(cq_c, cq_c);
  qd = make_qp(cq_c, cq_c);
  loopback_rc_connect(qa, qb->qp_num, &gid);
  loopback_rc_connect(qb, qa->qp_num, &gid);
  loopback_rc_connect(qc, qd->qp_num, &gid);
  loopback_rc_connect(qd, qc->qp_num, &gid);
  for (int i = 0; i < kDepth; ++i) post_recv(i);
  // Armed before any send can complete: a CQE already in the CQ when it is
  // armed raises no event (ibv_req_notify_cq(3)), so an event thread that
  // armed after the sender's first completions would wait for ever.
  if (ibv_req_notify_cq(cq_a, 0)) die("ibv_req_notify_cq");

  pthread_t t[6];
  void* (*fn[6])(void*) = {sender, events, receiver, receiver, writer, async_events};
  for (int i = 0; i < 6; ++i)
    if (pthread_create(&t[i], NULL, fn[i], NULL)) die("pthread_create");
  for (int i = 0; i < 5; ++i) pthread_join(t[i], NULL);
  atomic_store(&stop_async, 1);
  pthread_join(t[5], NULL);
  for (int i = 0; i < messages; ++i)
    if (!seen[i]) {
      fprintf(stderr, "FAIL: message %d never arrived\n", i);
      return 1;
    }
  printf("%d messages received once each by two pollers; %d WRITEs landed; no asynchronous event\n", messages,
         kWrites);
  struct ibv_qp* qps[] = {qa, qb, qc, qd};
  for (int i = 0; i < 4; ++i)
    if (ibv_destroy_qp(qps[i])) die("ibv_destroy_qp");
  if (ibv_destroy_cq(cq_a) || ibv_destroy_cq(cq_b) || ibv_destroy_cq(cq_c)) die("ibv_destroy_cq");
  if (ibv_dereg_mr(mr) || ibv_destroy_comp_channel(channel) || ibv_dealloc_pd(pd) || ibv_close_device(ctx))
    die("tear-down");
  ibv_free_device_list(list);
  free(mem);
  free(seen);
  return 0;
}
