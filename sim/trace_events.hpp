// A stream writer of Chrome/Perfetto trace-event JSON ("Trace Event Format"):
// {"traceEvents":[...],"displayTimeUnit":"ns"}. Each event is written as it
// comes, so a trace of any length costs no memory. Times are simulated
// picoseconds, written as exact decimal microseconds ("ts":1.234567).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "sim/time.hpp"

namespace rnicsim::sim {

// An event's "args": an object built up by key, its text kept for the write.
class TraceArgs {
public:
  TraceArgs& add(std::string_view key, uint64_t value);
  TraceArgs& add(std::string_view key, std::string_view value);
  TraceArgs& add_hex(std::string_view key, uint64_t value);  // "0x1f", as a string
  const std::string& text() const { return text_; }
  bool empty() const { return text_.empty(); }

private:
  void key(std::string_view k);
  std::string text_;
};

class TraceEventWriter {
public:
  explicit TraceEventWriter(std::ostream& out);
  TraceEventWriter(const TraceEventWriter&) = delete;
  TraceEventWriter& operator=(const TraceEventWriter&) = delete;
  ~TraceEventWriter();  // finishes the document if finish() was not called

  // Metadata: the names Perfetto and chrome://tracing show, and the order of tracks.
  void process_name(int pid, std::string_view name, int sort_index);
  void thread_name(int pid, int tid, std::string_view name, int sort_index);
  // A duration ("ph":"X") from `start` to `end` on one track.
  void complete(int pid, int tid, std::string_view name, std::string_view category, Time start, Time end,
                const TraceArgs& args = {});
  // An instant ("ph":"i") on a thread's track ("s":"t") or across the process ("s":"p").
  void instant(int pid, int tid, std::string_view name, std::string_view category, Time at,
               const TraceArgs& args = {}, bool process_wide = false);
  // Closes the event array and the document; nothing may be written after it.
  void finish();
  uint64_t events() const { return events_; }

private:
  void begin(char phase, int pid, int tid, std::string_view name);
  void metadata(std::string_view what, int pid, int tid, std::string_view name, int sort_index);
  std::ostream& out_;
  uint64_t events_ = 0;
  bool finished_ = false;
};

// `t` in microseconds, exact: "0", "1.5", "0.000001" (a picosecond).
std::string microseconds_text(Time t);
// `s` as a JSON string, quotes included.
std::string json_string(std::string_view s);

}  // namespace rnicsim::sim
