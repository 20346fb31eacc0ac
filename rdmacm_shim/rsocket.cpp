// The rsocket calls (rsocket.h), which run over the CM's connections. Until
// the daemon's CM agent exists each fails with ENOSYS and -1 (riowrite: -1 as
// a size_t), as its man page gives for a failure.
#include <rdma/rsocket.h>

#include <cerrno>
#include <cstddef>

namespace {

int fail() {
  errno = ENOSYS;
  return -1;
}

}  // namespace

extern "C" {

// Sockets

// not yet implemented: needs the daemon's CM agent
int rsocket(int, int, int) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rbind(int, const struct sockaddr*, socklen_t) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rlisten(int, int) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int raccept(int, struct sockaddr*, socklen_t*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rconnect(int, const struct sockaddr*, socklen_t) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rshutdown(int, int) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rclose(int) { return fail(); }

// Data

// not yet implemented: needs the daemon's CM agent
ssize_t rrecv(int, void*, size_t, int) { return fail(); }

// not yet implemented: needs the daemon's CM agent
ssize_t rrecvfrom(int, void*, size_t, int, struct sockaddr*, socklen_t*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
ssize_t rrecvmsg(int, struct msghdr*, int) { return fail(); }

// not yet implemented: needs the daemon's CM agent
ssize_t rsend(int, const void*, size_t, int) { return fail(); }

// not yet implemented: needs the daemon's CM agent
ssize_t rsendto(int, const void*, size_t, int, const struct sockaddr*, socklen_t) { return fail(); }

// not yet implemented: needs the daemon's CM agent
ssize_t rsendmsg(int, const struct msghdr*, int) { return fail(); }

// not yet implemented: needs the daemon's CM agent
ssize_t rread(int, void*, size_t) { return fail(); }

// not yet implemented: needs the daemon's CM agent
ssize_t rreadv(int, const struct iovec*, int) { return fail(); }

// not yet implemented: needs the daemon's CM agent
ssize_t rwrite(int, const void*, size_t) { return fail(); }

// not yet implemented: needs the daemon's CM agent
ssize_t rwritev(int, const struct iovec*, int) { return fail(); }

// Polling

// not yet implemented: needs the daemon's CM agent
int rpoll(struct pollfd*, nfds_t, int) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rselect(int, fd_set*, fd_set*, fd_set*, struct timeval*) { return fail(); }

// Names and options

// not yet implemented: needs the daemon's CM agent
int rgetpeername(int, struct sockaddr*, socklen_t*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rgetsockname(int, struct sockaddr*, socklen_t*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rsetsockopt(int, int, int, const void*, socklen_t) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rgetsockopt(int, int, int, void*, socklen_t*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rfcntl(int, int, ...) { return fail(); }

// Direct placement (riomap)

// not yet implemented: needs the daemon's CM agent
off_t riomap(int, void*, size_t, int, int, off_t) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int riounmap(int, void*, size_t) { return fail(); }

// not yet implemented: needs the daemon's CM agent
size_t riowrite(int, const void*, size_t, off_t, int) { return static_cast<size_t>(fail()); }

}  // extern "C"
