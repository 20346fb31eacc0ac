// The verbs shim's own objects. Every object an application gets is a verbs.h
// struct at the start of (or, for the context, inside) one of these, so the
// application reads and writes its fields as it would with rdma-core.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "nic_model/queue_format.hpp"
#include "verbs_shim/device_facts.hpp"
#include "verbs_shim/protocol.hpp"
#include "verbs_shim/wire.hpp"

namespace rnicsim::shim {

namespace proto = verbs_proto;
namespace nic = ::rnicsim::nic;

// The one connection of this process to the daemon (opened by the first
// ibv_get_device_list), and the device it gave the process.
struct Session {
  int fd = -1;
  bool connected = false;
  proto::DeviceInfo info{};
  // The word the daemon reads at Hello to learn whether process_vm_readv works.
  uint64_t probe = 0;
  std::mutex mutex;
};
Session& session();
// Connects and says hello, once. Returns false (errno set) when no daemon answers.
bool ensure_session();
// One request and its reply. `fds_out` takes up to kMaxFds descriptors that came
// with the reply. Returns 0 or an errno (also set in errno).
int call(proto::Op op, const void* req, size_t req_len, void* rep, size_t rep_len, const int* fds = nullptr,
         size_t nfds = 0, int* fds_out = nullptr, size_t max_fds_out = 0);
template <class Req>
int call(proto::Op op, const Req& req) {
  return call(op, &req, sizeof req, nullptr, 0);
}
template <class Req, class Rep>
int call(proto::Op op, const Req& req, Rep& rep) {
  return call(op, &req, sizeof req, &rep, sizeof rep);
}

struct Device {
  ibv_device dev;  // first: the application's ibv_device*
  // Where rdma-core's verbs_device keeps its provider's ops: a vendor library
  // loaded beside the shim (libmlx5's mlx5dv_is_supported) reads it to ask
  // whether the device is its own. No provider's.
  const void* provider_ops = nullptr;
  proto::DeviceInfo info;
};

struct Context {
  verbs_context vctx;  // ends with the application's ibv_context
  uint32_t id = 0;
  std::byte* segment = nullptr;
  int memfd = -1;
  int wake_fd = -1;
  int async_write_fd = -1;  // the shim's own end of the async event pipe (device_loss.cpp)
  Device* device = nullptr;
  // The process may run on fewer than three CPUs: two spinning programs and
  // the daemon cannot each have one, so an empty poll yields now and then.
  bool few_cpus = false;
  // A producer index was published (work for the daemon) since an empty poll
  // last gave the CPU away (see empty_poll).
  mutable std::atomic<bool> posted{false};
  proto::SegmentHeader& header() const { return *reinterpret_cast<proto::SegmentHeader*>(segment); }
  proto::DoorbellRecord* doorbell(uint32_t i) const {
    return reinterpret_cast<proto::DoorbellRecord*>(segment + proto::kDoorbellOffset) + i;
  }
  // After publishing a producer index: wake the daemon if it sleeps. The read
  // of daemon_sleeping must not pass the producer store before it: a seq_cst
  // read-modify-write orders the two (a full barrier, as a fence would be,
  // and one ThreadSanitizer understands).
  void wake() const {
    posted.store(true, std::memory_order_relaxed);
    if (header().daemon_sleeping.fetch_add(0, std::memory_order_seq_cst) != 0) {
      const uint64_t one = 1;
      [[maybe_unused]] const ssize_t n = ::write(wake_fd, &one, sizeof one);
    }
  }
};
inline Context* context_of(ibv_context* c) {
  return reinterpret_cast<Context*>(reinterpret_cast<std::byte*>(c) - offsetof(Context, vctx) -
                                    offsetof(verbs_context, context));
}

struct Pd {
  ibv_pd pd;
};

struct Mr {
  ibv_mr mr;
  unsigned access = 0;
};

// Events the program was handed that name an object (ibv_get_async_event,
// ibv_get_cq_event), counted when the lookup finds the object. A destroy
// unregisters the object, then waits until the program has acknowledged as
// many, as libibverbs does: an acknowledgement writes into the object, so it
// must come before the object's memory is freed.
struct EventsReported {
  std::atomic<uint32_t> async{0};
  std::atomic<uint32_t> comp{0};  // CQs only
};
// Blocks until `completed` (guarded by `m`) has caught up with `reported`.
void wait_for_acks(pthread_mutex_t& m, pthread_cond_t& cv, const uint32_t& completed,
                   const std::atomic<uint32_t>& reported);

struct CompChannel {
  ibv_comp_channel channel;
  int write_fd = -1;
};

struct Cq {
  union {
    ibv_cq cq;
    ibv_cq_ex cqx;  // ibv_create_cq_ex: the same fields first, then the poll functions
  };
  nic::Cqe current{};  // ibv_start_poll/ibv_next_poll: the completion being read
  Context* ctx = nullptr;
  nic::Cqe* ring = nullptr;
  uint32_t entries = 0;
  uint64_t consumer = 0;
  proto::DoorbellRecord* db = nullptr;
  uint32_t cookie = 0;
  uint32_t empty_polls = 0;
  std::mutex poll_mutex;
  EventsReported reported;
  Cq() : cqx{} {}
  // The index after the last CQE the program can see now: the consumer index
  // plus the valid CQEs after it (poll_mutex held).
  uint64_t visible_end() const {
    uint64_t end = consumer;
    while (end - consumer < entries &&
           std::atomic_ref<uint8_t>(ring[end % entries].owner).load(std::memory_order_acquire) ==
               nic::cqe_owner_for(end, entries))
      ++end;
    return end;
  }
};

// A ring of WQE slots in the shared segment, nic::wqe_stride bytes each: what
// the daemon's NIC fetches from.
struct WqeSlots {
  std::byte* base = nullptr;
  uint32_t entries = 0;
  uint32_t stride = nic::kMinWqeStride;
  std::byte* at(uint64_t index) const { return base + (index % entries) * stride; }
  template <class W>
  void store(uint64_t index, const W& w) const { nic::store_wqe(at(index), w, stride); }
  // Header fields of a posted WQE, read without the rest of it.
  uint64_t wr_id(uint64_t index) const {
    uint64_t v;
    std::memcpy(&v, at(index) + offsetof(nic::SendWqe, wr_id), sizeof v);
    return v;
  }
  uint8_t send_flags(uint64_t index) const {
    return static_cast<uint8_t>(at(index)[offsetof(nic::SendWqe, send_flags)]);
  }
};
static_assert(offsetof(nic::SendWqe, wr_id) == offsetof(nic::RecvWqe, wr_id));

struct Srq {
  ibv_srq srq{};  // zeroed: events_completed counts from 0
  Context* ctx = nullptr;
  WqeSlots ring;
  uint64_t producer = 0;
  proto::DoorbellRecord* db = nullptr;
  uint32_t max_wr = 0, max_sge = 0, limit = 0;
  std::mutex mutex;
  EventsReported reported;
};

struct Ah {
  ibv_ah ah;
  uint32_t index = 0;
};

struct Qp {
  union {
    ibv_qp qp;
    ibv_qp_ex qpx;
  };
  Context* ctx = nullptr;
  WqeSlots sq, rq;
  uint64_t sq_producer = 0, rq_producer = 0;
  // Receive completions polled (poll_cq counts them): the RQ is full when
  // max_recv_wr WQEs are posted and not completed.
  std::atomic<uint64_t> rq_completed{0};
  // Send WQEs completed (CQEs polled): the index after the last one
  // (send_completed); written by the poller of the send CQ.
  std::atomic<uint64_t> sq_done{0};
  proto::DoorbellRecord* db = nullptr;
  ibv_qp_cap cap{};
  bool sq_sig_all = false;
  ibv_qp_attr attr{};  // what the application set, for ibv_query_qp
  std::mutex sq_mutex, rq_mutex;
  // ibv_wr_* state: the WQE being built, and where the batch started.
  nic::SendWqe pending{};
  bool building = false;
  uint64_t batch_start = 0;
  int batch_error = 0;
  EventsReported reported;
  Qp() : qp{} {}
};

// Objects an async event or a completion event names by number.
void register_cq(Cq* cq);
void unregister_cq(Cq* cq);
void register_qp(Qp* qp);
void unregister_qp(Qp* qp);
Qp* qp_by_number(Context* ctx, uint32_t qpn);
// The object an event names, counted in its EventsReported; null once it is
// unregistered (an event still queued for a destroyed object is dropped).
Cq* cq_for_comp_event(uint32_t cookie);
Cq* cq_for_async_event(Context* ctx, uint32_t cqn);
Qp* qp_for_async_event(Context* ctx, uint32_t qpn);
Srq* srq_for_async_event(Context* ctx, uint32_t srqn);
void register_srq(Srq* srq);
void unregister_srq(Srq* srq);

void register_context(Context* c);
void unregister_context(Context* c);
// Visits each registered object (device_loss.cpp).
void for_each_context(void (*f)(Context&));
void for_each_qp(void (*f)(Qp&));
void for_each_cq(void (*f)(Cq&));

// The daemon went away (device_loss.cpp): watch_daemon(fd) starts the thread
// that notices; device_lost() says whether it has. send_completed: the index
// after the send WQE that CQE `c` of QP `q` completes, from `done`.
void watch_daemon(int fd);
bool device_lost();
void loss_handled();  // returns once the loss has been handled (the objects left alone)
void forget_device_loss();  // a forked child: its own session is yet to come
uint64_t send_completed(const Qp& q, uint64_t done, const nic::Cqe& c);

// The data path (datapath.cpp).
int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
int post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad);
int poll_cq(ibv_cq* cq, int n, ibv_wc* wc);
void publish_consumer(Cq& q);
int req_notify_cq(ibv_cq* cq, int solicited_only);
void init_qp_ex(Qp* qp, uint64_t send_ops_flags);
void init_cq_ex(Cq* cq);

