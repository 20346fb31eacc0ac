// A server that rejects every connection request with private data, and a
// client that checks it gets REJECTED with the consumer's reason (28) and
// those bytes, on ids with an event channel of their own; the client's own
// rdma_reject of its request fails (EINVAL) and breaks nothing.
// usage: reject -s PORT | reject -c SERVER PORT
#include <errno.h>
#include <string.h>

#include "cm_util.h"

static const char kWhy[] = "not now";

static int server(int port) {
  struct rdma_event_channel* ch;
  struct rdma_cm_id* listen_id = listen_on(port, &ch);
  struct rdma_cm_event* e = next_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
  struct rdma_cm_id* id = e->id;
  if (e->param.conn.private_data_len != 56) {
    fprintf(stderr, "FAIL: the request's private data is %u bytes, not 56\n", e->param.conn.private_data_len);
    return 1;
  }
  rdma_ack_cm_event(e);
  if (rdma_reject(id, kWhy, sizeof kWhy)) die("rdma_reject");
  printf("rejected the request\n");
  rdma_destroy_id(id);
  rdma_destroy_id(listen_id);
  rdma_destroy_event_channel(ch);
  return 0;
}

static int client(const char* host, int port) {
  struct rdma_event_channel* ch;
  struct rdma_cm_id* id = resolve_to(host, port, &ch);
  struct rdma_conn_param p = {.private_data = "hello", .private_data_len = 6, .retry_count = 7, .rnr_retry_count = 7};
  if (rdma_connect(id, &p)) die("rdma_connect");
  // Misuse: the active side cannot reject its own request. The verb fails
  // and the connection attempt goes on (the server's answer still comes).
  if (rdma_reject(id, NULL, 0) == 0 || errno != EINVAL) {
    fprintf(stderr, "FAIL: rdma_reject on the connecting side: %s\n", strerror(errno));
    return 1;
  }
  struct rdma_cm_event* e = next_event(ch, RDMA_CM_EVENT_REJECTED);
  const char* pd = e->param.conn.private_data;
  printf("REJECTED: status %d, private data \"%s\" (%u bytes)\n", e->status, pd != NULL ? pd : "",
         e->param.conn.private_data_len);
  const int ok = e->status == 28 && pd != NULL && strcmp(pd, kWhy) == 0 && e->param.conn.private_data_len == 148;
  rdma_ack_cm_event(e);
  rdma_destroy_id(id);
  rdma_destroy_event_channel(ch);
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "-s") == 0) return server(atoi(argv[2]));
  if (argc == 4 && strcmp(argv[1], "-c") == 0) return client(argv[2], atoi(argv[3]));
  fprintf(stderr, "usage: reject -s PORT | reject -c SERVER PORT\n");
  return 2;
}
