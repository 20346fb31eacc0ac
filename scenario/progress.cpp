#include "scenario/progress.hpp"

#include <algorithm>
#include <cstdio>

#include "scenario/spec.hpp"
#include "scenario/workload.hpp"

namespace rnicsim::scenario {
namespace {

// "0.4 s", "42 s", "3 min 20 s", "2 h 05 min".
std::string wall_time(double s) {
  const auto whole = static_cast<long long>(s + 0.5);
  char text[48];
  if (s < 10) std::snprintf(text, sizeof text, "%.1f s", s);
  else if (whole < 100) std::snprintf(text, sizeof text, "%lld s", whole);
  else if (whole < 3600) std::snprintf(text, sizeof text, "%lld min %02lld s", whole / 60, whole % 60);
  else std::snprintf(text, sizeof text, "%lld h %02lld min", whole / 3600, whole / 60 % 60);
  return text;
}

// On a terminal the line is rewritten at most this often.
constexpr auto kTerminalRefresh = std::chrono::milliseconds(200);
// Auto mode shows nothing for runs shorter than this.
constexpr auto kAutoDelay = std::chrono::seconds(1);

}  // namespace

std::string progress_line(const ProgressState& p) {
  char line[200];
  const double ms = p.simulated.seconds() * 1e3, eps = p.events_per_s / 1e6;
  if (p.done <= 0) {
    std::snprintf(line, sizeof line, "simulated %.3f ms, %.2f M events/s", ms, eps);
    return line;
  }
  std::snprintf(line, sizeof line, "simulated %.3f of %s%.3f ms (%.0f%%), %.2f M events/s, %s left", ms,
                p.estimated ? "~" : "", p.end.seconds() * 1e3, p.done * 100, eps,
                wall_time(p.wall_s * (1 - p.done) / p.done).c_str());
  return line;
}

Progress::Progress(std::ostream* out, bool tty, ProgressOptions options, const Scenario& s,
                   const std::vector<std::unique_ptr<Workload>>& workloads, Clock::time_point start)
    : out_(options.mode == ProgressMode::Never ? nullptr : out),
      tty_(tty),
      options_(options),
      duration_(s.duration),
      workloads_(workloads),
      start_(start) {
  for (const auto& w : workloads) expected_ += w->expected_bytes();
}

ProgressState Progress::state(sim::Time simulated, uint64_t events, double wall) const {
  ProgressState p;
  p.simulated = simulated.since_start();
  p.wall_s = wall;
  p.events_per_s = wall > 0 ? static_cast<double>(events) / wall : 0;
  if (duration_ && duration_->picoseconds() > 0) {
    p.end = *duration_;
    p.done = static_cast<double>(p.simulated.picoseconds()) / static_cast<double>(duration_->picoseconds());
  } else if (expected_ > 0) {
    uint64_t bytes = 0;
    for (const auto& w : workloads_) bytes += w->delivered_bytes();
    p.done = static_cast<double>(bytes) / static_cast<double>(expected_);
    p.estimated = true;
    if (p.done > 0) p.end = sim::Duration::ps(static_cast<int64_t>(static_cast<double>(p.simulated.picoseconds()) / p.done));
  }
  p.done = std::clamp(p.done, 0.0, 1.0);
  return p;
}

void Progress::update(sim::Time simulated, uint64_t events) {
  if (out_ == nullptr) return;
  const auto now = Clock::now();
  if (options_.mode == ProgressMode::Auto && now - start_ < kAutoDelay) return;
  const auto every = tty_ ? std::chrono::duration<double>(kTerminalRefresh)
                          : std::chrono::duration<double>(options_.interval_s);
  if (shown_ && now - last_ < every) return;
  last_ = now;
  const std::string line = progress_line(state(simulated, events, std::chrono::duration<double>(now - start_).count()));
  // "\x1b[K" clears what a longer line before left on the terminal.
  *out_ << (tty_ ? "\r" : "") << line << (tty_ ? "\x1b[K" : "\n") << std::flush;
  shown_ = true;
}

void Progress::finish() {
  if (out_ != nullptr && shown_ && tty_) *out_ << "\r\x1b[K" << std::flush;
}

}  // namespace rnicsim::scenario
