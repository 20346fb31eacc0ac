// Shared host memory: where the daemon cannot reach the process's memory with
// process_vm_readv/writev (or RNICSIM_HOST_MEMORY=shared asks for it), a
// registration moves the region's pages onto a memfd mapped MAP_SHARED at the
// same addresses (contents copied first, so the program's pointers and data stay
// as they were) and sends the memfd to the daemon, which maps it too.
//
// Only private anonymous memory (heap, anonymous mmap) is moved. Pages moved
// for an earlier registration are used again: /proc/self/maps shows them as a
// mapping of one of the memfds this file created, at some offset. Nothing is
// moved back at deregistration: the program keeps using its memory.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "verbs_shim/shim.hpp"

namespace rnicsim::shim {
namespace {

constexpr uint64_t kPage = 4096;
constexpr const char* kMemfdName = "rnicsim-mr";

enum class Mode { Auto, Process, Shared };

Mode mode_from_environment() {
  const char* v = std::getenv(proto::kHostMemoryEnv);
  if (v == nullptr || *v == '\0' || std::strcmp(v, "auto") == 0) return Mode::Auto;
  if (std::strcmp(v, "process") == 0) return Mode::Process;
  if (std::strcmp(v, "shared") == 0) return Mode::Shared;
  std::fprintf(stderr, "rnicsim: %s=%s is not auto, process or shared; using auto\n", proto::kHostMemoryEnv, v);
  return Mode::Auto;
}

// A memfd this file created, open for as long as some of its pages are mapped.
struct File {
  int fd = -1;
  dev_t dev = 0;
  ino_t ino = 0;
};

// One line of /proc/self/maps.
struct Mapping {
  uint64_t start = 0, end = 0, offset = 0;
  char perms[5] = {};
  unsigned dev_major = 0, dev_minor = 0;
  uint64_t inode = 0;
  std::string path;
};

// A piece of the range being registered that lies in one mapping: already
// shared (at `offset` of memfd `fd`) or to be moved (fd < 0).
struct Piece {
  uint64_t addr = 0, length = 0;
  int fd = -1;  // the memfd it is in; -1 until moved
  uint64_t offset = 0;
  int prot = 0;
};

struct SharedMemory {
  std::mutex mutex;  // held from the first ShareRuns to the RegMr that takes the runs
  Mode mode = mode_from_environment();
  bool fork_init = false;
  std::vector<File> files;
};

SharedMemory& shared_memory() {
  static SharedMemory m;
  return m;
}

std::vector<Mapping> read_maps() {
  std::vector<Mapping> maps;
  FILE* f = std::fopen("/proc/self/maps", "re");
  if (f == nullptr) return maps;
  char line[4096 + 256];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    Mapping m;
    int path_at = 0;
    if (std::sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n", &m.start, &m.end, m.perms,
                    &m.offset, &m.dev_major, &m.dev_minor, &m.inode, &path_at) < 7)
      continue;
    m.path = line + path_at;
    while (!m.path.empty() && (m.path.back() == '\n' || m.path.back() == ' ')) m.path.pop_back();
    maps.push_back(std::move(m));
  }
  std::fclose(f);
  return maps;
}

const File* file_of(const SharedMemory& s, const Mapping& m) {
  if (m.inode == 0 || m.path.rfind(std::string("/memfd:") + kMemfdName, 0) != 0) return nullptr;
  for (const File& f : s.files)
    if (f.ino == m.inode && major(f.dev) == m.dev_major && minor(f.dev) == m.dev_minor) return &f;
  return nullptr;
}

// Why pages of mapping `m` cannot be moved onto a memfd, and the errno
// ibv_reg_mr fails with (why == nullptr: they can).
struct Refusal {
  int error = 0;
  const char* why = nullptr;
};
Refusal unmovable(const Mapping& m) {
  if (m.path == "[stack]") return {EINVAL, "it is on the stack"};
  if (m.perms[3] != 'p') return {EINVAL, "it is in a shared mapping"};
  if (m.inode != 0) return {EINVAL, "it is in a file mapping"};
  if (!m.path.empty() && m.path != "[heap]") return {EFAULT, "it is in a special mapping"};
  if (m.perms[0] != 'r') return {EFAULT, "it is not readable"};
  return {};
}

