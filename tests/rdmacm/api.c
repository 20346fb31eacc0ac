// The CM shim's functions that need no connection manager, called as a program
// does (tests/rdmacm/CMakeLists.txt runs each mode):
//   api basics              rdma_event_str, rdma_getaddrinfo/freeaddrinfo,
//                           rdma_get_src_port/dst_port, the CM and rsockets with no device
//   api devices             rdma_get_devices/free_devices (on a daemon)
//   api passthrough REAL    with RNICSIM_MODE=passthrough: answered by REAL,
//                           the system's librdmacm
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>
#include <arpa/inet.h>
#include <infiniband/ib.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static int failures;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      printf(__VA_ARGS__);                                 \
      printf("\n");                                        \
      ++failures;                                          \
    }                                                      \
  } while (0)

static const char* const kEvents[] = {
    "RDMA_CM_EVENT_ADDR_RESOLVED",  "RDMA_CM_EVENT_ADDR_ERROR",       "RDMA_CM_EVENT_ROUTE_RESOLVED",
    "RDMA_CM_EVENT_ROUTE_ERROR",    "RDMA_CM_EVENT_CONNECT_REQUEST",  "RDMA_CM_EVENT_CONNECT_RESPONSE",
    "RDMA_CM_EVENT_CONNECT_ERROR",  "RDMA_CM_EVENT_UNREACHABLE",      "RDMA_CM_EVENT_REJECTED",
    "RDMA_CM_EVENT_ESTABLISHED",    "RDMA_CM_EVENT_DISCONNECTED",     "RDMA_CM_EVENT_DEVICE_REMOVAL",
    "RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR",  "RDMA_CM_EVENT_ADDR_CHANGE",
    "RDMA_CM_EVENT_TIMEWAIT_EXIT",
};

static void event_names(void) {
  for (int e = 0; e < (int)(sizeof kEvents / sizeof kEvents[0]); ++e) {
    const char* s = rdma_event_str((enum rdma_cm_event_type)e);
    CHECK(s != NULL && strcmp(s, kEvents[e]) == 0, "event %d is \"%s\"", e, s ? s : "(null)");
  }
  const int unknown[] = {RDMA_CM_EVENT_TIMEWAIT_EXIT + 1, 100, -1};
  for (int i = 0; i < 3; ++i) {
    const char* s = rdma_event_str((enum rdma_cm_event_type)unknown[i]);
    CHECK(s != NULL && strcmp(s, "UNKNOWN EVENT") == 0, "event %d is \"%s\"", unknown[i], s ? s : "(null)");
  }
}

static void addrinfo_numeric(void) {
  struct rdma_addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_flags = RAI_NUMERICHOST;
  int rc = rdma_getaddrinfo("127.0.0.1", "7471", &hints, &res);
  CHECK(rc == 0 && res != NULL, "rdma_getaddrinfo 127.0.0.1: %d (errno %d)", rc, errno);
  if (rc != 0 || res == NULL) return;
  CHECK(res->ai_flags == 0, "ai_flags %#x", res->ai_flags);
  CHECK(res->ai_family == AF_INET, "ai_family %d", res->ai_family);
  CHECK(res->ai_qp_type == IBV_QPT_RC, "ai_qp_type %d", res->ai_qp_type);
  CHECK(res->ai_port_space == RDMA_PS_TCP, "ai_port_space %#x", res->ai_port_space);
  CHECK(res->ai_src_len == 0 && res->ai_src_addr == NULL, "ai_src_len %u", res->ai_src_len);
  CHECK(res->ai_dst_len == sizeof(struct sockaddr_in) && res->ai_dst_addr != NULL, "ai_dst_len %u", res->ai_dst_len);
  if (res->ai_dst_addr != NULL) {
    const struct sockaddr_in* in = (const struct sockaddr_in*)res->ai_dst_addr;
    CHECK(in->sin_family == AF_INET && in->sin_port == htons(7471) && in->sin_addr.s_addr == htonl(INADDR_LOOPBACK),
          "dst %d %s:%u", in->sin_family, inet_ntoa(in->sin_addr), ntohs(in->sin_port));
  }
  CHECK(res->ai_src_canonname == NULL && res->ai_dst_canonname == NULL, "canonical names");
  CHECK(res->ai_route == NULL && res->ai_connect == NULL && res->ai_next == NULL, "route, connect or next");

  // The ports of an id whose addresses are these (as rdma_resolve_addr fills them).
  struct rdma_cm_id id;
  memset(&id, 0, sizeof id);
  memcpy(&id.route.addr.dst_addr, res->ai_dst_addr, res->ai_dst_len);
  struct sockaddr_in6 src6;
  memset(&src6, 0, sizeof src6);
  src6.sin6_family = AF_INET6;
  src6.sin6_port = htons(40000);
  memcpy(&id.route.addr.src_addr, &src6, sizeof src6);
  CHECK(rdma_get_dst_port(&id) == htons(7471), "dst port %u", ntohs(rdma_get_dst_port(&id)));
  CHECK(rdma_get_src_port(&id) == htons(40000), "src port %u", ntohs(rdma_get_src_port(&id)));
  struct sockaddr_ib sib;
  memset(&sib, 0, sizeof sib);
  sib.sib_family = AF_IB;
  sib.sib_sid = htobe64(RDMA_IB_IP_PS_TCP | 18515);
  memcpy(&id.route.addr.src_addr, &sib, sizeof sib);
  CHECK(rdma_get_src_port(&id) == htons(18515), "AF_IB src port %u", ntohs(rdma_get_src_port(&id)));
  id.route.addr.dst_addr.sa_family = AF_UNIX;
  CHECK(rdma_get_dst_port(&id) == 0, "AF_UNIX dst port %u", rdma_get_dst_port(&id));
  rdma_freeaddrinfo(res);
}

