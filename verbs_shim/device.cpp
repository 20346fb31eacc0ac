// Devices and contexts: the device list, open/close, and what a device and its
// port say about themselves. One device per process: the NIC of the scenario
// host the daemon gave this process.
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "verbs_shim/shim.hpp"

#undef ibv_query_port

using namespace rnicsim::shim;
namespace nic = rnicsim::nic;

namespace rnicsim::shim {
namespace {

Device* the_device() {
  static Device* d = [] {
    auto* dev = new Device{};
    const proto::DeviceInfo& info = session().info;
    dev->info = info;
    dev->dev.node_type = IBV_NODE_CA;
    dev->dev.transport_type = IBV_TRANSPORT_IB;
    std::snprintf(dev->dev.name, sizeof dev->dev.name, "%s", info.device);
    std::snprintf(dev->dev.dev_name, sizeof dev->dev.dev_name, "uverbs0");
    std::snprintf(dev->dev.dev_path, sizeof dev->dev.dev_path, "/sys/class/infiniband_verbs/uverbs0");
    std::snprintf(dev->dev.ibdev_path, sizeof dev->dev.ibdev_path, "/sys/class/infiniband/%s", info.device);
    return dev;
  }();
  return d;
}

}  // namespace

int query_port(ibv_context* context, uint8_t port, ibv_port_attr* out, size_t len) {
  if (port != proto::kPortNum) return EINVAL;
  const ibv_port_attr a = proto::port_attr(context_of(context)->device->info);
  std::memcpy(out, &a, std::min(len, sizeof a));
  return 0;
}

int query_device_ex(ibv_context* context, const ibv_query_device_ex_input* input, ibv_device_attr_ex* attr,
                    size_t attr_size) {
  if (input != nullptr && input->comp_mask != 0) return EINVAL;
  if (attr_size < sizeof(ibv_device_attr)) return EINVAL;
  ibv_device_attr_ex a{};
  const int rc = ibv_query_device(context, &a.orig_attr);
  if (rc != 0) return rc;
  a.phys_port_cnt_ex = 1;
  std::memcpy(attr, &a, std::min(attr_size, sizeof a));
  return 0;
}

}  // namespace rnicsim::shim

