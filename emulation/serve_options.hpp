// What `rnicsim serve` is told: where it listens and captures, how its clock
// runs and how it shares the CPUs. Its own header, so that the daemon's parts
// take their options without the daemon.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

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

}  // namespace rnicsim::emulation
