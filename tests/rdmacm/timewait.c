// After a disconnection both ends get RDMA_CM_EVENT_TIMEWAIT_EXIT, as the
// kernel's CM delivers it: once the connection's time-wait (4.096 us x
// 2^(packet life time + 1): 2.1 s on RoCE) has passed, to an id still alive.
// usage: timewait -s PORT | timewait -c SERVER PORT
#include <string.h>
#include <time.h>

#include "cm_util.h"

// The next event, which must be `want` with status 0; its id in `id`.
static void expect(struct rdma_event_channel* ch, enum rdma_cm_event_type want, struct rdma_cm_id** id) {
  struct rdma_cm_event* e = next_event(ch, want);
  if (e->status != 0) {
    fprintf(stderr, "FAIL: %s with status %d\n", rdma_event_str(want), e->status);
    exit(1);
  }
  if (id != NULL) *id = e->id;
  rdma_ack_cm_event(e);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void make_qp(struct rdma_cm_id* id) {
  struct ibv_qp_init_attr a = {.qp_type = IBV_QPT_RC, .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
  if (rdma_create_qp(id, NULL, &a)) die("rdma_create_qp");
}

// Both ends: disconnected, then out of time-wait a while later.
static int wait_out(struct rdma_event_channel* ch, struct rdma_cm_id* id, const char* side) {
  const double t0 = now_s();
  expect(ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, NULL);
  const double waited = now_s() - t0;
  printf("%s: TIMEWAIT_EXIT %.2f s after DISCONNECTED\n", side, waited);
  rdma_destroy_qp(id);
  rdma_destroy_id(id);
  rdma_destroy_event_channel(ch);
  return waited > 1.0 && waited < 5.0 ? 0 : 1;
}

static int server(int port) {
  struct rdma_event_channel* ch;
  struct rdma_cm_id* id;
  struct rdma_cm_id* listen_id = listen_on(port, &ch);
  expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &id);
  make_qp(id);
  struct rdma_conn_param p = {.responder_resources = 1, .initiator_depth = 1};
  if (rdma_accept(id, &p)) die("rdma_accept");
  expect(ch, RDMA_CM_EVENT_ESTABLISHED, NULL);
  expect(ch, RDMA_CM_EVENT_DISCONNECTED, NULL);
  if (rdma_disconnect(id)) die("rdma_disconnect");  // allowed, and sends nothing more
  rdma_destroy_id(listen_id);
  return wait_out(ch, id, "server");
}

static int client(const char* host, int port) {
  struct rdma_event_channel* ch;
  struct rdma_cm_id* id = resolve_to(host, port, &ch);
  make_qp(id);
  struct rdma_conn_param p = {.responder_resources = 1, .initiator_depth = 1, .retry_count = 7, .rnr_retry_count = 7};
  if (rdma_connect(id, &p)) die("rdma_connect");
  expect(ch, RDMA_CM_EVENT_ESTABLISHED, NULL);
  if (rdma_disconnect(id)) die("rdma_disconnect");
  expect(ch, RDMA_CM_EVENT_DISCONNECTED, NULL);
  return wait_out(ch, id, "client");
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "-s") == 0) return server(atoi(argv[2]));
  if (argc == 4 && strcmp(argv[1], "-c") == 0) return client(argv[2], atoi(argv[3]));
  fprintf(stderr, "usage: timewait -s PORT | timewait -c SERVER PORT\n");
  return 2;
}
