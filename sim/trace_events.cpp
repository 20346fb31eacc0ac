#include "sim/trace_events.hpp"

#include <cinttypes>
#include <cstdio>

#include "sim/output.hpp"

namespace rnicsim::sim {

std::string microseconds_text(Time t) {
  const int64_t ps = t.picoseconds();
  const bool negative = ps < 0;
  const uint64_t v = negative ? uint64_t(0) - static_cast<uint64_t>(ps) : static_cast<uint64_t>(ps);
  char buf[40];
  int n = std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%06" PRIu64, negative ? "-" : "", v / 1'000'000,
                        v % 1'000'000);
  while (buf[n - 1] == '0') --n;  // "1.500000" -> "1.5", "2.000000" -> "2."
  if (buf[n - 1] == '.') --n;
  return std::string(buf, static_cast<size_t>(n));
}

std::string json_string(std::string_view s) { return Json(std::string(s)).dump(); }

void TraceArgs::key(std::string_view k) {
  text_ += text_.empty() ? "" : ",";
  text_ += json_string(k);
  text_ += ':';
}

TraceArgs& TraceArgs::add(std::string_view k, uint64_t value) {
  key(k);
  text_ += std::to_string(value);
  return *this;
}

TraceArgs& TraceArgs::add(std::string_view k, std::string_view value) {
  key(k);
  text_ += json_string(value);
  return *this;
}

TraceArgs& TraceArgs::add_hex(std::string_view k, uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, value);
  return add(k, std::string_view(buf));
}

TraceEventWriter::TraceEventWriter(std::ostream& out) : out_(out) { out_ << "{\"traceEvents\":[\n"; }

TraceEventWriter::~TraceEventWriter() { finish(); }

void TraceEventWriter::begin(char phase, int pid, int tid, std::string_view name) {
  out_ << (events_++ == 0 ? "" : ",\n") << "{\"ph\":\"" << phase << "\",\"pid\":" << pid << ",\"tid\":" << tid
       << ",\"name\":" << json_string(name);
}

void TraceEventWriter::metadata(std::string_view what, int pid, int tid, std::string_view name, int sort_index) {
  begin('M', pid, tid, what);
  out_ << ",\"args\":{\"name\":" << json_string(name) << "}}";
  const std::string sort = std::string(what.substr(0, what.find('_'))) + "_sort_index";
  begin('M', pid, tid, sort);
  out_ << ",\"args\":{\"sort_index\":" << sort_index << "}}";
}

void TraceEventWriter::process_name(int pid, std::string_view name, int sort_index) {
  metadata("process_name", pid, 0, name, sort_index);
}

void TraceEventWriter::thread_name(int pid, int tid, std::string_view name, int sort_index) {
  metadata("thread_name", pid, tid, name, sort_index);
}

void TraceEventWriter::complete(int pid, int tid, std::string_view name, std::string_view category, Time start,
                                Time end, const TraceArgs& args) {
  begin('X', pid, tid, name);
  out_ << ",\"cat\":" << json_string(category) << ",\"ts\":" << microseconds_text(start)
       << ",\"dur\":" << microseconds_text(Time::zero() + (end - start));
  if (!args.empty()) out_ << ",\"args\":{" << args.text() << '}';
  out_ << '}';
}

void TraceEventWriter::instant(int pid, int tid, std::string_view name, std::string_view category, Time at,
                               const TraceArgs& args, bool process_wide) {
  begin('i', pid, tid, name);
  out_ << ",\"cat\":" << json_string(category) << ",\"ts\":" << microseconds_text(at) << ",\"s\":\""
       << (process_wide ? 'p' : 't') << '"';
  if (!args.empty()) out_ << ",\"args\":{" << args.text() << '}';
  out_ << '}';
}

void TraceEventWriter::finish() {
  if (finished_) return;
  finished_ = true;
  out_ << "\n],\"displayTimeUnit\":\"ns\"}\n";
  out_.flush();
}

}  // namespace rnicsim::sim
