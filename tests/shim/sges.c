// Work requests with many SGEs and long inline data, as UCX and MPI post them:
//   - a QP asked for 6 send SGEs and 200 bytes of inline data reports at least
//     that (ibv_qp_init_attr.cap after ibv_create_qp);
//   - a SEND gathered from 6 places lands scattered over 6 receive SGEs;
//   - a SEND of max_sge SGEs (the device's limit) lands in one receive of as
//     many SGEs;
//   - an inline RDMA WRITE of 200 bytes lands;
//   - a work request of one SGE more than the QP's cap is EINVAL, and so is
//     inline data past its max_inline_data, and nothing of it is sent.
// Two RC QP pairs on the host's own port (the NIC loops the packets back).
#include <infiniband/verbs.h>

#include "loopback_rc.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kChunk = 300, kInline = 200, kSpace = 1 << 20 };

static struct ibv_context* ctx;
static struct ibv_pd* pd;
static struct ibv_cq* cq;
static struct ibv_mr* mr;
static uint8_t* mem;
static union ibv_gid gid;

static void die(const char* what) {
  perror(what);
  exit(1);
}

static void fail(const char* what) {
  fprintf(stderr, "FAIL: %s\n", what);
  exit(1);
}

static struct ibv_qp* make_qp(uint32_t send_sge, uint32_t recv_sge, uint32_t inline_bytes) {
  struct ibv_qp_init_attr a = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
                               .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = send_sge,
                                       .max_recv_sge = recv_sge, .max_inline_data = inline_bytes}};
  struct ibv_qp* qp = ibv_create_qp(pd, &a);
  if (qp == NULL) die("ibv_create_qp");
  if (a.cap.max_send_sge < send_sge || a.cap.max_recv_sge < recv_sge || a.cap.max_inline_data < inline_bytes)
    fail("the QP's caps are less than asked for");
  printf("asked %u/%u SGEs and %u inline: got %u/%u and %u\n", send_sge, recv_sge, inline_bytes,
         a.cap.max_send_sge, a.cap.max_recv_sge, a.cap.max_inline_data);
  return qp;
}

