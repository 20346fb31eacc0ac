// Sending and receiving one protocol message (header, body, file descriptors) over
// a SOCK_SEQPACKET socket. Header-only: both the shim and the daemon use it.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>

#include "verbs_shim/protocol.hpp"

namespace rnicsim::verbs_proto {

inline constexpr size_t kMaxFds = 4;
static_assert(kRunsPerMessage <= kMaxFds, "a ShareRuns request carries one descriptor per run");
inline constexpr size_t kMaxBody = 512;

// Sends header + body (+ fds). Returns 0 or an errno.
inline int send_message(int sock, MsgHeader h, const void* body, size_t length, std::span<const int> fds = {}) {
  h.length = static_cast<uint32_t>(length);
  iovec iov[2] = {{&h, sizeof h}, {const_cast<void*>(body), length}};
  msghdr m{};
  m.msg_iov = iov;
  m.msg_iovlen = length > 0 ? 2 : 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  if (!fds.empty()) {
    m.msg_control = control;
    m.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    const ssize_t n = sendmsg(sock, &m, MSG_NOSIGNAL);
    if (n >= 0) return 0;
    if (errno != EINTR) return errno;
  }
}

struct Received {
  MsgHeader header{};
  unsigned char body[kMaxBody] = {};
  int fds[kMaxFds] = {-1, -1, -1, -1};
  size_t nfds = 0;
};

// Receives one message. Returns 0, an errno, or ECONNRESET at end of stream.
// A malformed message (bad magic or version, truncated) is EPROTO.
inline int receive_message(int sock, Received& r) {
  iovec iov[2] = {{&r.header, sizeof r.header}, {r.body, sizeof r.body}};
  msghdr m{};
  m.msg_iov = iov;
  m.msg_iovlen = 2;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  ssize_t n;
  do n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) return errno;
  if (n == 0) return ECONNRESET;
  r.nfds = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count && r.nfds < kMaxFds; ++i)
      std::memcpy(&r.fds[r.nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
  }
  if (static_cast<size_t>(n) < sizeof r.header || r.header.magic != kMagic || r.header.version != kVersion ||
      (m.msg_flags & MSG_TRUNC) != 0 || static_cast<size_t>(n) - sizeof r.header != r.header.length)
    return EPROTO;
  return 0;
}

// Copies a received body into T if the sizes match.
template <class T>
bool body_as(const Received& r, T& out) {
  if (r.header.length != sizeof(T)) return false;
  std::memcpy(&out, r.body, sizeof(T));
  return true;
}

}  // namespace rnicsim::verbs_proto
