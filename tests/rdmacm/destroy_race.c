// rdma_destroy_id against an event thread, as rping's client has them: the
// thread takes the id's DISCONNECTED event while the main thread destroys
// the id. An event handed out must be acknowledged before rdma_destroy_id
// returns, and none may be handed out for an id already destroyed.
// usage: destroy_race -s PORT COUNT | destroy_race -c SERVER PORT COUNT
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "cm_util.h"

static void make_qp(struct rdma_cm_id* id) {
  struct ibv_qp_init_attr a = {.qp_type = IBV_QPT_RC, .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
  if (rdma_create_qp(id, NULL, &a)) die("rdma_create_qp");
}

static int server(int port, int count) {
  struct rdma_event_channel* ch;
  struct rdma_cm_id* listen_id = listen_on(port, &ch);
  for (int i = 0; i < count; ++i) {
    struct rdma_cm_event* e = next_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
    struct rdma_cm_id* id = e->id;
    rdma_ack_cm_event(e);
    make_qp(id);
    struct rdma_conn_param p = {.responder_resources = 1, .initiator_depth = 1};
    if (rdma_accept(id, &p)) die("rdma_accept");
    rdma_ack_cm_event(next_event(ch, RDMA_CM_EVENT_ESTABLISHED));
    rdma_ack_cm_event(next_event(ch, RDMA_CM_EVENT_DISCONNECTED));
    rdma_destroy_qp(id);
    rdma_destroy_id(id);
  }
  rdma_destroy_id(listen_id);
  rdma_destroy_event_channel(ch);
  printf("server: %d connections\n", count);
  return 0;
}

// One connection's race: what the event thread saw.
struct race {
  struct rdma_event_channel* ch;
  struct rdma_cm_id* id;
  atomic_int destroyed;  // rdma_destroy_id has returned
  atomic_int failed;
};

static void* event_thread(void* arg) {
  struct race* r = arg;
  struct rdma_cm_event* e;
  // Blocks for good when the event is dropped with its id (the channel goes).
  if (rdma_get_cm_event(r->ch, &e)) return NULL;
  if (atomic_load(&r->destroyed)) {
    fprintf(stderr, "FAIL: %s handed out for an id already destroyed\n", rdma_event_str(e->event));
    atomic_store(&r->failed, 1);
    return NULL;
  }
  if (e->id != r->id || e->id->context != r) {
    fprintf(stderr, "FAIL: the event's id or context is not the connection's\n");
    atomic_store(&r->failed, 1);
  }
  usleep(20000);  // rdma_destroy_id must still be waiting
  if (atomic_load(&r->destroyed)) {
    fprintf(stderr, "FAIL: rdma_destroy_id returned before its event was acknowledged\n");
    atomic_store(&r->failed, 1);
  }
  rdma_ack_cm_event(e);
  return NULL;
}

// One per connection, for the whole run: an event thread whose event went
// with its id waits for good.
enum { kMaxRaces = 64 };
static struct race g_races[kMaxRaces];

// Connects, disconnects, and once the DISCONNECTED event is in the channel
// starts the event thread and destroys the id `delay_us` later.
static int one_race(struct race* r, const char* host, int port, int delay_us) {
  struct rdma_cm_id* id = resolve_to(host, port, &r->ch);
  r->id = id;
  id->context = r;
  make_qp(id);
  struct rdma_conn_param p = {.responder_resources = 1, .initiator_depth = 1, .retry_count = 7, .rnr_retry_count = 7};
  if (rdma_connect(id, &p)) die("rdma_connect");
  rdma_ack_cm_event(next_event(r->ch, RDMA_CM_EVENT_ESTABLISHED));
  if (rdma_disconnect(id)) die("rdma_disconnect");
  struct pollfd pfd = {.fd = r->ch->fd, .events = POLLIN};
  if (poll(&pfd, 1, 10000) != 1) {
    fprintf(stderr, "FAIL: no DISCONNECTED event within 10 s\n");
    return 1;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, event_thread, r)) die("pthread_create");
  pthread_detach(t);
  if (delay_us > 0) usleep((useconds_t)delay_us);
  rdma_destroy_qp(id);
  rdma_destroy_id(id);
  atomic_store(&r->destroyed, 1);
  usleep(30000);  // time for a late hand-out to show
  const int failed = atomic_load(&r->failed);
  rdma_destroy_event_channel(r->ch);
  return failed;
}

static int client(const char* host, int port, int count) {
  if (count > kMaxRaces) count = kMaxRaces;
  int failures = 0;
  for (int i = 0; i < count; ++i) failures += one_race(&g_races[i], host, port, (i % 8) * 25);
  if (failures != 0) {
    printf("FAIL: %d of %d connections\n", failures, count);
    return 1;
  }
  printf("PASS: %d connections\n", count);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "-s") == 0) return server(atoi(argv[2]), atoi(argv[3]));
  if (argc == 5 && strcmp(argv[1], "-c") == 0) return client(argv[2], atoi(argv[3]), atoi(argv[4]));
  fprintf(stderr, "usage: destroy_race -s PORT COUNT | destroy_race -c SERVER PORT COUNT\n");
  return 2;
}