static struct ibv_wc wait_one(void) {
  struct ibv_wc wc;
  int n;
  while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) {
  }
  if (n < 0) die("ibv_poll_cq");
  if (wc.status != IBV_WC_SUCCESS) {
    fprintf(stderr, "FAIL: wr_id %llu: %s\n", (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
    exit(1);
  }
  return wc;
}

// The i-th source chunk and the i-th receive chunk: apart, and of unequal
// lengths, so that a misplaced SGE shows.
static uint8_t* source(int i) { return mem + (size_t)i * 1024; }
static uint8_t* target(int i) { return mem + kSpace / 2 + (size_t)i * 2048 + 5; }
static uint32_t length(int i) { return kChunk - 7u * (uint32_t)i; }

// A SEND of n SGEs from qs into n receive SGEs of qr; checks every byte.
static void gather_scatter(struct ibv_qp* qs, struct ibv_qp* qr, int n) {
  struct ibv_sge ss[64], rs[64];
  uint32_t total = 0;
  memset(mem + kSpace / 2, 0, kSpace / 2);
  for (int i = 0; i < n; ++i) {
    for (uint32_t b = 0; b < length(i); ++b) source(i)[b] = (uint8_t)(i * 31 + b);
    ss[i] = (struct ibv_sge){(uintptr_t)source(i), length(i), mr->lkey};
    rs[i] = (struct ibv_sge){(uintptr_t)target(i), length(i), mr->lkey};
    total += length(i);
  }
  struct ibv_recv_wr r = {.wr_id = 2, .sg_list = rs, .num_sge = n}, *rbad;
  if (ibv_post_recv(qr, &r, &rbad)) die("ibv_post_recv");
  struct ibv_send_wr w = {.wr_id = 1, .sg_list = ss, .num_sge = n, .opcode = IBV_WR_SEND,
                          .send_flags = IBV_SEND_SIGNALED},
                     *bad;
  if (ibv_post_send(qs, &w, &bad)) die("ibv_post_send");
  for (int k = 0; k < 2; ++k) {
    const struct ibv_wc wc = wait_one();
    if (wc.wr_id == 2 && wc.byte_len != total) fail("the receive's byte_len");
  }
  for (int i = 0; i < n; ++i)
    if (memcmp(source(i), target(i), length(i)) != 0) {
      fprintf(stderr, "FAIL: SGE %d of %d did not land where its receive SGE is\n", i, n);
      exit(1);
    }
  printf("a SEND of %d SGEs, %u bytes, landed\n", n, total);
}

int main(void) {
  int num;
  struct ibv_device** list = ibv_get_device_list(&num);
  if (list == NULL || num == 0) fail("no device");
  ctx = ibv_open_device(list[0]);
  if (ctx == NULL) die("ibv_open_device");
  struct ibv_device_attr dev;
  if (ibv_query_device(ctx, &dev)) die("ibv_query_device");
  if (dev.max_sge < 6 || dev.max_sge > 64) fail("max_sge");
  if (ibv_query_gid(ctx, 1, 0, &gid)) die("ibv_query_gid");
  pd = ibv_alloc_pd(ctx);
  cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
  mem = calloc(1, kSpace);
  mr = ibv_reg_mr(pd, mem, kSpace, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (pd == NULL || cq == NULL || mem == NULL || mr == NULL) die("set-up");

  struct ibv_qp* a = make_qp(6, 6, kInline);
  struct ibv_qp* b = make_qp(6, 6, 0);
  struct ibv_qp* c = make_qp((uint32_t)dev.max_sge, 1, 0);
  struct ibv_qp* d = make_qp(1, (uint32_t)dev.max_sge, 0);
  loopback_rc_connect(a, b->qp_num, &gid);
  loopback_rc_connect(b, a->qp_num, &gid);
  loopback_rc_connect(c, d->qp_num, &gid);
  loopback_rc_connect(d, c->qp_num, &gid);
  gather_scatter(a, b, 6);
  gather_scatter(c, d, dev.max_sge);

  // Inline: the bytes are taken at post time, so the source changing after
  // the post does not change what lands.
  uint8_t* dst = mem + kSpace - 4096;
  uint8_t src[kInline];
  for (int i = 0; i < kInline; ++i) src[i] = (uint8_t)(255 - i);
  struct ibv_sge s = {(uintptr_t)src, kInline, 0};
  struct ibv_send_wr w = {.wr_id = 3, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                          .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
                          .wr = {.rdma = {.remote_addr = (uintptr_t)dst, .rkey = mr->rkey}}},
                     *bad;
  if (ibv_post_send(a, &w, &bad)) die("ibv_post_send inline");
  memset(src, 0, sizeof src);
  wait_one();
  for (int i = 0; i < kInline; ++i)
    if (dst[i] != (uint8_t)(255 - i)) fail("the inline WRITE's bytes");
  printf("an inline WRITE of %d bytes landed\n", kInline);

  // One SGE past the cap, inline past max_inline_data: refused at post.
  struct ibv_qp_attr qa;
  struct ibv_qp_init_attr qi;
  if (ibv_query_qp(b, &qa, IBV_QP_CAP, &qi)) die("ibv_query_qp");
  struct ibv_sge many[64];
  for (int i = 0; i < 64; ++i) many[i] = (struct ibv_sge){(uintptr_t)source(0), 1, mr->lkey};
  struct ibv_send_wr over = {.wr_id = 4, .sg_list = many, .num_sge = (int)qi.cap.max_send_sge + 1,
                             .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED};
  if (ibv_post_send(b, &over, &bad) != EINVAL || bad != &over) fail("one SGE past the send cap was not EINVAL");
  struct ibv_recv_wr rover = {.wr_id = 5, .sg_list = many, .num_sge = (int)qi.cap.max_recv_sge + 1}, *rbad;
  if (ibv_post_recv(b, &rover, &rbad) != EINVAL) fail("one SGE past the receive cap was not EINVAL");
  uint8_t big[1024] = {0};
  struct ibv_sge bs = {(uintptr_t)big, qi.cap.max_inline_data + 1, 0};
  struct ibv_send_wr binl = {.wr_id = 6, .sg_list = &bs, .num_sge = 1, .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE};
  if (ibv_post_send(b, &binl, &bad) != EINVAL) fail("inline past max_inline_data was not EINVAL");
  struct ibv_wc wc;
  if (ibv_poll_cq(cq, 1, &wc) != 0) fail("a refused work request completed");
  printf("caps of b: %u send SGEs, %u receive SGEs, %u inline; one more is EINVAL\n", qi.cap.max_send_sge,
         qi.cap.max_recv_sge, qi.cap.max_inline_data);

  ibv_destroy_qp(a);
  ibv_destroy_qp(b);
  ibv_destroy_qp(c);
  ibv_destroy_qp(d);
  ibv_dereg_mr(mr);
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  ibv_free_device_list(list);
  free(mem);
  puts("PASS");
  return 0;
}
