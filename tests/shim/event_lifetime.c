// The lifetime of an object that events name, as libibverbs defines it:
//   - destroying a QP on an SRQ raises no async event (a destroy is a move to
//     Reset, which raises none);
//   - ibv_destroy_qp waits until the program has acknowledged the async events
//     it was handed for the QP, and ibv_destroy_cq the completion events for
//     the CQ: an acknowledgement writes into the object, so it must come
//     before the object is freed. (A program that acknowledged after a
//     destroy wrote into freed memory: UCX's async thread did, and UCX's own
//     heap broke.)
#include <infiniband/verbs.h>

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static struct ibv_context* ctx;
static struct ibv_pd* pd;
static struct ibv_cq* cq;
static struct ibv_srq* srq;

static void die(const char* what) {
  perror(what);
  exit(1);
}

static void fail(const char* what) {
  fprintf(stderr, "FAIL: %s\n", what);
  exit(1);
}

static int readable(int fd, int ms) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  return poll(&p, 1, ms) == 1;
}

static void sleep_ms(long ms) {
  struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
  nanosleep(&t, NULL);
}

static struct ibv_qp* qp_in_init(struct ibv_cq* on, struct ibv_srq* s) {
  struct ibv_qp_init_attr a = {.send_cq = on, .recv_cq = on, .srq = s, .qp_type = IBV_QPT_RC,
                               .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
  struct ibv_qp* qp = ibv_create_qp(pd, &a);
  if (qp == NULL) die("ibv_create_qp");
  struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1};
  if (ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
    die("to INIT");
  return qp;
}

static void to_error(struct ibv_qp* qp) {
  struct ibv_qp_attr m = {.qp_state = IBV_QPS_ERR};
  if (ibv_modify_qp(qp, &m, IBV_QP_STATE)) die("to ERR");
}

static atomic_int destroyed;

static void* destroy_qp(void* qp) {
  if (ibv_destroy_qp(qp)) die("ibv_destroy_qp");
  atomic_store(&destroyed, 1);
  return NULL;
}

static void* destroy_cq(void* c) {
  if (ibv_destroy_cq(c)) die("ibv_destroy_cq");
  atomic_store(&destroyed, 1);
  return NULL;
}

// Starts `destroy` on `object` in a thread, checks it has not returned while
// the event is unacknowledged, acknowledges, and checks that it then returns.
static void destroy_waits_for_ack(void* (*destroy)(void*), void* object, void (*ack)(void*), void* event,
                                  const char* what) {
  atomic_store(&destroyed, 0);
  pthread_t t;
  if (pthread_create(&t, NULL, destroy, object)) die("pthread_create");
  sleep_ms(300);
  if (atomic_load(&destroyed)) {
    fprintf(stderr, "FAIL: %s returned before the event was acknowledged\n", what);
    exit(1);
  }
  ack(event);
  pthread_join(t, NULL);
  if (!atomic_load(&destroyed)) fail("the destroy did not return");
  printf("%s waited for the acknowledgement\n", what);
}

static void ack_async(void* e) { ibv_ack_async_event(e); }
static void ack_comp(void* c) { ibv_ack_cq_events(c, 1); }

static void no_event_from_destroy(void) {
  struct ibv_qp* qp = qp_in_init(cq, srq);
  if (ibv_destroy_qp(qp)) die("ibv_destroy_qp");
  if (readable(ctx->async_fd, 300)) fail("destroying a QP on an SRQ raised an async event");
  printf("destroying a QP on an SRQ raised no event\n");
}

static void destroy_qp_waits(void) {
  struct ibv_qp* qp = qp_in_init(cq, srq);
  to_error(qp);
  if (!readable(ctx->async_fd, 20000)) fail("no Last WQE Reached event after the move to ERR");
  struct ibv_async_event e;
  if (ibv_get_async_event(ctx, &e)) die("ibv_get_async_event");
  if (e.event_type != IBV_EVENT_QP_LAST_WQE_REACHED || e.element.qp != qp) fail("not the QP's Last WQE Reached");
  destroy_waits_for_ack(destroy_qp, qp, ack_async, &e, "ibv_destroy_qp");
}

// A receive posted and flushed by the move to ERR: a completion, and with the
// CQ armed, a completion event.
static void destroy_cq_waits(void) {
  struct ibv_comp_channel* ch = ibv_create_comp_channel(ctx);
  if (ch == NULL) die("ibv_create_comp_channel");
  struct ibv_cq* ecq = ibv_create_cq(ctx, 8, NULL, ch, 0);
  if (ecq == NULL) die("ibv_create_cq");
  if (ibv_req_notify_cq(ecq, 0)) die("ibv_req_notify_cq");
  struct ibv_qp* qp = qp_in_init(ecq, NULL);
  static char buf[64];
  struct ibv_mr* mr = ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE);
  if (mr == NULL) die("ibv_reg_mr");
  struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = sizeof buf, .lkey = mr->lkey};
  struct ibv_recv_wr wr = {.wr_id = 7, .sg_list = &sge, .num_sge = 1}, *bad;
  if (ibv_post_recv(qp, &wr, &bad)) die("ibv_post_recv");
  to_error(qp);
  struct ibv_cq* got;
  void* cq_context;
  if (!readable(ch->fd, 20000)) fail("no completion event for the flushed receive");
  if (ibv_get_cq_event(ch, &got, &cq_context)) die("ibv_get_cq_event");
  if (got != ecq) fail("the completion event names another CQ");
  struct ibv_wc wc;
  if (ibv_poll_cq(ecq, 1, &wc) != 1 || wc.wr_id != 7 || wc.status != IBV_WC_WR_FLUSH_ERR)
    fail("no flushed receive in the CQ");
  if (ibv_destroy_qp(qp)) die("ibv_destroy_qp");
  destroy_waits_for_ack(destroy_cq, ecq, ack_comp, ecq, "ibv_destroy_cq");
  if (ibv_dereg_mr(mr)) die("ibv_dereg_mr");
  if (ibv_destroy_comp_channel(ch)) die("ibv_destroy_comp_channel");
}

int main(void) {
  alarm(60);  // a destroy that waits for ever fails here, not at ctest's timeout
  struct ibv_device** list = ibv_get_device_list(NULL);
  if (list == NULL || list[0] == NULL) die("ibv_get_device_list");
  ctx = ibv_open_device(list[0]);
  if (ctx == NULL) die("ibv_open_device");
  pd = ibv_alloc_pd(ctx);
  cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
  struct ibv_srq_init_attr sa = {.attr = {.max_wr = 8, .max_sge = 1}};
  srq = ibv_create_srq(pd, &sa);
  if (pd == NULL || cq == NULL || srq == NULL) die("setup");
  no_event_from_destroy();
  destroy_qp_waits();
  destroy_cq_waits();
  ibv_destroy_srq(srq);
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  ibv_free_device_list(list);
  printf("PASS\n");
  return 0;
}