static void addrinfo_passive_and_ud(void) {
  struct rdma_addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_flags = RAI_PASSIVE;
  int rc = rdma_getaddrinfo(NULL, "7471", &hints, &res);
  CHECK(rc == 0 && res != NULL, "rdma_getaddrinfo passive: %d (errno %d)", rc, errno);
  if (rc == 0 && res != NULL) {
    CHECK(res->ai_flags == RAI_PASSIVE, "passive ai_flags %#x", res->ai_flags);
    CHECK(res->ai_dst_addr == NULL && res->ai_dst_len == 0, "passive has a destination");
    CHECK(res->ai_src_addr != NULL && res->ai_src_len >= sizeof(struct sockaddr_in), "passive src_len %u",
          res->ai_src_len);
    if (res->ai_src_addr != NULL && res->ai_src_addr->sa_family == AF_INET) {
      const struct sockaddr_in* in = (const struct sockaddr_in*)res->ai_src_addr;
      CHECK(in->sin_addr.s_addr == htonl(INADDR_ANY) && in->sin_port == htons(7471), "passive src %s:%u",
            inet_ntoa(in->sin_addr), ntohs(in->sin_port));
    }
    CHECK(res->ai_port_space == RDMA_PS_TCP && res->ai_qp_type == IBV_QPT_RC, "passive ps %#x qp %d",
          res->ai_port_space, res->ai_qp_type);
    rdma_freeaddrinfo(res);
  }

  // UD: the UDP port space; RAI_FAMILY with AF_INET6.
  memset(&hints, 0, sizeof hints);
  hints.ai_flags = RAI_NUMERICHOST | RAI_FAMILY;
  hints.ai_family = AF_INET6;
  hints.ai_qp_type = IBV_QPT_UD;
  res = NULL;
  rc = rdma_getaddrinfo("::1", "7471", &hints, &res);
  CHECK(rc == 0 && res != NULL, "rdma_getaddrinfo ::1 UD: %d (errno %d)", rc, errno);
  if (rc == 0 && res != NULL) {
    CHECK(res->ai_family == AF_INET6 && res->ai_qp_type == IBV_QPT_UD && res->ai_port_space == RDMA_PS_UDP,
          "UD family %d qp %d ps %#x", res->ai_family, res->ai_qp_type, res->ai_port_space);
    CHECK(res->ai_dst_len == sizeof(struct sockaddr_in6), "UD dst_len %u", res->ai_dst_len);
    rdma_freeaddrinfo(res);
  }

  // AF_IB with a numeric host: the address as a GID, port space and port in the service ID.
  hints.ai_family = AF_IB;
  hints.ai_qp_type = IBV_QPT_RC;
  res = NULL;
  rc = rdma_getaddrinfo("fe80::1", "7471", &hints, &res);
  CHECK(rc == 0 && res != NULL, "rdma_getaddrinfo AF_IB: %d (errno %d)", rc, errno);
  if (rc == 0 && res != NULL) {
    CHECK(res->ai_family == AF_IB && res->ai_dst_len == sizeof(struct sockaddr_ib), "AF_IB family %d len %u",
          res->ai_family, res->ai_dst_len);
    const struct sockaddr_ib* sib = (const struct sockaddr_ib*)res->ai_dst_addr;
    CHECK(sib->sib_family == AF_IB && be64toh(sib->sib_sid) == (RDMA_IB_IP_PS_TCP | 7471) &&
              be64toh(sib->sib_sid_mask) == (RDMA_IB_IP_PS_MASK | RDMA_IB_IP_PORT_MASK) &&
              sib->sib_pkey == htobe16(0xFFFF) && sib->sib_addr.sib_raw[0] == 0xfe && sib->sib_addr.sib_raw[15] == 1,
          "AF_IB sid %#llx mask %#llx", (unsigned long long)be64toh(sib->sib_sid),
          (unsigned long long)be64toh(sib->sib_sid_mask));
    rdma_freeaddrinfo(res);
  }
}

