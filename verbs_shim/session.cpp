// The connection to the daemon and the tables that map numbers from it back to
// the application's objects.
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "verbs_shim/hello.hpp"
#include "verbs_shim/shim.hpp"

namespace rnicsim::shim {
namespace {

std::mutex g_tables_mutex;
std::unordered_map<uint32_t, Cq*> g_cqs_by_cookie;
uint32_t g_next_cookie = 1;
std::unordered_map<uint64_t, Qp*> g_qps;    // (context id, QPN)
std::unordered_map<uint64_t, Srq*> g_srqs;  // (context id, SRQ number)
std::unordered_map<uint32_t, Context*> g_contexts;
uint64_t key(Context* c, uint32_t n) { return (uint64_t{c->id} << 32) | n; }

}  // namespace

Session& session() {
  static Session s;
  return s;
}

// fork(): the child is a process of its own and opens a session of its own
// when it next needs the daemon, which puts it on its parent's host. What the
// parent created stays the parent's: the daemon refuses the child's requests
// on it, as a device refuses another process's objects.
namespace {
void before_fork() { session().mutex.lock(); }
void after_fork_in_parent() { session().mutex.unlock(); }
void after_fork_in_child() {
  Session& s = session();
  if (s.connected) close(s.fd);
  s.fd = -1;
  s.connected = false;
  s.mutex.unlock();
  forget_device_loss();
}
[[gnu::constructor]] void handle_fork() {
  session();  // constructed before the handlers can run
  pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}
}  // namespace

bool ensure_session() {
  Session& s = session();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.connected) return true;
  const std::string path = proto::daemon_socket_path();
  proto::Opened o = proto::open_session(path, s.probe);
  if (o.connect_error != 0) {
    static bool said = false;
    if (!said && std::getenv(proto::kSocketEnv) != nullptr) {
      std::fprintf(stderr, "rnicsim: no daemon answers on %s (%s); no devices\n", path.c_str(),
                   std::strerror(o.connect_error));
      said = true;
    }
    return fail(o.connect_error == ENAMETOOLONG ? ENAMETOOLONG : ENODEV, false);
  }
  int rc = o.hello_error;
  if (rc == 0 && !proto::body_as(o.reply, s.info)) rc = EPROTO;
  if (rc != 0) {
    if (o.fd >= 0) close(o.fd);
    if (rc == EBUSY) std::fprintf(stderr, "rnicsim: every host of the daemon's scenario is taken; no devices\n");
    if (rc == ENODEV) std::fprintf(stderr, "rnicsim: the daemon's scenario has no host '%s'\n", o.hello.host);
    if (rc == EPROTO) std::fprintf(stderr, "rnicsim: the daemon speaks another protocol version\n");
    return fail(rc, false);
  }
  const int fd = o.fd;
  s.fd = fd;
  s.connected = true;
  watch_daemon(fd);
  return true;
}

int call(proto::Op op, const void* req, size_t req_len, void* rep, size_t rep_len, const int* fds, size_t nfds,
         int* fds_out, size_t max_fds_out) {
  Session& s = session();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.connected) return errno = ENODEV;
  // A lost device takes nothing new; what the program lets go of goes (as
  // rdma-core lets a program destroy objects of a disassociated device).
  if (device_lost()) {
    if (!releases(op)) return errno = EIO;
    loss_handled();
    return 0;
  }
  proto::MsgHeader h;
  h.op = static_cast<uint16_t>(op);
  int rc = proto::send_message(s.fd, h, req, req_len, std::span<const int>(fds, nfds));
  proto::Received r;
  if (rc == 0) rc = proto::receive_message(s.fd, r);
  if (rc == 0 && r.header.op != h.op) rc = EPROTO;
  if (rc == 0) rc = r.header.status;
  if (rc == 0 && rep_len > 0 && r.header.length != rep_len) rc = EPROTO;
  if (rc == 0 && rep_len > 0) std::memcpy(rep, r.body, rep_len);
  for (size_t i = 0; i < r.nfds; ++i) {
    if (rc == 0 && fds_out != nullptr && i < max_fds_out)
      fds_out[i] = r.fds[i];
    else
      close(r.fds[i]);
  }
  if (rc != 0) errno = rc;
  return rc;
}

