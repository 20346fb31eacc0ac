// Registration with shared host memory (run with RNICSIM_HOST_MEMORY=shared):
// the pages of heap and anonymous buffers move onto the shim's memfds with
// their contents, overlapping registrations reuse them, the stack, file
// mappings and shared mappings are refused with EINVAL, pages unmapped and
// mapped again at the same address are shared anew, and deregistration leaves
// the program's memory as it was.
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { kPage = 4096 };
static int failures;

#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) {                                                   \
      fprintf(stderr, "FAIL line %d: %s\n", __LINE__, #cond);        \
      ++failures;                                                    \
    }                                                                \
  } while (0)

// The inode of the shim's memfd mapped at `addr` (0: none).
static unsigned long memfd_inode_at(const void* addr) {
  FILE* f = fopen("/proc/self/maps", "r");
  char line[512];
  unsigned long found = 0;
  while (f != NULL && fgets(line, sizeof line, f) != NULL) {
    unsigned long start, end, inode;
    int path = 0;
    if (sscanf(line, "%lx-%lx %*s %*s %*s %lu %n", &start, &end, &inode, &path) < 3) continue;
    if ((uintptr_t)addr >= start && (uintptr_t)addr < end && strstr(line + path, "/memfd:rnicsim-mr") != NULL)
      found = inode;
  }
  if (f != NULL) fclose(f);
  return found;
}

static int all_bytes(const unsigned char* p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != v) return 0;
  return 1;
}

int main(void) {
  struct ibv_device** list = ibv_get_device_list(NULL);
  if (list == NULL || list[0] == NULL) return fprintf(stderr, "no device\n"), 1;
  struct ibv_context* ctx = ibv_open_device(list[0]);
  struct ibv_pd* pd = ctx != NULL ? ibv_alloc_pd(ctx) : NULL;
  if (pd == NULL) return fprintf(stderr, "no PD\n"), 1;
  const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

  // A heap buffer: its pages move with their contents.
  const size_t n = 3 * kPage + 100;
  unsigned char* heap = malloc(n);
  memset(heap, 0x5A, n);
  struct ibv_mr* a = ibv_reg_mr(pd, heap, n, rw);
  CHECK(a != NULL);
  CHECK(all_bytes(heap, n, 0x5A));
  const unsigned long inode = memfd_inode_at(heap);
  CHECK(inode != 0);
  CHECK(memfd_inode_at(heap + n - 1) == inode);
  // An overlapping registration reuses the pages (no new memfd).
  struct ibv_mr* b = ibv_reg_mr(pd, heap + kPage, kPage, rw);
  CHECK(b != NULL);
  CHECK(memfd_inode_at(heap + kPage) == inode);
  heap[10] = 0x11;  // the program keeps writing its memory
  CHECK(b != NULL && ibv_dereg_mr(b) == 0);
  CHECK(a != NULL && ibv_dereg_mr(a) == 0);
  // Deregistration leaves the memory where it is, shared.
  CHECK(heap[10] == 0x11 && all_bytes(heap + 11, n - 11, 0x5A));
  CHECK(memfd_inode_at(heap) == inode);

  // Refused: the stack, a file mapping (this program's code), shared memory.
  unsigned char on_stack[256];
  memset(on_stack, 1, sizeof on_stack);
  errno = 0;
  CHECK(ibv_reg_mr(pd, on_stack, sizeof on_stack, rw) == NULL && errno == EINVAL);
  errno = 0;
  CHECK(ibv_reg_mr(pd, (void*)(uintptr_t)&main, 64, 0) == NULL && errno == EINVAL);
  void* shared = mmap(NULL, kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  errno = 0;
  CHECK(ibv_reg_mr(pd, shared, kPage, rw) == NULL && errno == EINVAL);

  // Unmapped and mapped again at the same address: shared anew, with the new contents.
  unsigned char* p = mmap(NULL, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  memset(p, 0xA1, 2 * kPage);
  struct ibv_mr* c = ibv_reg_mr(pd, p, 2 * kPage, rw);
  CHECK(c != NULL);
  const unsigned long first = memfd_inode_at(p);
  CHECK(first != 0 && first != inode);
  CHECK(c != NULL && ibv_dereg_mr(c) == 0);
  munmap(p, 2 * kPage);
  unsigned char* q = mmap(p, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  CHECK(q == p);
  memset(q, 0xB2, 2 * kPage);
  CHECK(memfd_inode_at(q) == 0);
  struct ibv_mr* d = ibv_reg_mr(pd, q, 2 * kPage, rw);
  CHECK(d != NULL);
  CHECK(all_bytes(q, 2 * kPage, 0xB2));
  CHECK(memfd_inode_at(q) != 0 && memfd_inode_at(q) != first);
  CHECK(d != NULL && ibv_dereg_mr(d) == 0);

  free(heap);
  munmap(q, 2 * kPage);
  munmap(shared, kPage);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  ibv_free_device_list(list);
  if (failures == 0) printf("shared pages: every check passed\n");
  return failures == 0 ? 0 : 1;
}
