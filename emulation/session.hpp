// A program's connection to the daemon: the listening socket, the peer's
// credentials, and the sessions' lifetime (accepted, served one request at a
// time, ended).
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "emulation/program_state.hpp"

namespace rnicsim::emulation {

struct Session {
  int fd = -1;
  pid_t pid = 0;
  size_t host = SIZE_MAX;  // SIZE_MAX until its Hello
  size_t slot = 0;         // the process's address space on the host
  // Runs of shared pages (ShareRuns) for the next RegMr or ReregMr.
  std::vector<std::byte*> pending_runs;
  bool said_hello() const { return host != SIZE_MAX; }
};

// The socket programs connect to: bound at `path` (a stale one, left by a
// daemon that died, is replaced), and removed again if it is still this one.
class ListeningSocket {
public:
  explicit ListeningSocket(std::string path);
  ~ListeningSocket();
  ListeningSocket(const ListeningSocket&) = delete;
  ListeningSocket& operator=(const ListeningSocket&) = delete;
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // A connection of a process of this user (its fd and pid); others are
  // refused (and said so on `out`).
  std::optional<std::pair<int, pid_t>> accept(std::ostream& out) const;

private:
  std::string path_;
  int fd_ = -1;
  ino_t inode_ = 0;  // the socket this daemon bound
};

// The directory of the socket, created (0700) or checked (see session.cpp).
void prepare_socket_dir(const std::string& dir);

class Sessions {
public:
  using Map = std::map<int, Session>;
  // What the daemon does when a session ends, before it closes the socket.
  using OnEnd = std::function<void(Session&)>;
  explicit Sessions(OnEnd on_end) : on_end_(std::move(on_end)) {}
  ~Sessions();
  void add(int fd, pid_t pid) { sessions_[fd] = Session{fd, pid, SIZE_MAX, 0, {}}; }
  Session* find(int fd);
  bool contains(int fd) const { return sessions_.contains(fd); }
  bool empty() const { return sessions_.empty(); }
  void end(int fd);
  // Whether every thread of every program sleeps, and the CPU time all of
  // them have used (see program_state.hpp).
  ThreadsState programs_state() const;
  // Whether a program has sent a request the daemon has not read yet: its
  // thread sleeps, waiting for the answer, but has not finished acting.
  bool request_pending() const;
  // Adds each session's socket to `pfds`, waiting for a request.
  void add_pollfds(std::vector<pollfd>& pfds) const;

private:
  Map sessions_;
  OnEnd on_end_;
};

}  // namespace rnicsim::emulation