// Failures come back as getaddrinfo's own EAI_* code.
static void addrinfo_errors(void) {
  struct rdma_addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_flags = RAI_NUMERICHOST;
  int rc = rdma_getaddrinfo("no-such-host.invalid", "7471", &hints, &res);
  CHECK(rc == EAI_NONAME, "numeric lookup of a name: %d (%s)", rc, gai_strerror(rc));

  struct addrinfo ai_hints, *ai = NULL;
  memset(&ai_hints, 0, sizeof ai_hints);
  const int expected = getaddrinfo("no-such-host.invalid", "7471", &ai_hints, &ai);
  if (expected == 0) freeaddrinfo(ai);
  memset(&hints, 0, sizeof hints);
  rc = rdma_getaddrinfo("no-such-host.invalid", "7471", &hints, &res);
  CHECK(rc != 0 && rc == expected, "unknown host: %d (%s), getaddrinfo %d", rc, gai_strerror(rc), expected);

  rc = rdma_getaddrinfo("127.0.0.1", "no-such-service", &hints, &res);
  CHECK(rc == EAI_SERVICE || rc == EAI_NONAME, "unknown service: %d (%s)", rc, gai_strerror(rc));

  errno = 0;
  rc = rdma_getaddrinfo(NULL, NULL, NULL, &res);
  CHECK(rc == -1 && errno == EINVAL, "no node, service or hints: %d errno %d", rc, errno);

  // Hints alone are the answer, with their addresses copied.
  struct sockaddr_in dst;
  memset(&dst, 0, sizeof dst);
  dst.sin_family = AF_INET;
  dst.sin_port = htons(1);
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_INET;
  hints.ai_port_space = RDMA_PS_UDP;
  hints.ai_dst_addr = (struct sockaddr*)&dst;
  hints.ai_dst_len = sizeof dst;
  hints.ai_src_addr = (struct sockaddr*)&dst;
  hints.ai_src_len = sizeof dst;
  res = NULL;
  rc = rdma_getaddrinfo(NULL, NULL, &hints, &res);
  CHECK(rc == 0 && res != NULL && res->ai_port_space == RDMA_PS_UDP && res->ai_dst_len == sizeof dst &&
            res->ai_dst_addr != (struct sockaddr*)&dst && res->ai_src_len == sizeof dst &&
            memcmp(res->ai_src_addr, &dst, sizeof dst) == 0,
        "hints only: %d", rc);
  if (rc == 0) rdma_freeaddrinfo(res);
  rdma_freeaddrinfo(NULL);
}

// With no daemon there is no device: the CM core and rsocket say ENODEV, as
// upstream's do on a machine without RDMA devices; a descriptor that is no
// rsocket is EBADF.
static void no_device(void) {
  errno = 0;
  CHECK(rdma_create_event_channel() == NULL && errno == ENODEV, "rdma_create_event_channel errno %d", errno);
  struct rdma_cm_id* id = NULL;
  errno = 0;
  CHECK(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) == -1 && errno == ENODEV, "rdma_create_id errno %d", errno);
  errno = 0;
  CHECK(rsocket(AF_INET, SOCK_STREAM, 0) == -1 && errno == ENODEV, "rsocket errno %d", errno);
  errno = 0;
  CHECK(rfcntl(3, 1, 0) == -1 && errno == EBADF, "rfcntl errno %d", errno);
  errno = 0;
  CHECK(riowrite(3, "", 0, 0, 0) == (size_t)-1 && errno == EBADF, "riowrite errno %d", errno);
}

