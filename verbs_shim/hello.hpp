// Opening a session with the daemon, as both drop-in libraries do (the verbs
// shim for the verbs, the CM shim for the RDMA CM): the socket's path, the
// connection, and the Hello that claims this process's host. Header-only: it
// runs in the program and pulls in nothing.
#pragma once

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "verbs_shim/wire.hpp"

namespace rnicsim::verbs_proto {

// RNICSIM_SOCKET, else the user's runtime directory, else /tmp.
inline std::string daemon_socket_path() {
  if (const char* p = std::getenv(kSocketEnv); p != nullptr && *p != '\0') return p;
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg != nullptr && *xdg != '\0')
    return std::string(xdg) + "/rnicsim/daemon.sock";
  return "/tmp/rnicsim-" + std::to_string(getuid()) + "/daemon.sock";
}

struct Opened {
  int fd = -1;
  int connect_error = 0;  // connect() failed with this (no daemon answers)
  int hello_error = 0;    // the Hello failed with this (EBUSY, ENODEV, EPROTO, ...)
  HelloReq hello;         // what was asked
  Received reply;         // the daemon's answer (DeviceInfo)
};

// Connects to the daemon at `path` and says Hello as this process, claiming
// the host RNICSIM_HOST names (if set); `probe` is the word the daemon tries
// to read with process_vm_readv (it must stay where it is).
inline Opened open_session(const std::string& path, uint64_t& probe) {
  Opened o;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return o.connect_error = ENAMETOOLONG, o;
  std::strcpy(addr.sun_path, path.c_str());
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return o.connect_error = errno, o;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    o.connect_error = errno;
    close(fd);
    return o;
  }
  // The daemon reaches this process's registered memory (where ptrace
  // restrictions apply, it has to be named), and tries at once.
  ucred peer{};
  socklen_t peer_len = sizeof peer;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) == 0)
    prctl(PR_SET_PTRACER, static_cast<unsigned long>(peer.pid), 0, 0, 0);
  o.hello.pid = getpid();
  probe = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) | 1;
  o.hello.probe_addr = reinterpret_cast<uint64_t>(&probe);
  o.hello.probe_value = probe;
  if (const char* h = std::getenv(kHostEnv)) std::snprintf(o.hello.host, sizeof o.hello.host, "%s", h);
  MsgHeader h;
  h.op = static_cast<uint16_t>(Op::Hello);
  int rc = send_message(fd, h, &o.hello, sizeof o.hello);
  if (rc == 0) rc = receive_message(fd, o.reply);
  if (rc == 0 && o.reply.header.status != 0) rc = o.reply.header.status;
  if (rc != 0) {
    o.hello_error = rc;
    close(fd);
    return o;
  }
  o.fd = fd;
  return o;
}

}  // namespace rnicsim::verbs_proto