// Closes the memfds none of whose pages are mapped any more.
void forget_unmapped(SharedMemory& s, const std::vector<Mapping>& maps) {
  std::vector<File> kept;
  for (const File& f : s.files) {
    bool mapped = false;
    for (const Mapping& m : maps) mapped = mapped || (m.inode == f.ino && makedev(m.dev_major, m.dev_minor) == f.dev);
    if (mapped)
      kept.push_back(f);
    else
      close(f.fd);
  }
  s.files = std::move(kept);
}

int refuse(int error, uint64_t addr, uint64_t length, const char* why) {
  std::fprintf(stderr, "rnicsim: cannot share memory [0x%" PRIx64 ", +%" PRIu64 ") with the daemon: %s\n", addr, length,
               why);
  return error;
}

// Cuts [start, end) into pieces along the process's mappings: each already
// shared (fd set) or to be moved. Returns 0 or an errno (message printed).
int plan(SharedMemory& s, const std::vector<Mapping>& maps, uint64_t start, uint64_t end, std::vector<Piece>& pieces) {
  uint64_t at = start;
  for (const Mapping& m : maps) {
    if (m.end <= at || m.start >= end) continue;
    if (m.start > at) break;  // a hole
    Piece p;
    p.addr = at;
    p.length = std::min(end, m.end) - at;
    p.prot = (m.perms[0] == 'r' ? PROT_READ : 0) | (m.perms[1] == 'w' ? PROT_WRITE : 0) |
             (m.perms[2] == 'x' ? PROT_EXEC : 0);
    if (const File* f = file_of(s, m)) {
      p.fd = f->fd;
      p.offset = m.offset + (at - m.start);
    } else if (const Refusal r = unmovable(m); r.why != nullptr) {
      return refuse(r.error, start, end - start, r.why);
    }
    pieces.push_back(p);
    at += p.length;
    if (at == end) return 0;
  }
  return refuse(EFAULT, start, end - start, "part of it is not mapped");
}

// Copies `length` bytes of this process at `addr` to `offset` of memfd `fd`:
// whole pages, with whatever else lies on them (other allocations, a memory
// checker's poisoned zones), so they are read through /proc/self/mem, which
// no checker intercepts, into a mapping of the memfd (written with pwrite
// where /proc is not there). Returns 0 or an errno.
int copy_pages(uint64_t addr, uint64_t length, int fd, uint64_t offset) {
  const int self = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
  void* dst = self < 0 ? MAP_FAILED
                       : mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
  int error = 0;
  for (uint64_t done = 0; done < length && error == 0;) {
    const ssize_t n = dst != MAP_FAILED
                          ? pread(self, static_cast<char*>(dst) + done, length - done, static_cast<off_t>(addr + done))
                          : pwrite(fd, reinterpret_cast<const char*>(addr) + done, length - done,
                                   static_cast<off_t>(offset + done));
    if (n <= 0) error = n < 0 ? errno : EIO;
    done += n > 0 ? static_cast<uint64_t>(n) : 0;
  }
  if (dst != MAP_FAILED) munmap(dst, length);
  if (self >= 0) close(self);
  return error;
}