static void devices(void) {
  int n = -1;
  struct ibv_context** list = rdma_get_devices(&n);
  CHECK(list != NULL && n >= 1, "rdma_get_devices: %p, %d devices (errno %d)", (void*)list, n, errno);
  if (list == NULL) return;
  int verbs_n = 0;
  struct ibv_device** verbs_list = ibv_get_device_list(&verbs_n);
  CHECK(n == verbs_n, "%d contexts, %d verbs devices", n, verbs_n);
  for (int i = 0; i < n; ++i) {
    CHECK(list[i] != NULL && list[i]->device != NULL, "context %d", i);
    if (list[i] == NULL) break;
    const char* name = ibv_get_device_name(list[i]->device);
    int listed = 0;
    for (int k = 0; k < verbs_n; ++k) listed |= strcmp(ibv_get_device_name(verbs_list[k]), name) == 0;
    CHECK(listed, "device %s is not in ibv_get_device_list", name);
    struct ibv_device_attr attr;
    CHECK(ibv_query_device(list[i], &attr) == 0 && attr.phys_port_cnt >= 1, "the context of %s answers", name);
    printf("device %d: %s\n", i, name);
  }
  CHECK(list[n] == NULL, "the list is not NULL-terminated");
  // The same contexts again: they are the process's.
  int n2 = 0;
  struct ibv_context** again = rdma_get_devices(&n2);
  CHECK(again != NULL && n2 == n && again[0] == list[0], "a second rdma_get_devices");
  rdma_free_devices(again);
  rdma_free_devices(list);
  ibv_free_device_list(verbs_list);
}

// RNICSIM_MODE=passthrough: the system library answers. rdma_event_str's
// string is its; rdma_getaddrinfo gives what that library gives when called
// directly.
static void passthrough(const char* real) {
  const char* s = rdma_event_str(RDMA_CM_EVENT_ESTABLISHED);
  Dl_info info;
  CHECK(s != NULL && dladdr(s, &info) != 0, "dladdr of rdma_event_str's string");
  char* want = realpath(real, NULL);
  char* got = s != NULL && dladdr(s, &info) != 0 ? realpath(info.dli_fname, NULL) : NULL;
  CHECK(want != NULL && got != NULL && strcmp(want, got) == 0, "rdma_event_str answered by %s, not %s",
        got ? got : "?", want ? want : real);
  printf("rdma_event_str: \"%s\" from %s\n", s ? s : "(null)", got ? got : "?");
  free(got);

  void* lib = dlopen(real, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  CHECK(lib != NULL, "the system library is not loaded: %s", dlerror());
  free(want);
  if (lib == NULL) return;
  int (*direct)(const char*, const char*, const struct rdma_addrinfo*, struct rdma_addrinfo**) =
      (int (*)(const char*, const char*, const struct rdma_addrinfo*, struct rdma_addrinfo**))dlsym(lib, "rdma_getaddrinfo");
  CHECK(direct != NULL && (void*)direct != (void*)rdma_getaddrinfo, "rdma_getaddrinfo in the system library");
  if (direct == NULL) return;
  struct rdma_addrinfo hints, *a = NULL, *b = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_flags = RAI_NUMERICHOST;
  errno = 0;
  const int rc = rdma_getaddrinfo("127.0.0.1", "7471", &hints, &a);
  const int err = errno;
  errno = 0;
  const int rc_direct = direct("127.0.0.1", "7471", &hints, &b);
  const int err_direct = errno;
  CHECK(rc == rc_direct && (rc == 0 || err == err_direct), "rdma_getaddrinfo %d errno %d, system's %d errno %d", rc,
        err, rc_direct, err_direct);
  if (rc == 0 && rc_direct == 0)
    CHECK(a->ai_dst_len == b->ai_dst_len && memcmp(a->ai_dst_addr, b->ai_dst_addr, a->ai_dst_len) == 0,
          "different answers");
  printf("rdma_getaddrinfo through the shim: %d (errno %d); the system library directly: %d (errno %d)\n", rc, err,
         rc_direct, err_direct);
  if (rc == 0) rdma_freeaddrinfo(a);
  if (rc_direct == 0) rdma_freeaddrinfo(b);
}

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "basics") == 0) {
    event_names();
    addrinfo_numeric();
    addrinfo_passive_and_ud();
    addrinfo_errors();
    no_device();
  } else if (argc >= 2 && strcmp(argv[1], "devices") == 0) {
    devices();
  } else if (argc >= 3 && strcmp(argv[1], "passthrough") == 0) {
    passthrough(argv[2]);
  } else {
    fprintf(stderr, "usage: %s basics | devices | passthrough REAL_LIBRDMACM\n", argv[0]);
    return 2;
  }
  printf("%s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
