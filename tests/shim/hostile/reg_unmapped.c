// Registers memory that is not there: never mapped, unmapped, PROT_NONE, and
// read-only for a region the NIC may write. Each must fail with EFAULT, as a
// hardware provider's page pinning fails; readable memory registered for
// reading only, and a normal buffer, still succeed.
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static int failures = 0;

static void expect(struct ibv_pd* pd, const char* what, void* addr, size_t len, int access, int want) {
  errno = 0;
  struct ibv_mr* mr = ibv_reg_mr(pd, addr, len, access);
  const int got = mr != NULL ? 0 : errno;
  if (mr != NULL) ibv_dereg_mr(mr);
  printf("%-44s %s\n", what, got == 0 ? "registered" : strerror(got));
  if (got != want) {
    printf("FAIL: %s: expected %s\n", what, want == 0 ? "success" : strerror(want));
    ++failures;
  }
}

int main(void) {
  struct ibv_device** list = ibv_get_device_list(NULL);
  struct ibv_context* ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
  struct ibv_pd* pd = ctx ? ibv_alloc_pd(ctx) : NULL;
  if (pd == NULL) return fprintf(stderr, "no device\n"), 1;
  const size_t page = 4096;
  char* p = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 1;
  const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  expect(pd, "a mapped buffer", p, 4 * page, rw, 0);
  munmap(p + 2 * page, page);  // a hole in the middle
  expect(pd, "a range with an unmapped page", p, 4 * page, rw, EFAULT);
  expect(pd, "the unmapped page alone", p + 2 * page, page, rw, EFAULT);
  mprotect(p + page, page, PROT_NONE);
  expect(pd, "a PROT_NONE page", p + page, page, 0, EFAULT);
  mprotect(p, page, PROT_READ);
  expect(pd, "a read-only page for local write", p, page, IBV_ACCESS_LOCAL_WRITE, EFAULT);
  expect(pd, "a read-only page for remote read", p, page, IBV_ACCESS_REMOTE_READ, 0);
  expect(pd, "an address never mapped", (void*)0x10000, page, rw, EFAULT);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  ibv_free_device_list(list);
  return failures == 0 ? 0 : 1;
}
