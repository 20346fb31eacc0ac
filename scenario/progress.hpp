// The progress of a long run on stderr: simulated time against the scenario's
// end, events per second and the time left. On a terminal one line rewritten
// in place; otherwise (a log, a pipe) a plain line every interval.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/scheduler.hpp"
#include "sim/time.hpp"

namespace rnicsim::scenario {

class Workload;
struct Scenario;

// When progress is shown: auto after the run's first second, always from the
// start, never.
enum class ProgressMode : uint8_t { Auto, Always, Never };
inline constexpr std::string_view kProgressModeNames[] = {"auto", "always", "never"};  // in ProgressMode's order
static_assert(std::size(kProgressModeNames) == static_cast<size_t>(ProgressMode::Never) + 1);

struct ProgressOptions {
  ProgressMode mode = ProgressMode::Auto;
  double interval_s = 5;  // between plain lines (off a terminal)
};

// What one progress line says. `end`: the scenario's end in simulated time;
// `estimated`: guessed from the bytes delivered (no duration). `done` in 0..1.
struct ProgressState {
  sim::Duration simulated, end;
  bool estimated = false;
  double done = 0, events_per_s = 0, wall_s = 0;
};
// "simulated 1.500 of 10.000 ms (15%), 2.41 M events/s, 34 s left";
// "of ~10.000 ms" when the end is estimated; no end, no time left when done is 0.
std::string progress_line(const ProgressState& p);

class Progress {
public:
  using Clock = std::chrono::steady_clock;
  // `out` null: nothing is shown. `tty`: `out` is a terminal.
  Progress(std::ostream* out, bool tty, ProgressOptions options, const Scenario& s,
           const std::vector<std::unique_ptr<Workload>>& workloads, Clock::time_point start);
  // Called often (between the engine's windows) with where the run stands;
  // shows a line when one is due.
  void update(sim::Time simulated, uint64_t events);
  // Clears the terminal line.
  void finish();

private:
  ProgressState state(sim::Time simulated, uint64_t events, double wall) const;

  std::ostream* out_;
  bool tty_;
  ProgressOptions options_;
  std::optional<sim::Duration> duration_;
  const std::vector<std::unique_ptr<Workload>>& workloads_;
  Clock::time_point start_, last_;
  bool shown_ = false;
  uint64_t expected_ = 0;  // bytes every workload delivers
};

}  // namespace rnicsim::scenario
