// The emulation daemon (rnicsim serve): runs a scenario's NICs and fabric in real
// time and serves verbs shim processes over a Unix socket. Each process becomes
// one host of the scenario; the daemon does on its behalf what a scenario's
// workload drivers do (PD, MR, CQ, QP on the host's NIC), with the process's own
// memory behind the NIC's DMA and the rings in memory shared with the process.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>

#include "scenario/scenario.hpp"
#include "scenario/timeline.hpp"
#include "sim/log.hpp"

namespace rnicsim::emulation {

// Real: simulated time follows the wall clock (scaled by the dilation).
// Virtual: it moves only with the model's events, so a run's captures and
// timings do not depend on how fast the programs ran (sim/virtual_time.hpp).
enum class ClockMode { Real, Virtual };

struct ServeOptions {
  std::string socket_path;  // empty: default_socket_path()
  std::string pcap_path;    // capture of the first host's port
  scenario::TimelineOptions timeline;  // the WQE timeline of every host's NIC, if a path is given
  std::string device_name;  // the verbs device every program sees (empty: each host's, else rnicsim0)
  ClockMode clock = ClockMode::Real;
  // Virtual clock: the programs' calls that come within this much wall time of
  // each other land at one simulated time.
  std::chrono::microseconds settle{3000};
  double dilation = 1.0;    // wall time per unit of simulated time (real clock)
  uint64_t seed = 0;        // 0: the scenario's
  // After the last doorbell or event the daemon keeps spinning this long before
  // it arms the wake-up doorbell and sleeps.
  std::chrono::microseconds spin{2000};
  // Exit after this long without any program connected (0: never).
  std::chrono::seconds idle_exit{0};
  // Received payload written into the programs by a second thread (see
  // emulation/payload_mover.hpp); off, or with one CPU: by the simulation thread.
  bool payload_mover = true;
  // Each host a network namespace of its own (emulation/host_network), its
  // programs' sockets on the host's address; else they share the machine's.
  bool host_network = false;
  sim::LogLevel log_level = sim::LogLevel::Warn;  // of the simulation's logger
};

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
