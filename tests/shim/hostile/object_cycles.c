// Creates and destroys a CQ, a QP, an MR, an SRQ and an AH in one context, over
// and over: every create must succeed, and the daemon's resident memory and
// open descriptors must stay flat (within 10 % + 1 MiB, and 4 descriptors).
// usage: object_cycles [CYCLES]   (the daemon: RNICSIM_TEST_DAEMON_PID)
#include <dirent.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long rss_kib(int pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", pid);
  FILE* f = fopen(path, "r");
  long kib = -1;
  while (f != NULL && fgets(line, sizeof line, f) != NULL)
    if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  if (f != NULL) fclose(f);
  return kib;
}

static int open_fds(int pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd", pid);
  DIR* d = opendir(path);
  int n = 0;
  while (d != NULL && readdir(d) != NULL) ++n;
  if (d != NULL) closedir(d);
  return n;
}

#define CHECK(x, what)                                                        \
  if (!(x)) {                                                                 \
    fprintf(stderr, "cycle %d: %s failed: %s\n", cycle, what, strerror(errno)); \
    return 1;                                                                 \
  }

int main(int argc, char** argv) {
  const char* pid = getenv("RNICSIM_TEST_DAEMON_PID");
  const int daemon = pid != NULL ? atoi(pid) : 0;
  const int cycles = argc > 1 ? atoi(argv[1]) : 10000;
  struct ibv_device** list = ibv_get_device_list(NULL);
  if (list == NULL || list[0] == NULL) return fprintf(stderr, "no device\n"), 1;
  struct ibv_context* ctx = ibv_open_device(list[0]);
  struct ibv_pd* pd = ctx ? ibv_alloc_pd(ctx) : NULL;
  if (pd == NULL) return fprintf(stderr, "no context or PD\n"), 1;
  union ibv_gid gid;
  struct ibv_port_attr port;
  if (ibv_query_gid(ctx, 1, 0, &gid) != 0 || ibv_query_port(ctx, 1, &port) != 0) return 1;
  static char buffer[1 << 16];
  long rss0 = 0;
  int fds0 = 0;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    if (cycle == 100) rss0 = rss_kib(daemon), fds0 = open_fds(daemon);
    struct ibv_cq* cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
    CHECK(cq, "ibv_create_cq");
    struct ibv_srq_init_attr sa = {.attr = {.max_wr = 64, .max_sge = 1}};
    struct ibv_srq* srq = ibv_create_srq(pd, &sa);
    CHECK(srq, "ibv_create_srq");
    struct ibv_qp_init_attr qa = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = 1024, .max_recv_wr = 1024, .max_send_sge = 1, .max_recv_sge = 1}};
    struct ibv_qp* qp = ibv_create_qp(pd, &qa);
    CHECK(qp, "ibv_create_qp");
    struct ibv_mr* mr = ibv_reg_mr(pd, buffer, sizeof buffer, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    CHECK(mr, "ibv_reg_mr");
    struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1, .dlid = port.lid, .grh = {.dgid = gid, .hop_limit = 64}};
    struct ibv_ah* ah = ibv_create_ah(pd, &aa);
    CHECK(ah, "ibv_create_ah");
    CHECK(ibv_destroy_ah(ah) == 0, "ibv_destroy_ah");
    CHECK(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr");
    CHECK(ibv_destroy_qp(qp) == 0, "ibv_destroy_qp");
    CHECK(ibv_destroy_srq(srq) == 0, "ibv_destroy_srq");
    CHECK(ibv_destroy_cq(cq) == 0, "ibv_destroy_cq");
  }
  const long rss1 = rss_kib(daemon);
  const int fds1 = open_fds(daemon);
  printf("%d cycles; daemon RSS %ld -> %ld KiB, descriptors %d -> %d\n", cycles, rss0, rss1, fds0, fds1);
  if (cycles > 100 && (rss1 > rss0 + rss0 / 10 + 1024 || fds1 > fds0 + 4)) {
    printf("FAIL: the daemon's memory or descriptors grew\n");
    return 1;
  }
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  ibv_free_device_list(list);
  printf("PASS\n");
  return 0;
}
