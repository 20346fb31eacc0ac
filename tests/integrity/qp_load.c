// Load program for the emulation daemon: NQP RC QPs to a peer process, each kept
// at DEPTH outstanding 4 KiB RDMA WRITEs for SECONDS; then everything destroyed.
// The two sides exchange QP numbers, GID, buffer address and rkey through files
// in DIR (DIR/NAME.ROLE). Prints the completions; exits 1 on any error.
// usage: qp_load DIR NAME ROLE(0|1) NQP DEPTH SECONDS
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MSG 4096

struct peer {
  uint8_t gid[16];
  uint64_t addr;
  uint32_t rkey;
};

static void die(const char* what) {
  fprintf(stderr, "qp_load: %s\n", what);
  exit(1);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void publish(const char* dir, const char* name, int role, const struct peer* me, const uint32_t* qpns, int n) {
  char tmp[4096], path[4096];
  snprintf(tmp, sizeof tmp, "%s/%s.%d.tmp", dir, name, role);
  snprintf(path, sizeof path, "%s/%s.%d", dir, name, role);
  FILE* f = fopen(tmp, "wb");
  if (!f || fwrite(me, sizeof *me, 1, f) != 1 || fwrite(qpns, sizeof *qpns, (size_t)n, f) != (size_t)n) die("write");
  fclose(f);
  if (rename(tmp, path) != 0) die("rename");
}

static void fetch(const char* dir, const char* name, int role, struct peer* p, uint32_t* qpns, int n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%d", dir, name, role);
  for (int i = 0; i < 6000; ++i) {
    FILE* f = fopen(path, "rb");
    if (f) {
      const int ok = fread(p, sizeof *p, 1, f) == 1 && fread(qpns, sizeof *qpns, (size_t)n, f) == (size_t)n;
      fclose(f);
      if (ok) return;
    }
    usleep(10000);
  }
  die("no peer");
}

int main(int argc, char** argv) {
  if (argc != 7) die("usage: qp_load DIR NAME ROLE NQP DEPTH SECONDS");
  const char* dir = argv[1];
  const char* name = argv[2];
  const int role = atoi(argv[3]), n = atoi(argv[4]), depth = atoi(argv[5]);
  const double seconds = atof(argv[6]);
  if (n <= 0 || depth <= 0) die("NQP and DEPTH must be positive");

  int num = 0;
  struct ibv_device** devs = ibv_get_device_list(&num);
  if (!devs || num == 0) die("no device");
  struct ibv_context* ctx = ibv_open_device(devs[0]);
  if (!ctx) die("open device");
  struct ibv_pd* pd = ibv_alloc_pd(ctx);
  const size_t bytes = (size_t)n * MSG;
  char* buf = aligned_alloc(4096, bytes);
  if (!pd || !buf) die("pd or buffer");
  memset(buf, role + 1, bytes);
  struct ibv_mr* mr = ibv_reg_mr(pd, buf, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  struct ibv_cq* cq = ibv_create_cq(ctx, n * depth, NULL, NULL, 0);
  if (!mr || !cq) die("mr or cq");
  struct ibv_qp** qps = calloc((size_t)n, sizeof *qps);
  uint32_t* mine = calloc((size_t)n, sizeof *mine);
  uint32_t* theirs = calloc((size_t)n, sizeof *theirs);
  for (int i = 0; i < n; ++i) {
    struct ibv_qp_init_attr a = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
                                 .cap = {.max_send_wr = (uint32_t)depth, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
    qps[i] = ibv_create_qp(pd, &a);
    if (!qps[i]) die("create qp");
    struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_REMOTE_WRITE};
    if (ibv_modify_qp(qps[i], &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) die("INIT");
    mine[i] = qps[i]->qp_num;
  }
  struct peer me = {.addr = (uintptr_t)buf, .rkey = mr->rkey}, other;
  union ibv_gid gid;
  if (ibv_query_gid(ctx, 1, 0, &gid)) die("query gid");
  memcpy(me.gid, gid.raw, 16);
  publish(dir, name, role, &me, mine, n);
  fetch(dir, name, 1 - role, &other, theirs, n);
  for (int i = 0; i < n; ++i) {
    struct ibv_qp_attr m = {.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096, .dest_qp_num = theirs[i],
                            .max_dest_rd_atomic = 1, .min_rnr_timer = 12,
                            .ah_attr = {.is_global = 1, .port_num = 1, .grh = {.hop_limit = 64}}};
    memcpy(m.ah_attr.grh.dgid.raw, other.gid, 16);
    if (ibv_modify_qp(qps[i], &m, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
      die("RTR");
    m.qp_state = IBV_QPS_RTS;
    m.timeout = 14;
    m.retry_cnt = 7;
    m.rnr_retry = 7;
    m.max_rd_atomic = 1;
    if (ibv_modify_qp(qps[i], &m, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
      die("RTS");
  }

  // Both sides' QPs are in RTS before either writes: a WRITE reaching a QP that
  // is not in RTR yet would be dropped and retried on the ACK timeout.
  char ready_name[256];
  snprintf(ready_name, sizeof ready_name, "%s.ready", name);
  publish(dir, ready_name, role, &me, mine, n);
  fetch(dir, ready_name, 1 - role, &other, theirs, n);

  // Keep DEPTH WRITEs outstanding on every QP until the time is up, then drain.
  int* outstanding = calloc((size_t)n, sizeof *outstanding);
  uint64_t completed = 0, posted = 0;
  const double end = now_s() + seconds;
  struct ibv_wc wc[64];
  for (;;) {
    const int more = now_s() < end;
    for (int i = 0; more && i < n; ++i)
      for (; outstanding[i] < depth; ++outstanding[i], ++posted) {
        struct ibv_sge sge = {.addr = (uintptr_t)buf + (uint64_t)i * MSG, .length = MSG, .lkey = mr->lkey};
        struct ibv_send_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                                 .send_flags = IBV_SEND_SIGNALED,
                                 .wr.rdma = {.remote_addr = other.addr + (uint64_t)i * MSG, .rkey = other.rkey}};
        struct ibv_send_wr* bad;
        if (ibv_post_send(qps[i], &wr, &bad)) die("post send");
      }
    if (!more && completed == posted) break;
    const int got = ibv_poll_cq(cq, 64, wc);
    if (got < 0) die("poll cq");
    for (int k = 0; k < got; ++k) {
      if (wc[k].status != IBV_WC_SUCCESS) {
        fprintf(stderr, "qp_load: completion error %s on QP %d\n", ibv_wc_status_str(wc[k].status), (int)wc[k].wr_id);
        return 1;
      }
      --outstanding[wc[k].wr_id];
      ++completed;
    }
  }
  // Both sides stop together: the peer may still write into this buffer.
  char done_name[256];
  snprintf(done_name, sizeof done_name, "%s.done", name);
  publish(dir, done_name, role, &me, mine, n);
  fetch(dir, done_name, 1 - role, &other, theirs, n);
  for (int i = 0; i < n; ++i)
    if (ibv_destroy_qp(qps[i])) die("destroy qp");
  if (ibv_destroy_cq(cq) || ibv_dereg_mr(mr) || ibv_dealloc_pd(pd) || ibv_close_device(ctx)) die("destroy");
  ibv_free_device_list(devs);
  free(outstanding);
  free(theirs);
  free(mine);
  free(qps);
  free(buf);
  printf("%s.%d: %d QPs x %d outstanding, %llu WRITEs completed\n", name, role, n, depth, (unsigned long long)completed);
  return 0;
}
