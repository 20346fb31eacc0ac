// RNICSIM_TRACE=FILE: a JSON-lines trace, one object per line, appended to FILE
// by every drop-in library of the process (libibverbs, librdmacm), each line
// with one write: every exported call and its return, and the shim's work
// requests and completions (the lines: above trace_event).
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

extern "C" {
__attribute__((visibility("hidden"))) unsigned char rnicsim_tracing = 0;
extern const char* const rnicsim_export_names[];
extern const char rnicsim_export_returns[];  // per export: v, i, h, p or l (cmake/DropInLibrary.cmake)
extern const size_t rnicsim_export_count;
}

namespace rnicsim::shim {
namespace {

int g_trace_fd = -1;

__attribute__((constructor)) void open_trace() {
  const char* path = std::getenv("RNICSIM_TRACE");
  if (path == nullptr || *path == '\0') return;
  g_trace_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (g_trace_fd < 0) {
    std::fprintf(stderr, "rnicsim: cannot open the trace file %s\n", path);
    return;
  }
  rnicsim_tracing = 1;
}

}  // namespace

bool tracing() { return rnicsim_tracing != 0; }

// The lines:
//   {"t_ns":..., "pid":..., "tid":..., "call":"ibv_create_qp"}   every exported
//                                                       function (before it runs)
//   {..., "return":"ibv_create_qp", "value":"0x5581...", "errno":0}  and when it
//         returns: an int, a pointer, a 16- or 64-bit value, or none (void)
// and from the verbs shim:
//   {..., "wr":"send", "qp":17, "wr_id":1, "opcode":2, "flags":2, "bytes":4096}
//   {..., "wr":"recv", "qp":17, "wr_id":2, "bytes":4096}         work requests (SRQ: "srq")
//   {..., "wc":"cq", "cq":1, "qp":17, "wr_id":1, "status":0, "opcode":0, "byte_len":4096}
// t_ns is CLOCK_MONOTONIC. Calls are traced in every mode (the generated entry
// points call rnicsim_trace_call); work requests and completions in simulation
// mode (in passthrough mode they go straight to the real provider).
void trace_event(const char* fmt, ...) {
  if (g_trace_fd < 0) return;
  const int saved = errno;
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  char line[512];
  int n = std::snprintf(line, sizeof line, "{\"t_ns\":%lld,\"pid\":%d,\"tid\":%ld,",
                        static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec, getpid(),
                        static_cast<long>(syscall(SYS_gettid)));
  va_list ap;
  va_start(ap, fmt);
  n += std::vsnprintf(line + n, sizeof line - static_cast<size_t>(n) - 2, fmt, ap);
  va_end(ap);
  if (n > static_cast<int>(sizeof line) - 3) n = static_cast<int>(sizeof line) - 3;
  line[n++] = '}';
  line[n++] = '\n';
  // One write per line: lines of several threads or processes do not interleave.
  [[maybe_unused]] const ssize_t w = write(g_trace_fd, line, static_cast<size_t>(n));
  errno = saved;
}

}  // namespace rnicsim::shim

namespace {
// The calls under way on this thread, innermost last: which export, and where
// it returns to (the trampoline calls it in place of its caller's return).
struct Pending {
  unsigned index;
  void* return_to;
};
constexpr int kMaxDepth = 64;
thread_local Pending t_pending[kMaxDepth];
thread_local int t_depth = 0;
}  // namespace

extern "C" __attribute__((visibility("hidden"))) void rnicsim_trace_call(unsigned index, void* return_to) {
  if (t_depth == kMaxDepth) {
    std::fprintf(stderr, "rnicsim: calls nested %d deep while tracing\n", kMaxDepth);
    std::abort();
  }
  t_pending[t_depth++] = Pending{index, return_to};
  if (index < rnicsim_export_count) rnicsim::shim::trace_event("\"call\":\"%s\"", rnicsim_export_names[index]);
}

// Writes the return of the innermost call and gives the address it returns to.
extern "C" __attribute__((visibility("hidden"))) void* rnicsim_trace_return(uint64_t value) {
  const int err = errno;
  const Pending p = t_pending[--t_depth];
  if (p.index < rnicsim_export_count) {
    const char* name = rnicsim_export_names[p.index];
    switch (rnicsim_export_returns[p.index]) {
      case 'v': rnicsim::shim::trace_event("\"return\":\"%s\",\"errno\":%d", name, err); break;
      case 'i':
        rnicsim::shim::trace_event("\"return\":\"%s\",\"value\":%d,\"errno\":%d", name, static_cast<int32_t>(value), err);
        break;
      case 'h':
        rnicsim::shim::trace_event("\"return\":\"%s\",\"value\":%u,\"errno\":%d", name,
                                   static_cast<unsigned>(static_cast<uint16_t>(value)), err);
        break;
      case 'p':
        rnicsim::shim::trace_event("\"return\":\"%s\",\"value\":\"0x%llx\",\"errno\":%d", name,
                                   static_cast<unsigned long long>(value), err);
        break;
      default:
        rnicsim::shim::trace_event("\"return\":\"%s\",\"value\":%lld,\"errno\":%d", name,
                                   static_cast<long long>(value), err);
    }
  }
  errno = err;
  return p.return_to;
}
