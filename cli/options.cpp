#include "cli/options.hpp"

#include <charconv>
#include <cmath>
#include <sstream>
#include <vector>

#include "fabric/pcap_tap.hpp"
#include "scenario/units.hpp"

namespace rnicsim::cli {
namespace {

std::string got(const std::string& s) { return ", got '" + s + "'"; }

// "0..86400"; a bound at the type's limit is left out (">= 1").
template <class T>
std::string range_text(T lo, T hi, T min, T max) {
  std::ostringstream r;
  r.precision(17);
  if (lo > min && hi < max) r << lo << ".." << hi;
  else if (lo > min) r << ">= " << lo;
  else if (hi < max) r << "<= " << hi;
  return r.str();
}

}  // namespace

CLI::Validator whole_number(uint64_t lo, uint64_t hi) {
  const std::string range = range_text<uint64_t>(lo, hi, 0, UINT64_MAX);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        uint64_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size())
          return "expects a whole number" + (range.empty() ? "" : " " + range) + got(s);
        if (v < lo || v > hi) return "expects a whole number " + range + got(s);
        return "";
      },
      range);
}

CLI::Validator real_number(double lo, double hi) {
  const std::string range = range_text<double>(lo, hi, -HUGE_VAL, HUGE_VAL);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        double v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
          return "expects a number " + range + got(s);
        if (v < lo || v > hi) return "expects a number " + range + got(s);
        return "";
      },
      range);
}

CLI::Validator positive_duration() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const auto d = scenario::parse_duration(s);
        if (!d || d->picoseconds() <= 0) return "expects a time above zero, like 10us or 250ns" + got(s);
        return "";
      },
      "> 0");
}

CLI::Validator text_length(size_t lo, size_t hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi) + " characters";
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        if (s.size() < lo || s.size() > hi) return "expects " + range + got(s);
        return "";
      },
      range);
}

CLI::Option* one_of(CLI::Option* opt, std::span<const std::string_view> names) {
  std::string type;
  for (std::string_view n : names) type += (type.empty() ? "" : "|") + std::string(n);
  opt->type_name(type);
  return opt->check(CLI::Validator(
      [list = std::vector<std::string>(names.begin(), names.end()), type](std::string& s) -> std::string {
        for (const std::string& n : list)
          if (n == s) return "";
        return "expects one of " + type + got(s);
      },
      ""));
}

namespace {

// Types and ranges: get_type_name() is the type, then each check's range after ':'.
class HelpFormatter : public CLI::Formatter {
public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (opt->get_expected_max() == 0) return "";  // a flag
    const std::string t = opt->get_type_name();
    const std::string type = t.substr(0, t.find(':'));
    return type.empty() ? "" : " " + type + (opt->get_expected_max() > 1 ? " ..." : "");
  }
  std::string make_option_desc(const CLI::Option* opt) const override {
    std::vector<std::string> notes;
    const std::string t = opt->get_type_name();
    for (size_t at = t.find(':'); at != std::string::npos; at = t.find(':', at + 1)) {
      const std::string range = t.substr(at + 1, t.find(':', at + 1) - at - 1);
      if (!range.empty()) notes.push_back(range);
    }
    if (!opt->get_default_str().empty()) notes.push_back("default " + opt->get_default_str());
    if (opt->get_expected_max() > 1 && opt->nonpositional()) notes.push_back("repeatable");
    std::string desc = opt->get_description();
    for (size_t i = 0; i < notes.size(); ++i) desc += (i == 0 ? " (" : "; ") + notes[i];
    return notes.empty() ? desc : desc + ")";
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> help_formatter() {
  auto f = std::make_shared<HelpFormatter>();
  f->column_width(26);
  return f;
}

CLI::Option* add_log_level(CLI::App& app, sim::LogLevel& level) {
  auto* opt = app.add_option_function<std::string>(
      "--log-level", [&level](const std::string& s) { level = *sim::parse_log_level(s); },
      "what the simulation logs to stderr, from the most");
  opt->default_str(std::string(sim::to_string(level)));
  return one_of(opt, sim::kLogLevelNames);
}

namespace {

// A value that `parse` must accept (it returns an empty optional for a refused one).
template <class Parse>
CLI::Validator parsed_by(Parse parse, const std::string& expected) {
  return CLI::Validator([=](std::string& s) -> std::string { return parse(s) ? "" : "expects " + expected + got(s); },
                        "");
}

}  // namespace

void add_timeline(CLI::App& app, scenario::TimelineOptions& timeline) {
  app.add_option("--timeline", timeline.path,
                 "write the WQE timeline into FILE: trace-event JSON for ui.perfetto.dev or chrome://tracing, a "
                 "track per QP (README)")
      ->type_name("FILE")
      ->default_str("none");
  auto set_qps = [&timeline](const std::string& s) { timeline.filter.qps = *scenario::parse_timeline_qps(s); };
  app.add_option_function<std::string>("--timeline-qps", set_qps,
                                       "only these QPs in the timeline: QPNs (17, 0x11) or HOST:QPN, separated by "
                                       "commas")
      ->check(parsed_by(scenario::parse_timeline_qps, "QPNs or HOST:QPN separated by commas, like 0x11,bob:18"))
      ->type_name("LIST")
      ->default_str("every QP");
  auto set_window = [&timeline](const std::string& s) {
    const auto w = *scenario::parse_timeline_window(s);
    timeline.filter.start = w.start;
    timeline.filter.end = w.end;
  };
  app.add_option_function<std::string>(
         "--timeline-window", set_window,
         "only what lies wholly in the span START:END of simulated time in the timeline (10us:2ms; either side "
         "may be empty)")
      ->check(parsed_by(scenario::parse_timeline_window, "START:END, times like 10us:2ms with END after START"))
      ->type_name("WINDOW")  // not START:END: the help reads what follows a ':' as the range
      ->default_str("the whole run");
}

CLI::Option* add_ib_capture(CLI::App& app, std::string& name) {
  static constexpr auto kNames = fabric::ib_capture_names();
  auto* opt = app.add_option("--ib-capture", name,
                             "how native InfiniBand packets are captured: ERF records Wireshark 4.0 decodes, or "
                             "LINKTYPE_INFINIBAND (247); instead of the scenario's ib_capture");
  return one_of(opt->default_str("the scenario's ib_capture, else erf"), kNames);
}

}  // namespace rnicsim::cli