// Registered memory (shared_memory.cpp). RegMr or ReregMr `op` for `req`: the
// region's pages shared with the daemon first where RNICSIM_HOST_MEMORY and
// the daemon's Hello say so. Returns 0 or an errno (also set in errno).
int register_region(proto::Op op, proto::RegMrReq& req, proto::RegMrRep& rep);
// ibv_fork_init was called: pages moved from now on are not inherited by a child.
void note_fork_init();

// Device attributes (device.cpp).
int query_port(ibv_context* context, uint8_t port, ibv_port_attr* attr, size_t len);
int query_device_ex(ibv_context* context, const ibv_query_device_ex_input* input, ibv_device_attr_ex* attr,
                    size_t attr_size);
ibv_qp* create_qp_ex(ibv_context* context, ibv_qp_init_attr_ex* attr);
ibv_cq_ex* create_cq_ex(ibv_context* context, ibv_cq_init_attr_ex* attr);

// RNICSIM_TRACE (drop_in/trace.cpp): whether a trace is written, and one line of it
// (`fmt` gives the fields after the time, pid and thread).
bool tracing();
void trace_event(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Sets errno and returns `value` (for the NULL/-1 conventions).
template <class T>
T fail(int err, T value) {
  errno = err;
  return value;
}

}  // namespace rnicsim::shim
