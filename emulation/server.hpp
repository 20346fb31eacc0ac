// The emulation daemon (rnicsim serve): runs a scenario's NICs and fabric in real
// time and serves verbs shim processes over a Unix socket. Each process becomes
// one host of the scenario; the daemon does on its behalf what a scenario's
// workload drivers do (PD, MR, CQ, QP on the host's NIC), with the process's own
// memory behind the NIC's DMA and the rings in memory shared with the process.
#pragma once

#include <map>
#include <memory>
#include <ostream>
#include <string>

#include "emulation/serve_options.hpp"
#include "scenario/scenario.hpp"

namespace rnicsim::emulation {

// $XDG_RUNTIME_DIR/rnicsim/daemon.sock, else /tmp/rnicsim-UID/daemon.sock.
std::string default_socket_path();

// The scenario the daemon runs when none is given: two hosts on a lossless
// 100 Gb/s link.
scenario::Scenario default_scenario();

// Serves until SIGINT or SIGTERM (or, with exit_when_idle, until the last process
// has gone). Returns a process exit code; prints a summary (lag, counters) to `out`.
int serve(const scenario::Scenario& s, const ServeOptions& options, std::ostream& out);

// The daemon's side of the control protocol without its listening socket or its
// loop, for the control-protocol fuzzer and the hostile-input tests: a client is
// one end of a socket pair whose other end the daemon serves exactly as an
// accepted connection (same reads, same checks, same replies).
class ControlHarness {
public:
  ControlHarness(const scenario::Scenario& s, std::ostream& log);
  ~ControlHarness();
  // A new client connection; returns the client's end (the caller closes it).
  int connect();
  // The daemon reads and answers one request the client `client_fd` has sent.
  // False when the daemon ended the session (and closed its end).
  bool serve(int client_fd);

private:
  class Server;
  scenario::Scenario scenario_;  // the server keeps a reference to it
  std::unique_ptr<Server> server_;
  std::map<int, int> daemon_end_;  // client's end -> daemon's end
};

}  // namespace rnicsim::emulation