extern "C" {

ibv_device** ibv_get_device_list(int* num) {
  if (num != nullptr) *num = 0;
  auto** list = static_cast<ibv_device**>(std::calloc(2, sizeof(ibv_device*)));
  if (list == nullptr) return fail(ENOMEM, nullptr);
  if (ensure_session()) {
    list[0] = &the_device()->dev;
    if (num != nullptr) *num = 1;
  }
  return list;
}

void ibv_free_device_list(ibv_device** list) { std::free(list); }

const char* ibv_get_device_name(ibv_device* device) { return device->name; }

__be64 ibv_get_device_guid(ibv_device* device) {
  return reinterpret_cast<Device*>(device)->info.node_guid;
}

int ibv_get_device_index(ibv_device*) { return 0; }

ibv_context* ibv_open_device(ibv_device* device) {
  if (!ensure_session()) return nullptr;
  int async_pipe[2];
  if (pipe2(async_pipe, O_CLOEXEC) != 0) return nullptr;
  proto::OpenContextReq req;
  proto::OpenContextRep rep;
  int fds[2] = {-1, -1};
  if (call(proto::Op::OpenContext, &req, sizeof req, &rep, sizeof rep, &async_pipe[1], 1, fds, 2) != 0) {
    close(async_pipe[0]);
    close(async_pipe[1]);
    return nullptr;
  }
  void* seg = mmap(nullptr, rep.segment_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
  if (seg == MAP_FAILED) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    close(async_pipe[0]);
    close(async_pipe[1]);
    return fail(err, nullptr);
  }
  auto* c = new (std::nothrow) Context{};
  if (c == nullptr) return fail(ENOMEM, nullptr);
  c->id = rep.ctx;
  c->segment = static_cast<std::byte*>(seg);
  c->memfd = fds[0];
  c->wake_fd = fds[1];
  c->async_write_fd = async_pipe[1];  // the daemon has its own copy; this one tells of its death
  c->device = reinterpret_cast<Device*>(device);
  cpu_set_t cpus;
  c->few_cpus = sched_getaffinity(0, sizeof cpus, &cpus) != 0 || CPU_COUNT(&cpus) < 3;
  verbs_context& v = c->vctx;
  v.sz = sizeof(verbs_context);
  v.query_port = query_port;
  v.query_device_ex = query_device_ex;
  v.create_qp_ex = create_qp_ex;
  v.create_cq_ex = create_cq_ex;
  ibv_context& ctx = v.context;
  ctx.device = device;
  ctx.cmd_fd = session().fd;
  ctx.async_fd = async_pipe[0];
  ctx.num_comp_vectors = 1;
  ctx.abi_compat = __VERBS_ABI_IS_EXTENDED;
  pthread_mutex_init(&ctx.mutex, nullptr);
  ctx.ops.poll_cq = poll_cq;
  ctx.ops.req_notify_cq = req_notify_cq;
  ctx.ops.post_send = post_send;
  ctx.ops.post_recv = post_recv;
  ctx.ops.post_srq_recv = post_srq_recv;
  register_context(c);
  return &ctx;
}

int ibv_close_device(ibv_context* context) {
  Context* c = context_of(context);
  unregister_context(c);
  proto::ObjectReq req{c->id, 0, 0};
  call(proto::Op::CloseContext, req);
  close(c->async_write_fd);
  munmap(c->segment, proto::kSegmentBytes);
  close(c->memfd);
  close(c->wake_fd);
  close(context->async_fd);
  pthread_mutex_destroy(&context->mutex);
  delete c;
  return 0;
}

int ibv_query_device(ibv_context* context, ibv_device_attr* attr) {
  *attr = proto::device_attr(context_of(context)->device->info);
  return 0;
}

// The exported form takes rdma-core's older 48-byte port attributes.
int ibv_query_port(ibv_context* context, uint8_t port, _compat_ibv_port_attr* attr) {
  return query_port(context, port, reinterpret_cast<ibv_port_attr*>(attr),
                    offsetof(ibv_port_attr, port_cap_flags2));
}

int ibv_query_gid(ibv_context* context, uint8_t port, int index, ibv_gid* gid) {
  const proto::DeviceInfo& info = context_of(context)->device->info;
  if (port != 1 || index < 0 || static_cast<uint32_t>(index) >= proto::gid_count(info)) return fail(EINVAL, -1);
  *gid = proto::gid_entry(info, static_cast<uint32_t>(index)).gid;
  return 0;
}

int _ibv_query_gid_ex(ibv_context* context, uint32_t port, uint32_t index, ibv_gid_entry* entry, uint32_t flags,
                      size_t entry_size) {
  if (flags != 0 || entry_size < sizeof(ibv_gid_entry)) return EINVAL;
  const proto::DeviceInfo& info = context_of(context)->device->info;
  if (port != 1 || index >= proto::gid_count(info)) return ENODATA;
  const proto::GidEntry e = proto::gid_entry(info, index);
  *entry = ibv_gid_entry{};
  entry->gid = e.gid;
  entry->gid_index = index;
  entry->port_num = 1;
  entry->gid_type = e.type;
  entry->ndev_ifindex = 0;
  return 0;
}

ssize_t _ibv_query_gid_table(ibv_context* context, ibv_gid_entry* entries, size_t max_entries, uint32_t flags,
                             size_t entry_size) {
  if (flags != 0 || entry_size < sizeof(ibv_gid_entry)) return -EINVAL;
  const uint32_t n = proto::gid_count(context_of(context)->device->info);
  if (max_entries < n) return -EINVAL;
  for (uint32_t i = 0; i < n; ++i) {
    auto* e = reinterpret_cast<ibv_gid_entry*>(reinterpret_cast<char*>(entries) + i * entry_size);
    if (const int rc = _ibv_query_gid_ex(context, 1, i, e, 0, entry_size); rc != 0) return -rc;
  }
  return n;
}

// IBVERBS_PRIVATE: 0 = IB/RoCEv1, 1 = RoCEv2 (enum ibv_gid_type_sysfs).
int ibv_query_gid_type(ibv_context* context, uint8_t port, unsigned int index, int* type) {
  const proto::DeviceInfo& info = context_of(context)->device->info;
  if (port != 1 || index >= proto::gid_count(info)) return fail(EINVAL, -1);
  *type = proto::gid_entry(info, index).type == IBV_GID_TYPE_ROCE_V2 ? 1 : 0;
  return 0;
}

int ibv_query_pkey(ibv_context*, uint8_t port, int index, __be16* pkey) {
  if (port != 1 || index != 0) return fail(EINVAL, -1);
  *pkey = htobe16(0xFFFF);
  return 0;
}

int ibv_get_pkey_index(ibv_context*, uint8_t port, __be16 pkey) {
  if (port != 1) return fail(EINVAL, -1);
  return (be16toh(pkey) & 0x7FFF) == 0x7FFF ? 0 : fail(ENOENT, -1);
}

// sysfs as rdma-core reads it: under `rnicsim exec` the host's own view shows
// the device there (emulation/host_view). One value, its trailing newline off;
// -1 with errno where there is no such file.
int ibv_read_sysfs_file(const char* dir, const char* file, char* buf, size_t size) {
  char path[512];
  if (size == 0 || std::snprintf(path, sizeof path, "%s/%s", dir, file) >= static_cast<int>(sizeof path))
    return fail(ENAMETOOLONG, -1);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, size);
  close(fd);
  if (n <= 0) return static_cast<int>(n);
  if (static_cast<size_t>(n) == size) --n;  // cut to fit its terminator
  buf[n] = '\0';
  if (buf[n - 1] == '\n') buf[--n] = '\0';
  return static_cast<int>(n);
}

