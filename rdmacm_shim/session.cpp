// The CM core's session with the daemon: a connection of its own (the verbs
// shim keeps its own for the verbs), opened on first use with a Hello that
// claims the same host as the process's verbs session. One request at a time.
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "rdmacm_shim/cm.hpp"
#include "verbs_shim/wire.hpp"

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

std::string socket_path() {
  if (const char* p = std::getenv(proto::kSocketEnv); p != nullptr && *p != '\0') return p;
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg != nullptr && *xdg != '\0')
    return std::string(xdg) + "/rnicsim/daemon.sock";
  return "/tmp/rnicsim-" + std::to_string(getuid()) + "/daemon.sock";
}

// Connects and says Hello (session mutex held). Returns 0 or an errno.
int connect_session(Session& s) {
  const std::string path = socket_path();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return ENAMETOOLONG;
  std::strcpy(addr.sun_path, path.c_str());
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return ENODEV;
  }
  ucred peer{};
  socklen_t peer_len = sizeof peer;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) == 0)
    prctl(PR_SET_PTRACER, static_cast<unsigned long>(peer.pid), 0, 0, 0);
  proto::HelloReq hello;
  hello.pid = getpid();
  s.probe = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) | 1;
  hello.probe_addr = reinterpret_cast<uint64_t>(&s.probe);
  hello.probe_value = s.probe;
  if (const char* h = std::getenv(proto::kHostEnv)) std::snprintf(hello.host, sizeof hello.host, "%s", h);
  proto::MsgHeader h;
  h.op = static_cast<uint16_t>(proto::Op::Hello);
  proto::Received r;
  int rc = proto::send_message(fd, h, &hello, sizeof hello);
  if (rc == 0) rc = proto::receive_message(fd, r);
  if (rc == 0) rc = r.header.status;
  if (rc != 0) {
    close(fd);
    return rc == EPROTO ? EPROTO : ENODEV;
  }
  s.fd = fd;
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
