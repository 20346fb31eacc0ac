// The limits ibv_query_device reports are true ones: every queue size at its
// limit is created, one past it is refused with EINVAL (the verbs man pages).
// An extended QP whose creation flags ask for nothing is created (pyverbs'
// random attributes set the mask with no flag); a flag the device lacks is
// EOPNOTSUPP.
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

static void expect(const char* what, int ok, int err, int want_ok) {
  printf("%-40s %s\n", what, ok ? "created" : strerror(err));
  if (want_ok ? !ok : (ok || err != EINVAL)) {
    printf("FAIL: %s: expected %s\n", what, want_ok ? "success" : "EINVAL");
    ++failures;
  }
}

static void try_qp(struct ibv_pd* pd, struct ibv_cq* cq, const char* what, struct ibv_qp_cap cap, int want_ok) {
  struct ibv_qp_init_attr a = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .cap = cap};
  errno = 0;
  struct ibv_qp* qp = ibv_create_qp(pd, &a);
  expect(what, qp != NULL, errno, want_ok);
  if (qp != NULL) ibv_destroy_qp(qp);
}

int main(void) {
  struct ibv_device** list = ibv_get_device_list(NULL);
  struct ibv_context* ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
  struct ibv_pd* pd = ctx ? ibv_alloc_pd(ctx) : NULL;
  struct ibv_device_attr d;
  if (pd == NULL || ibv_query_device(ctx, &d) != 0) return fprintf(stderr, "no device\n"), 1;
  printf("max_qp_wr %d, max_sge %d, max_cqe %d, max_srq_wr %d\n", d.max_qp_wr, d.max_sge, d.max_cqe, d.max_srq_wr);
  errno = 0;
  struct ibv_cq* cq = ibv_create_cq(ctx, d.max_cqe, NULL, NULL, 0);
  expect("CQ of max_cqe", cq != NULL, errno, 1);
  errno = 0;
  struct ibv_cq* big = ibv_create_cq(ctx, d.max_cqe + 1, NULL, NULL, 0);
  expect("CQ of max_cqe + 1", big != NULL, errno, 0);
  if (cq == NULL) return 1;
  const unsigned wr = (unsigned)d.max_qp_wr, sge = (unsigned)d.max_sge;
  try_qp(pd, cq, "QP of max_qp_wr and max_sge", (struct ibv_qp_cap){wr, wr, sge, sge, 0}, 1);
  try_qp(pd, cq, "QP of 3 072 WRs", (struct ibv_qp_cap){3072, 3072, 1, 1, 0}, 1);
  try_qp(pd, cq, "QP of max_qp_wr + 1 send WRs", (struct ibv_qp_cap){wr + 1, 1, 1, 1, 0}, 0);
  try_qp(pd, cq, "QP of max_qp_wr + 1 receive WRs", (struct ibv_qp_cap){1, wr + 1, 1, 1, 0}, 0);
  try_qp(pd, cq, "QP of max_sge + 1 send SGEs", (struct ibv_qp_cap){1, 1, sge + 1, 1, 0}, 0);
  try_qp(pd, cq, "QP of max_sge + 1 receive SGEs", (struct ibv_qp_cap){1, 1, 1, sge + 1, 0}, 0);
  struct ibv_qp_init_attr_ex x = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
                                  .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
                                  .cap = {16, 16, 1, 1, 0}};
  errno = 0;
  struct ibv_qp* qx = ibv_create_qp_ex(ctx, &x);
  expect("extended QP, creation flags 0", qx != NULL, errno, 1);
  if (qx != NULL) ibv_destroy_qp(qx);
  x.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
  errno = 0;
  qx = ibv_create_qp_ex(ctx, &x);
  printf("%-40s %s\n", "extended QP, a creation flag", qx ? "created" : strerror(errno));
  if (qx != NULL || errno != EOPNOTSUPP) {
    printf("FAIL: a creation flag the device lacks: expected EOPNOTSUPP\n");
    ++failures;
  }
  struct ibv_srq_init_attr s = {.attr = {.max_wr = (unsigned)d.max_srq_wr, .max_sge = 1}};
  errno = 0;
  struct ibv_srq* srq = ibv_create_srq(pd, &s);
  expect("SRQ of max_srq_wr", srq != NULL, errno, 1);
  if (srq != NULL) ibv_destroy_srq(srq);
  s.attr.max_wr = (unsigned)d.max_srq_wr + 1;
  errno = 0;
  srq = ibv_create_srq(pd, &s);
  expect("SRQ of max_srq_wr + 1", srq != NULL, errno, 0);
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  ibv_free_device_list(list);
  return failures == 0 ? 0 : 1;
}
