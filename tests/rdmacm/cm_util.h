// What the RDMA CM test programs share: failing loudly, taking the event a
// step expects, and the steps every server and client take first.
#pragma once

#include <rdma/rdma_cma.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

static inline void die(const char* what) {
  perror(what);
  exit(1);
}

// The next event on `ch`, which must be `want` (else the program fails).
static inline struct rdma_cm_event* next_event(struct rdma_event_channel* ch, enum rdma_cm_event_type want) {
  struct rdma_cm_event* e;
  if (rdma_get_cm_event(ch, &e)) die("rdma_get_cm_event");
  if (e->event != want) {
    fprintf(stderr, "FAIL: got %s (status %d), wanted %s\n", rdma_event_str(e->event), e->status,
            rdma_event_str(want));
    exit(1);
  }
  return e;
}

// A channel and an id listening on `port`.
static inline struct rdma_cm_id* listen_on(int port, struct rdma_event_channel** ch) {
  struct rdma_cm_id* id;
  *ch = rdma_create_event_channel();
  if (*ch == NULL || rdma_create_id(*ch, &id, NULL, RDMA_PS_TCP)) die("rdma_create_id");
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (rdma_bind_addr(id, (struct sockaddr*)&a) || rdma_listen(id, 1)) die("listen");
  return id;
}

// A channel and an id with its address and route to `host`:`port` resolved.
static inline struct rdma_cm_id* resolve_to(const char* host, int port, struct rdma_event_channel** ch) {
  struct rdma_cm_id* id;
  *ch = rdma_create_event_channel();
  if (*ch == NULL || rdma_create_id(*ch, &id, NULL, RDMA_PS_TCP)) die("rdma_create_id");
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, host, &a.sin_addr) != 1) die("address");
  if (rdma_resolve_addr(id, NULL, (struct sockaddr*)&a, 2000)) die("rdma_resolve_addr");
  rdma_ack_cm_event(next_event(*ch, RDMA_CM_EVENT_ADDR_RESOLVED));
  if (rdma_resolve_route(id, 2000)) die("rdma_resolve_route");
  rdma_ack_cm_event(next_event(*ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
  return id;
}
