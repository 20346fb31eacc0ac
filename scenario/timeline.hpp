// The WQE timeline (--timeline FILE): the NICs' timeline events (nic_model/
// wqe_events.hpp) as Chrome/Perfetto trace-event JSON. One process per host's
// NIC; per QP one track of instants (retransmissions, NAKs, CNPs, timeouts,
// receive completions, polls) and lanes of work requests, each a span from
// doorbell to CQE with its stages nested in it; one track for the port's PFC
// frames. A filter (QPs, a time window) bounds the size.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nic_model/types.hpp"
#include "sim/time.hpp"
#include "sim/trace_events.hpp"

namespace rnicsim::scenario {

struct Host;

// A QP to keep: its QPN, on the named host or (host empty) on every host.
struct TimelineQp {
  std::string host;
  nic::Qpn qpn{};
};

struct TimelineFilter {
  std::vector<TimelineQp> qps;  // empty: every QP
  sim::Time start = sim::Time::zero(), end = sim::Time::max();
  bool keeps_qp(std::string_view host, nic::Qpn qpn) const;
  // An event is kept when it lies wholly inside the window.
  bool keeps(sim::Time from, sim::Time to) const { return from >= start && to <= end; }
};

// "0x11,17,bob:0x12": QPNs in decimal or hex, each optionally host-qualified.
std::optional<std::vector<TimelineQp>> parse_timeline_qps(std::string_view text);
// "10us:2ms" (either side may be empty: from the start, to the end), END > START.
std::optional<TimelineFilter> parse_timeline_window(std::string_view text);

struct TimelineOptions {
  std::string path;  // empty: no timeline
  TimelineFilter filter;
};

class NicTrack;

class Timeline {
public:
  // Writes to `path` (throws std::runtime_error when it cannot be opened).
  Timeline(const std::string& path, TimelineFilter filter);
  // Writes to `out` (tests).
  Timeline(std::ostream& out, TimelineFilter filter);
  ~Timeline();
  // Observes this host's NIC (and its port's PFC frames) from now on.
  void attach(Host& host);
  // Ends the work requests still open (marked unfinished) and the document.
  void finish();
  uint64_t events() const { return writer_->events(); }

  // Used by the NICs' tracks.
  sim::TraceEventWriter& writer() { return *writer_; }
  const TimelineFilter& filter() const { return filter_; }
  int next_tid() { return ++last_tid_; }

private:
  std::unique_ptr<std::ofstream> file_;
  std::unique_ptr<sim::TraceEventWriter> writer_;
  TimelineFilter filter_;
  std::vector<std::unique_ptr<NicTrack>> nics_;
  int last_tid_ = 0;
  bool finished_ = false;
};

}  // namespace rnicsim::scenario
