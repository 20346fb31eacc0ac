#include "emulation/session.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "emulation/program_state.hpp"

namespace rnicsim::emulation {

// The components that are missing are created (0700), existing ones are left
// as they are. One that others may write into is refused unless it is sticky
// and owned by this user or root (as /tmp is): there, another user could
// replace the socket.
void prepare_socket_dir(const std::string& dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/') continue;
    const std::string part = dir.substr(0, at);
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      throw std::runtime_error("cannot create " + part + ": " + std::strerror(errno));
  }
  struct stat st{};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) throw std::runtime_error(dir + " is not a directory");
  if (st.st_uid != getuid() && st.st_uid != 0)
    throw std::runtime_error(dir + " belongs to another user: choose another --socket");
  // Owned by this user or root from here on: sticky is what protects the socket.
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0)
    throw std::runtime_error(dir + " can be written by other users and is not sticky: choose another --socket");
}

namespace {

// Binding failed: only a socket that nobody answers on (left by a daemon that
// died) is removed; anything else at the path stays.
void replace_stale(int fd, const std::string& path, const sockaddr_un& addr) {
  struct stat st{};
  if (lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode))
    throw std::runtime_error("cannot bind " + path + ": " + std::strerror(errno) +
                             (errno == EADDRINUSE ? " (it is not a socket; not removing it)" : ""));
  const int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  const bool alive = connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  close(probe);
  if (alive) throw std::runtime_error("a daemon already serves " + path);
  unlink(path.c_str());
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("cannot bind " + path + ": " + std::strerror(errno));
}

}  // namespace

ListeningSocket::ListeningSocket(std::string path) : path_(std::move(path)) {
  const size_t slash = path_.rfind('/');
  if (slash != std::string::npos && slash > 0) prepare_socket_dir(path_.substr(0, slash));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.size() >= sizeof addr.sun_path) throw std::runtime_error("socket path too long: " + path_);
  std::strcpy(addr.sun_path, path_.c_str());
  fd_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) throw std::runtime_error("socket failed");
  try {
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) replace_stale(fd_, path_, addr);
    struct stat st{};
    if (lstat(path_.c_str(), &st) == 0) inode_ = st.st_ino;
    if (listen(fd_, 64) != 0) throw std::runtime_error("listen failed");
  } catch (...) {
    close(fd_);  // the destructor does not run for a constructor that throws
    fd_ = -1;
    throw;
  }
}

ListeningSocket::~ListeningSocket() {
  if (fd_ < 0) return;
  close(fd_);
  // Only if the path is still this daemon's socket.
  struct stat st{};
  if (lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == inode_) unlink(path_.c_str());
}

std::optional<std::pair<int, pid_t>> ListeningSocket::accept(std::ostream& out) const {
  const int fd = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return std::nullopt;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != getuid()) {
    out << "rnicsim serve: refused a connection from uid " << cred.uid << '\n';
    close(fd);
    return std::nullopt;
  }
  return std::pair{fd, cred.pid};
}

Sessions::~Sessions() {
  for (auto& [fd, s] : sessions_) close(fd);
}

Session* Sessions::find(int fd) {
  auto it = sessions_.find(fd);
  return it == sessions_.end() ? nullptr : &it->second;
}

void Sessions::end(int fd) {
  auto it = sessions_.find(fd);
  if (it == sessions_.end()) return;
  on_end_(it->second);
  close(fd);
  sessions_.erase(it);
}

void Sessions::add_pollfds(std::vector<pollfd>& pfds) const {
  for (const auto& [fd, s] : sessions_) pfds.push_back({fd, POLLIN, 0});
}

bool Sessions::request_pending() const {
  std::vector<pollfd> pfds;
  add_pollfds(pfds);
  return !pfds.empty() && poll(pfds.data(), pfds.size(), 0) > 0;
}

ThreadsState Sessions::programs_state() const {
  ThreadsState all{.asleep = true, .cpu_known = true};
  for (const auto& [fd, s] : sessions_) all.add(threads_state(s.pid));
  return all;
}

}  // namespace rnicsim::emulation