// SYSFS_PATH where set (its trailing slashes off), else /sys.
int ibv_get_sysfs_path(char* path, size_t len) {
  const char* env = std::getenv("SYSFS_PATH");
  const char* root = env != nullptr && *env != '\0' ? env : "/sys";
  size_t n = std::strlen(root);
  while (n > 1 && root[n - 1] == '/') --n;
  if (n >= len) return fail(ENAMETOOLONG, -1);
  std::memcpy(path, root, n);
  path[n] = '\0';
  return 0;
}

int ibv_get_async_event(ibv_context* context, ibv_async_event* event) {
  Context* c = context_of(context);
  for (;;) {
    uint32_t record[2];
    ssize_t n;
    do n = read(context->async_fd, record, sizeof record);
    while (n < 0 && errno == EINTR);
    if (n != sizeof record) return -1;
    event->event_type = static_cast<ibv_event_type>(record[0]);
    switch (event->event_type) {
      case IBV_EVENT_CQ_ERR: {
        Cq* cq = cq_for_async_event(c, record[1]);
        if (cq == nullptr) continue;
        event->element.cq = &cq->cq;
        return 0;
      }
      case IBV_EVENT_SRQ_ERR:
      case IBV_EVENT_SRQ_LIMIT_REACHED: {
        Srq* srq = srq_for_async_event(c, record[1]);
        if (srq == nullptr) continue;
        event->element.srq = &srq->srq;
        return 0;
      }
      case IBV_EVENT_PORT_ACTIVE:
      case IBV_EVENT_PORT_ERR:
      case IBV_EVENT_DEVICE_FATAL:
        event->element.port_num = static_cast<int>(record[1]);
        return 0;
      default: {
        Qp* qp = qp_for_async_event(c, record[1]);
        if (qp == nullptr) continue;
        event->element.qp = &qp->qp;
        return 0;
      }
    }
  }
}

void ibv_ack_async_event(ibv_async_event* event) {
  auto bump = [](pthread_mutex_t* m, pthread_cond_t* cv, uint32_t* count) {
    pthread_mutex_lock(m);
    ++*count;
    pthread_cond_signal(cv);
    pthread_mutex_unlock(m);
  };
  switch (event->event_type) {
    case IBV_EVENT_CQ_ERR:
      bump(&event->element.cq->mutex, &event->element.cq->cond, &event->element.cq->async_events_completed);
      break;
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED:
      bump(&event->element.srq->mutex, &event->element.srq->cond, &event->element.srq->events_completed);
      break;
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_DEVICE_FATAL:
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
    case IBV_EVENT_GID_CHANGE:
      break;
    default:
      bump(&event->element.qp->mutex, &event->element.qp->cond, &event->element.qp->events_completed);
  }
}

}  // extern "C"
