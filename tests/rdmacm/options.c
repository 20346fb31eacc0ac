// rdma_set_option at RDMA_OPTION_ID and the bind rules it changes, as the
// kernel's CM has them: REUSEADDR lets ids that all set it share a port (not
// to listen on it together), AFONLY keeps an IPv6 wildcard off the IPv4
// addresses, a wildcard meets every address of its port (EADDRNOTAVAIL) and
// an address itself (EADDRINUSE); ACK_TIMEOUT is for RC ids only. Prints one
// line per check and "all options checks passed" at the end.
#include <errno.h>
#include <string.h>

#include "cm_util.h"

static int failures = 0;

static void check(const char* what, int rc, int want_errno) {
  const int got = rc == 0 ? 0 : errno;
  printf("%s: %s\n", what, got == 0 ? "ok" : strerror(got));
  if (got != want_errno) {
    printf("FAIL: %s: wanted %s\n", what, want_errno == 0 ? "success" : strerror(want_errno));
    ++failures;
  }
}

static struct rdma_cm_id* new_id(struct rdma_event_channel* ch, enum rdma_port_space ps) {
  struct rdma_cm_id* id;
  if (rdma_create_id(ch, &id, NULL, ps)) die("rdma_create_id");
  return id;
}

static int bind4(struct rdma_cm_id* id, const char* ip, int port) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, ip, &a.sin_addr);
  return rdma_bind_addr(id, (struct sockaddr*)&a);
}

static int bind6_any(struct rdma_cm_id* id, int port) {
  struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
  return rdma_bind_addr(id, (struct sockaddr*)&a);
}

static int set_int(struct rdma_cm_id* id, int option, int value) {
  return rdma_set_option(id, RDMA_OPTION_ID, option, &value, sizeof value);
}

int main(int argc, char** argv) {
  const char* ip = argc > 1 ? argv[1] : "10.0.0.1";
  struct rdma_event_channel* ch = rdma_create_event_channel();
  if (ch == NULL) die("rdma_create_event_channel");

  struct rdma_cm_id* a = new_id(ch, RDMA_PS_TCP);
  struct rdma_cm_id* b = new_id(ch, RDMA_PS_TCP);
  check("bind the host's address", bind4(a, ip, 7301), 0);
  check("bind it again", bind4(b, ip, 7301), EADDRINUSE);
  check("bind the wildcard on that port", bind4(b, "0.0.0.0", 7301), EADDRNOTAVAIL);
  check("bind loopback on that port", bind4(b, "127.0.0.1", 7301), 0);

  struct rdma_cm_id* r1 = new_id(ch, RDMA_PS_TCP);
  struct rdma_cm_id* r2 = new_id(ch, RDMA_PS_TCP);
  struct rdma_cm_id* r3 = new_id(ch, RDMA_PS_TCP);
  check("REUSEADDR before bind", set_int(r1, RDMA_OPTION_ID_REUSEADDR, 1), 0);
  check("REUSEADDR on the second", set_int(r2, RDMA_OPTION_ID_REUSEADDR, 1), 0);
  check("bind the first", bind4(r1, ip, 7302), 0);
  check("bind the second to the same address and port", bind4(r2, ip, 7302), 0);
  check("bind a third without REUSEADDR", bind4(r3, ip, 7302), EADDRINUSE);
  check("turn REUSEADDR off after bind", set_int(r1, RDMA_OPTION_ID_REUSEADDR, 0), EINVAL);
  check("listen on the shared port", rdma_listen(r1, 1), EADDRINUSE);
  rdma_destroy_id(r2);
  check("listen once it is the port's only id", rdma_listen(r1, 1), 0);
  check("REUSEADDR while listening", set_int(r1, RDMA_OPTION_ID_REUSEADDR, 1), EINVAL);

  struct rdma_cm_id* v6 = new_id(ch, RDMA_PS_TCP);
  struct rdma_cm_id* v6only = new_id(ch, RDMA_PS_TCP);
  struct rdma_cm_id* v4 = new_id(ch, RDMA_PS_TCP);
  check("bind the IPv6 wildcard", bind6_any(v6, 7303), 0);
  check("bind IPv4 on its port", bind4(v4, ip, 7303), EADDRNOTAVAIL);
  check("AFONLY after bind", set_int(v6, RDMA_OPTION_ID_AFONLY, 1), EINVAL);
  check("AFONLY before bind", set_int(v6only, RDMA_OPTION_ID_AFONLY, 1), 0);
  check("bind the AFONLY IPv6 wildcard", bind6_any(v6only, 7304), 0);
  check("bind IPv4 on its port", bind4(v4, ip, 7304), 0);

  uint8_t timeout = 21, tos = 32;
  struct rdma_cm_id* ud = new_id(ch, RDMA_PS_UDP);
  check("ACK_TIMEOUT on an RC id", rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, 1), 0);
  check("ACK_TIMEOUT on a UD id", rdma_set_option(ud, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, 1),
        EINVAL);
  check("TOS", rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1), 0);
  check("TOS with an int", set_int(a, RDMA_OPTION_ID_TOS, 32), EINVAL);
  check("an option there is not", set_int(a, 99, 1), ENOSYS);

  printf(failures == 0 ? "all options checks passed\n" : "%d options checks failed\n", failures);
  return failures == 0 ? 0 : 1;
}
