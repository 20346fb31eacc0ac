// RNICSIM_TRACE=FILE: a JSON-lines trace, one object per line, appended to FILE:
//   {"t_ns":..., "pid":..., "tid":..., "call":"ibv_create_qp"}   every exported verb
//                                                                (before it runs)
//   {..., "wr":"send", "qp":17, "wr_id":1, "opcode":2, "flags":2, "bytes":4096}
//   {..., "wr":"recv", "qp":17, "wr_id":2, "bytes":4096}         work requests
//   {..., "wc":"cq", "cq":1, "qp":17, "wr_id":1, "status":0, "opcode":0, "byte_len":4096}
// t_ns is CLOCK_MONOTONIC. Calls are traced in every mode (the generated entry
// points call rnicsim_trace_call); work requests and completions in simulation
// mode (in passthrough mode they go straight to the real provider).
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

extern "C" {
__attribute__((visibility("hidden"))) unsigned char rnicsim_tracing = 0;
extern const char* const rnicsim_export_names[];
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

extern "C" __attribute__((visibility("hidden"))) void rnicsim_trace_call(unsigned index) {
  if (index < rnicsim_export_count) rnicsim::shim::trace_event("\"call\":\"%s\"", rnicsim_export_names[index]);
}