void register_cq(Cq* cq) {
  std::lock_guard<std::mutex> lock(g_tables_mutex);
  cq->cookie = g_next_cookie++;
  g_cqs_by_cookie[cq->cookie] = cq;
}
void unregister_cq(Cq* cq) {
  std::lock_guard<std::mutex> lock(g_tables_mutex);
  g_cqs_by_cookie.erase(cq->cookie);
}
Cq* cq_for_comp_event(uint32_t cookie) {
  std::lock_guard<std::mutex> lock(g_tables_mutex);
  auto it = g_cqs_by_cookie.find(cookie);
  if (it == g_cqs_by_cookie.end()) return nullptr;
  it->second->reported.comp.fetch_add(1, std::memory_order_relaxed);
  return it->second;
}
Cq* cq_for_async_event(Context* ctx, uint32_t cqn) {
  std::lock_guard<std::mutex> lock(g_tables_mutex);
  for (auto& [cookie, cq] : g_cqs_by_cookie)
    if (cq->ctx == ctx && cq->cq.handle == cqn) {
      cq->reported.async.fetch_add(1, std::memory_order_relaxed);
      return cq;
    }
  return nullptr;
}
void wait_for_acks(pthread_mutex_t& m, pthread_cond_t& cv, const uint32_t& completed,
                   const std::atomic<uint32_t>& reported) {
  pthread_mutex_lock(&m);
  while (completed != reported.load(std::memory_order_relaxed)) pthread_cond_wait(&cv, &m);
  pthread_mutex_unlock(&m);
}
namespace {
template <class T>
void add(std::unordered_map<uint64_t, T*>& table, Context* c, uint32_t n, T* v) {
  std::lock_guard<std::mutex> lock(g_tables_mutex);
  table[key(c, n)] = v;
}
template <class T>
void remove(std::unordered_map<uint64_t, T*>& table, Context* c, uint32_t n) {
  std::lock_guard<std::mutex> lock(g_tables_mutex);
  table.erase(key(c, n));
}
template <class T>
T* find(std::unordered_map<uint64_t, T*>& table, Context* c, uint32_t n) {
  std::lock_guard<std::mutex> lock(g_tables_mutex);
  auto it = table.find(key(c, n));
  return it == table.end() ? nullptr : it->second;
}
template <class T>
T* find_for_async_event(std::unordered_map<uint64_t, T*>& table, Context* c, uint32_t n) {
  std::lock_guard<std::mutex> lock(g_tables_mutex);
  auto it = table.find(key(c, n));
  if (it == table.end()) return nullptr;
  it->second->reported.async.fetch_add(1, std::memory_order_relaxed);
  return it->second;
}
}  // namespace

void register_context(Context* c) {
  std::lock_guard<std::mutex> lock(g_tables_mutex);
  g_contexts[c->id] = c;
}
void unregister_context(Context* c) {
  std::lock_guard<std::mutex> lock(g_tables_mutex);
  g_contexts.erase(c->id);
}
// The objects are collected under the tables' lock and visited without it:
// a visit takes the objects' own locks, which a poller holds while it looks
// up the tables.
template <class T, class Map>
void visit(Map& table, void (*f)(T&)) {
  std::vector<T*> all;
  {
    std::lock_guard<std::mutex> lock(g_tables_mutex);
    for (auto& [key, v] : table) all.push_back(v);
  }
  for (T* v : all) f(*v);
}
void for_each_context(void (*f)(Context&)) { visit(g_contexts, f); }
void for_each_qp(void (*f)(Qp&)) { visit(g_qps, f); }
void for_each_cq(void (*f)(Cq&)) { visit(g_cqs_by_cookie, f); }

void register_qp(Qp* qp) { add(g_qps, qp->ctx, qp->qp.qp_num, qp); }
void unregister_qp(Qp* qp) { remove(g_qps, qp->ctx, qp->qp.qp_num); }
Qp* qp_by_number(Context* ctx, uint32_t qpn) { return find(g_qps, ctx, qpn); }
Qp* qp_for_async_event(Context* ctx, uint32_t qpn) { return find_for_async_event(g_qps, ctx, qpn); }
void register_srq(Srq* srq) { add(g_srqs, srq->ctx, srq->srq.handle, srq); }
void unregister_srq(Srq* srq) { remove(g_srqs, srq->ctx, srq->srq.handle); }
Srq* srq_for_async_event(Context* ctx, uint32_t srqn) { return find_for_async_event(g_srqs, ctx, srqn); }

}  // namespace rnicsim::shim
