// Passthrough mode (RNICSIM_MODE=passthrough) of a drop-in library (the verbs
// shim's libibverbs, the CM shim's librdmacm): every exported function jumps
// to the real library's function of the same name instead of the shim's own
// (the entry points are generated trampolines; see cmake/DropInLibrary.cmake),
// so a program runs on real hardware through this library. Objects then come
// from the real library, whose providers fill the inline ops (ibv_post_send,
// ibv_poll_cq, ...), so those go to the hardware too.
//
// The real library is loaded by path: $RNICSIM_REAL_LIBRARY_ENV (for the verbs
// shim RNICSIM_REAL_LIBIBVERBS), else the system's, RNICSIM_REAL_LIBRARY. It
// is loaded with RNICSIM_MODE and RNICSIM_TRACE unset, so that a second copy
// of the shim can stand in for it (in simulation mode) in tests.
#include <dlfcn.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" {
__attribute__((visibility("hidden"))) unsigned char rnicsim_passthrough = 0;
extern const size_t rnicsim_export_count;
extern const char* const rnicsim_export_names[];
extern void* const rnicsim_export_impls[];
extern void* rnicsim_real[];
}

namespace {

__attribute__((constructor)) void choose_mode() {
  const char* mode = std::getenv("RNICSIM_MODE");
  if (mode == nullptr || std::strcmp(mode, "passthrough") != 0) return;
  const char* env_path = std::getenv(RNICSIM_REAL_LIBRARY_ENV);
  const std::string path = env_path != nullptr && *env_path != '\0' ? env_path : RNICSIM_REAL_LIBRARY;
  // A stand-in copy of the shim must run in simulation mode and leave the
  // trace to this library.
  const std::string saved = mode;
  const char* trace = std::getenv("RNICSIM_TRACE");
  const std::string saved_trace = trace != nullptr ? trace : "";
  unsetenv("RNICSIM_MODE");
  unsetenv("RNICSIM_TRACE");
  void* real = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  setenv("RNICSIM_MODE", saved.c_str(), 1);
  if (trace != nullptr) setenv("RNICSIM_TRACE", saved_trace.c_str(), 1);
  if (real == nullptr) {
    std::fprintf(stderr, "rnicsim: passthrough: cannot load %s (%s); using the simulated device\n", path.c_str(),
                 dlerror());
    return;
  }
  size_t missing = 0;
  for (size_t i = 0; i < rnicsim_export_count; ++i) {
    void* f = dlsym(real, rnicsim_export_names[i]);
    if (f == nullptr) ++missing;
    rnicsim_real[i] = f != nullptr ? f : rnicsim_export_impls[i];
  }
  if (missing > 0)
    std::fprintf(stderr, "rnicsim: passthrough: %zu functions missing from %s; the shim's own serve them\n", missing,
                 path.c_str());
  rnicsim_passthrough = 1;
}

}  // namespace
