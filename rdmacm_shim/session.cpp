// The CM core's session with the daemon: a connection of its own (the verbs
// shim keeps its own for the verbs), opened on first use with a Hello that
// claims the same host as the process's verbs session. One request at a time.
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <cstring>

#include "rdmacm_shim/cm.hpp"
#include "verbs_shim/hello.hpp"

namespace rnicsim::rdmacm {
namespace {

struct Session {
  std::mutex mutex;
  int fd = -1;
  uint64_t probe = 0;
};

Session& session() {
  static Session s;
  return s;
}

// fork(): the child opens a session of its own on first use (see the verbs
// shim's session); the ids and channels of the parent stay the parent's.
void before_fork() { session().mutex.lock(); }
void after_fork_in_parent() { session().mutex.unlock(); }
void after_fork_in_child() {
  Session& s = session();
  if (s.fd >= 0) close(s.fd);
  s.fd = -1;
  s.mutex.unlock();
}
[[gnu::constructor]] void handle_fork() {
  session();
  pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}

// Connects and says Hello (session mutex held). Returns 0 or an errno.
int connect_session(Session& s) {
  proto::Opened o = proto::open_session(proto::daemon_socket_path(), s.probe);
  if (o.connect_error != 0) return o.connect_error == ENAMETOOLONG ? ENAMETOOLONG : ENODEV;
  if (o.hello_error != 0) return o.hello_error == EPROTO ? EPROTO : ENODEV;
  s.fd = o.fd;
  return 0;
}

}  // namespace

bool daemon_alive() {
  Session& s = session();
  std::lock_guard lock(s.mutex);
  if (s.fd < 0) return false;
  pollfd p{s.fd, POLLRDHUP, 0};
  return poll(&p, 1, 0) == 0;
}

int cm_call(proto::Op op, const void* req, size_t req_len, void* rep, size_t rep_len, const int* fds, size_t nfds) {
  Session& s = session();
  std::lock_guard lock(s.mutex);
  int rc = s.fd < 0 ? connect_session(s) : 0;
  proto::MsgHeader h;
  h.op = static_cast<uint16_t>(op);
  if (rc == 0) rc = proto::send_message(s.fd, h, req, req_len, std::span<const int>(fds, nfds));
  proto::Received r;
  if (rc == 0) rc = proto::receive_message(s.fd, r);
  if (rc == ECONNRESET || rc == EPIPE) rc = ENODEV;  // the daemon is gone
  if (rc == 0 && r.header.op != h.op) rc = EPROTO;
  if (rc == 0) rc = r.header.status;
  if (rc == 0 && rep_len > 0 && r.header.length != rep_len) rc = EPROTO;
  if (rc == 0 && rep_len > 0) std::memcpy(rep, r.body, rep_len);
  for (size_t i = 0; i < r.nfds; ++i) close(r.fds[i]);
  if (rc != 0) errno = rc;
  return rc;
}

}  // namespace rnicsim::rdmacm
