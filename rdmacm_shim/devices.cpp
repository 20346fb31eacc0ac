// rdma_get_devices and rdma_free_devices, over the process's device contexts.
#include "rdmacm_shim/devices.hpp"

#include <rdma/rdma_cma.h>

#include <pthread.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>

namespace rnicsim::rdmacm {
namespace {

struct Devices {
  std::mutex mutex;
  ibv_device** list = nullptr;  // kept while its devices' contexts are open
  std::vector<ibv_context*> contexts;
  std::map<ibv_context*, ibv_pd*> pds;  // see default_pd
  // The library goes (the process exits): its PDs go with it, before the verbs
  // library they belong to (which this one depends on). One a program's QP
  // still uses stays (EBUSY).
  ~Devices() {
    for (auto& [verbs, pd] : pds) ibv_dealloc_pd(pd);
  }
};

Devices& devices() {
  static Devices d;
  return d;
}

// fork(): the parent's contexts and PDs are the parent's (the child's verbs
// session cannot use them); the child opens its own on first use.
void before_fork() { devices().mutex.lock(); }
void after_fork_in_parent() { devices().mutex.unlock(); }
void after_fork_in_child() {
  Devices& d = devices();
  d.list = nullptr;
  d.contexts.clear();
  d.pds.clear();
  d.mutex.unlock();
}
[[gnu::constructor]] void handle_fork() {
  devices();
  pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}

}  // namespace

std::vector<ibv_context*> device_contexts() {
  Devices& d = devices();
  std::lock_guard lock(d.mutex);
  if (d.contexts.empty()) {
    // Not found before (no daemon yet, say): look again.
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    if (list == nullptr) return {};
    for (int i = 0; i < n; ++i)
      if (ibv_context* c = ibv_open_device(list[i])) d.contexts.push_back(c);
    if (d.contexts.empty()) {
      ibv_free_device_list(list);
      errno = ENODEV;
      return {};
    }
    d.list = list;
  }
  return d.contexts;
}

ibv_pd* default_pd(ibv_context* verbs) {
  Devices& d = devices();
  std::lock_guard lock(d.mutex);
  ibv_pd*& pd = d.pds[verbs];
  if (pd == nullptr) pd = ibv_alloc_pd(verbs);
  return pd;
}

}  // namespace rnicsim::rdmacm

extern "C" {

struct ibv_context** rdma_get_devices(int* num_devices) {
  if (num_devices != nullptr) *num_devices = 0;
  const std::vector<ibv_context*> contexts = rnicsim::rdmacm::device_contexts();
  if (contexts.empty()) return nullptr;
  auto** out = static_cast<ibv_context**>(std::malloc((contexts.size() + 1) * sizeof(ibv_context*)));
  if (out == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  for (size_t i = 0; i < contexts.size(); ++i) out[i] = contexts[i];
  out[contexts.size()] = nullptr;
  if (num_devices != nullptr) *num_devices = static_cast<int>(contexts.size());
  return out;
}

// The contexts stay open: they are the process's, as the ids' verbs.
void rdma_free_devices(struct ibv_context** list) { std::free(list); }

}  // extern "C"
