// The daemon dies under a program (it kills it: RNICSIM_TEST_DAEMON_PID): as a
// device that goes away, within one second the async fd gives
// IBV_EVENT_DEVICE_FATAL, a thread blocked in ibv_get_cq_event wakes, the
// receives it had posted complete with IBV_WC_WR_FLUSH_ERR, and new posts fail;
// destroying every object still succeeds, as on a disassociated device.
#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct ibv_comp_channel* channel;
static volatile int woken = 0;

static void* wait_event(void* arg) {
  (void)arg;
  struct ibv_cq* cq;
  void* ctx;
  ibv_get_cq_event(channel, &cq, &ctx);
  woken = 1;
  return NULL;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void) {
  const char* pid = getenv("RNICSIM_TEST_DAEMON_PID");
  struct ibv_device** list = ibv_get_device_list(NULL);
  struct ibv_context* ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
  struct ibv_pd* pd = ctx ? ibv_alloc_pd(ctx) : NULL;
  channel = ctx ? ibv_create_comp_channel(ctx) : NULL;
  struct ibv_cq* cq = channel ? ibv_create_cq(ctx, 64, NULL, channel, 0) : NULL;
  struct ibv_qp_init_attr qa = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
                                .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1}};
  struct ibv_qp* qp = cq ? ibv_create_qp(pd, &qa) : NULL;
  static char buf[4096];
  struct ibv_mr* mr = pd ? ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE) : NULL;
  struct ibv_qp_attr init = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_LOCAL_WRITE};
  if (pid == NULL || qp == NULL || mr == NULL ||
      ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
    return fprintf(stderr, "set-up failed: %s\n", strerror(errno)), 1;
  struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey};
  for (int i = 0; i < 3; ++i) {
    struct ibv_recv_wr wr = {.wr_id = 100 + i, .sg_list = &sge, .num_sge = 1}, *bad;
    if (ibv_post_recv(qp, &wr, &bad) != 0) return fprintf(stderr, "post_recv failed\n"), 1;
  }
  ibv_req_notify_cq(cq, 0);
  pthread_t waiter;
  pthread_create(&waiter, NULL, wait_event, NULL);
  kill(atoi(pid), SIGKILL);
  const double killed = now_s();
  int failures = 0;
  struct ibv_async_event ev;
  struct pollfd p = {.fd = ctx->async_fd, .events = POLLIN};
  if (poll(&p, 1, 1000) != 1 || ibv_get_async_event(ctx, &ev) != 0 || ev.event_type != IBV_EVENT_DEVICE_FATAL) {
    printf("FAIL: no IBV_EVENT_DEVICE_FATAL within a second\n");
    ++failures;
  } else {
    printf("IBV_EVENT_DEVICE_FATAL after %.3f s\n", now_s() - killed);
    ibv_ack_async_event(&ev);
  }
  while (!woken && now_s() - killed < 1.0) {
    struct timespec t = {0, 1000000};
    nanosleep(&t, NULL);
  }
  if (!woken) {
    printf("FAIL: ibv_get_cq_event still blocked a second after the daemon died\n");
    ++failures;
  }
  struct ibv_wc wc[8];
  const int n = ibv_poll_cq(cq, 8, wc);
  int flushed = 0;
  for (int i = 0; i < n; ++i) flushed += wc[i].status == IBV_WC_WR_FLUSH_ERR && wc[i].wr_id == 100u + i;
  printf("%d completions, %d flushed in order\n", n, flushed);
  if (n != 3 || flushed != 3) {
    printf("FAIL: the three posted receives did not complete with IBV_WC_WR_FLUSH_ERR\n");
    ++failures;
  }
  struct ibv_recv_wr wr = {.wr_id = 7, .sg_list = &sge, .num_sge = 1}, *bad;
  const int rc = ibv_post_recv(qp, &wr, &bad);
  printf("ibv_post_recv after the loss: %s\n", strerror(rc));
  if (rc == 0) {
    printf("FAIL: a post succeeded on a lost device\n");
    ++failures;
  }
  if (!woken) pthread_cancel(waiter);  // failed already; blocked in read(), a cancellation point
  pthread_join(waiter, NULL);
  if (woken) ibv_ack_cq_events(cq, 1);
  const int destroyed = ibv_destroy_qp(qp) == 0 && ibv_dereg_mr(mr) == 0 && ibv_destroy_cq(cq) == 0 &&
                        ibv_destroy_comp_channel(channel) == 0 && ibv_dealloc_pd(pd) == 0 && ibv_close_device(ctx) == 0;
  ibv_free_device_list(list);
  if (!destroyed) {
    printf("FAIL: destroying the objects of the lost device failed: %s\n", strerror(errno));
    ++failures;
  }
  if (failures == 0) printf("PASS\n");
  return failures == 0 ? 0 : 1;
}
