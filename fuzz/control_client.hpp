// A client of the daemon's control protocol for the control fuzzer and the
// hostile-input tests: sends datagrams to a ControlHarness and reads its replies.
#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "emulation/server.hpp"
#include "verbs_shim/protocol.hpp"
#include "verbs_shim/wire.hpp"

namespace rnicsim::fuzz {

namespace proto = verbs_proto;

// Reads every reply waiting for client `fd` (closing descriptors that came with
// them); the status of the last one (kept in `last`), or -1 if there was none.
inline int drain(int fd, proto::Received& last) {
  int status = -1;
  proto::Received r;
  while (proto::receive_message(fd, r) == 0) {
    for (std::size_t i = 0; i < r.nfds; ++i) close(r.fds[i]);
    r.nfds = 0;
    status = r.header.status;
    last = r;
  }
  return status;
}

// Sends one datagram from client `fd` (with a descriptor of /dev/null if asked)
// and has the daemon serve it. False when it could not be sent or the daemon
// ended the session.
inline bool send_and_serve(emulation::ControlHarness& daemon, int fd, const void* bytes, std::size_t length,
                           bool with_fd = false) {
  const int attached = with_fd ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
  iovec iov{const_cast<void*>(bytes), length};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (attached >= 0) {
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &attached, sizeof(int));
  }
  const bool sent = sendmsg(fd, &m, MSG_NOSIGNAL) >= 0;
  if (attached >= 0) close(attached);
  return sent && daemon.serve(fd);
}

// A well-formed request: header and `body`. The reply's status (-1: none, or
// the session ended); the reply itself in `reply`.
template <class Body>
int request(emulation::ControlHarness& daemon, int fd, proto::Op op, const Body& body, proto::Received& reply) {
  std::array<unsigned char, sizeof(proto::MsgHeader) + sizeof(Body)> bytes{};
  proto::MsgHeader h;
  h.op = static_cast<std::uint16_t>(op);
  h.length = sizeof(Body);
  std::memcpy(bytes.data(), &h, sizeof h);
  std::memcpy(bytes.data() + sizeof h, &body, sizeof body);
  if (!send_and_serve(daemon, fd, bytes.data(), bytes.size())) return -1;
  return drain(fd, reply);
}

template <class Rep>
Rep reply_as(const proto::Received& r) {
  Rep rep{};
  std::memcpy(&rep, r.body, sizeof rep);
  return rep;
}

}  // namespace rnicsim::fuzz
