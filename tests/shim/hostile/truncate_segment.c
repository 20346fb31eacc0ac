// Truncates the shared segment its context was handed (found through
// /proc/self/fd), then keeps using the device: the truncation must fail (the
// segment is sealed), and the daemon must not die of SIGBUS when it next
// touches the segment (run.sh then checks that it still serves others).
#include <dirent.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  struct ibv_device** list = ibv_get_device_list(NULL);
  struct ibv_context* ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
  if (ctx == NULL) return fprintf(stderr, "no device\n"), 1;
  DIR* d = opendir("/proc/self/fd");
  struct dirent* e;
  int segments = 0, truncated = 0;
  while (d != NULL && (e = readdir(d)) != NULL) {
    char path[300], target[256] = {0};
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    if (readlink(path, target, sizeof target - 1) < 0 || strstr(target, "memfd:rnicsim-context") == NULL) continue;
    ++segments;
    const int fd = atoi(e->d_name);
    if (ftruncate(fd, 0) == 0 || ftruncate(fd, 4096) == 0) ++truncated;
    else printf("ftruncate of the segment refused: %s\n", strerror(errno));
  }
  if (d != NULL) closedir(d);
  if (segments == 0) return fprintf(stderr, "FAIL: found no segment\n"), 1;
  // The daemon touches the segment: rings of new queues, a doorbell scan.
  struct ibv_pd* pd = ibv_alloc_pd(ctx);
  struct ibv_cq* cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
  struct ibv_qp_init_attr qa = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
                                .cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1}};
  struct ibv_qp* qp = cq ? ibv_create_qp(pd, &qa) : NULL;
  printf("after the attempt: PD %s, CQ %s, QP %s\n", pd ? "ok" : "failed", cq ? "ok" : "failed", qp ? "ok" : "failed");
  if (qp) ibv_destroy_qp(qp);
  if (cq) ibv_destroy_cq(cq);
  if (pd) ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  ibv_free_device_list(list);
  if (truncated != 0) return fprintf(stderr, "FAIL: the segment could be truncated\n"), 1;
  return qp != NULL ? 0 : 1;
}