// Moves the pieces without a memfd onto one new memfd. Returns 0 or an errno.
int move(SharedMemory& s, std::vector<Piece>& pieces, uint64_t start, uint64_t end) {
  uint64_t bytes = 0;
  for (const Piece& p : pieces)
    if (p.fd < 0) bytes += p.length;
  if (bytes == 0) return 0;
  const int fd = memfd_create(kMemfdName, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return refuse(errno, start, end - start, "memfd_create failed");
  struct stat st {};
  // Sealed against shrinking: the daemon maps it and must not fault on it.
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0 ||
      fstat(fd, &st) != 0) {
    const int error = errno;
    close(fd);
    return refuse(error, start, end - start, "the memfd could not be sized");
  }
  s.files.push_back({fd, st.st_dev, st.st_ino});
  uint64_t offset = 0;
  for (Piece& p : pieces) {
    if (p.fd >= 0) continue;
    // Copy the pages' contents, then map the memfd over them: from here to
    // the mmap a write by another thread to these pages would be lost.
    if (const int error = copy_pages(p.addr, p.length, fd, offset); error != 0)
      return refuse(error, start, end - start, "the pages could not be copied");
    if (mmap(reinterpret_cast<void*>(p.addr), p.length, p.prot, MAP_SHARED | MAP_FIXED, fd,
             static_cast<off_t>(offset)) == MAP_FAILED)
      return refuse(errno, start, end - start, "the memfd could not be mapped over the pages");
    if (s.fork_init) madvise(reinterpret_cast<void*>(p.addr), p.length, MADV_DONTFORK);
    p.fd = fd;
    p.offset = offset;
    offset += p.length;
  }
  return 0;
}

// Sends the pieces in ShareRuns requests. Returns 0 or an errno.
int send_runs(uint32_t ctx, const std::vector<Piece>& pieces) {
  for (size_t i = 0; i < pieces.size(); i += proto::kRunsPerMessage) {
    proto::ShareRunsReq req;
    req.ctx = ctx;
    int fds[proto::kRunsPerMessage];
    for (size_t k = i; k < pieces.size() && req.count < proto::kRunsPerMessage; ++k, ++req.count) {
      req.runs[req.count] = {pieces[k].addr, pieces[k].length, pieces[k].offset};
      fds[req.count] = pieces[k].fd;
    }
    if (const int rc = call(proto::Op::ShareRuns, &req, sizeof req, nullptr, 0, fds, req.count); rc != 0) return rc;
  }
  return 0;
}

// What pinning the pages does in a hardware provider: every page of
// [start, end) is mapped, readable, and writable if the NIC may write it.
// Otherwise the registration fails with EFAULT, as ibv_reg_mr does there.
int pinnable(const std::vector<Mapping>& maps, uint64_t start, uint64_t end, bool write) {
  uint64_t at = start;
  for (const Mapping& m : maps) {
    if (m.end <= at || m.start > at) continue;
    if (m.perms[0] != 'r' || (write && m.perms[1] != 'w')) return EFAULT;
    at = m.end;
    if (at >= end) return 0;
  }
  return EFAULT;
}

}  // namespace

void note_fork_init() {
  SharedMemory& s = shared_memory();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.fork_init = true;
}

int register_region(proto::Op op, proto::RegMrReq& req, proto::RegMrRep& rep) {
  SharedMemory& s = shared_memory();
  const bool readable = session().info.process_memory != 0;
  if (s.mode == Mode::Process && !readable) {
    std::fprintf(stderr, "rnicsim: %s=process, but the daemon cannot read this process's memory with "
                         "process_vm_readv; registration refused\n", proto::kHostMemoryEnv);
    return errno = EPERM;
  }
  const uint64_t start = req.addr & ~(kPage - 1);
  const uint64_t end = (req.addr + req.length + kPage - 1) & ~(kPage - 1);
  if (end <= start) return errno = EINVAL;
  std::lock_guard<std::mutex> lock(s.mutex);
  const std::vector<Mapping> maps = read_maps();
  constexpr uint32_t kNicWrites = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
  if (const int rc = pinnable(maps, start, end, (req.access & kNicWrites) != 0); rc != 0) return errno = rc;
  if (s.mode == Mode::Process || (s.mode == Mode::Auto && readable)) return call(op, req, rep);
  forget_unmapped(s, maps);
  std::vector<Piece> pieces;
  int rc = plan(s, maps, start, end, pieces);
  if (rc == 0) rc = move(s, pieces, start, end);
  if (rc == 0) rc = send_runs(req.ctx, pieces);
  if (rc == 0) {
    req.shared_runs = static_cast<uint32_t>(pieces.size());
    rc = call(op, req, rep);
  }
  if (rc != 0) errno = rc;
  return rc;
}

}  // namespace rnicsim::shim
