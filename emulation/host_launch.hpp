// Starting a program on an emulated host, as `rnicsim exec` does: the
// launcher claims the host from the daemon first (so it knows the host's
// device before the program runs, and no other program takes the host
// meanwhile), then runs the program as its child in the host's own view
// (host_namespace), and stays until the program ends: it passes on the signals
// sent to it and ends as the program did. The program is on the host because
// its launcher is (a process is on its parent's host, control_ops host_for).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace rnicsim::emulation {

struct LaunchSpec {
  std::string socket_path;
  std::string host;  // empty: the first free one
  std::vector<std::string> argv;
  bool view = true;  // the host's /sys and /dev (else the machine's, as they are)
};

// Runs the program and returns its exit status (128 + N for a signal N that
// could not be passed on as the launcher's own death), or 1 with a message on
// `err` when no host could be had, 127 when the program cannot be run.
int launch_on_host(const LaunchSpec& spec, std::ostream& err);

}  // namespace rnicsim::emulation
