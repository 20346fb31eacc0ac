#include "scenario/flow_sources.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <sstream>

#include "scenario/error.hpp"
#include "scenario/text_file.hpp"
#include "scenario/units.hpp"

namespace rnicsim::scenario {
namespace {

struct Token {
  std::string text;
  int col;
};

// The whitespace-separated fields of a line, each with its column (1-based).
std::vector<Token> tokens(const std::string& line) {
  std::vector<Token> out;
  size_t pos = 0;
  while (true) {
    const size_t b = line.find_first_not_of(" \t\r", pos);
    if (b == std::string::npos) break;
    const size_t e = line.find_first_of(" \t\r", b);
    out.push_back({line.substr(b, e == std::string::npos ? std::string::npos : e - b), static_cast<int>(b) + 1});
    if (e == std::string::npos) break;
    pos = e;
  }
  return out;
}

bool skip(const std::vector<Token>& t) { return t.empty() || t[0].text[0] == '#'; }

// Reads a file's text line by line, failing with path:line:column.
class LineFile {
public:
  LineFile(const std::string& path, std::string text) : path_(path), in_(std::move(text)) {}
  explicit LineFile(const std::string& path) : LineFile(path, read_text_file(path, kMaxDataFileBytes)) {}
  // The next line that is not blank or a comment; false at the end.
  bool next(std::vector<Token>& t) {
    std::string text;
    while (std::getline(in_, text)) {
      ++line_;
      t = tokens(text);
      if (!skip(t)) return true;
    }
    return false;
  }
  int line() const { return line_; }
  [[noreturn]] void fail(int col, const std::string& msg) const { throw ScenarioError(path_, line_, col, msg); }
  uint64_t whole(const Token& t, const std::string& what, uint64_t lo, uint64_t hi) const {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || p != t.text.data() + t.text.size())
      fail(t.col, "expected " + what + " (a whole number), got '" + t.text + "'");
    if (v < lo || v > hi)
      fail(t.col, what + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + t.text);
    return v;
  }
  double real(const Token& t, const std::string& what) const {
    char* end = nullptr;
    const double v = std::strtod(t.text.c_str(), &end);
    if (end != t.text.c_str() + t.text.size() || !std::isfinite(v) || v < 0)
      fail(t.col, "expected " + what + " (a number, at least 0), got '" + t.text + "'");
    return v;
  }

private:
  std::string path_;
  std::istringstream in_;
  int line_ = 0;
};

}  // namespace

bool looks_like_ns3_flow_text(const std::string& file_text) {
  std::istringstream in(file_text);
  std::string text;
  while (std::getline(in, text)) {
    const auto t = tokens(text);
    if (skip(t)) continue;
    return t.size() == 1 && std::all_of(t[0].text.begin(), t[0].text.end(), [](char c) { return c >= '0' && c <= '9'; });
  }
  return false;
}

std::vector<FlowSpec> read_ns3_flow_file(const std::string& path, const std::vector<HostSpec>& hosts) {
  return parse_ns3_flows(path, read_text_file(path, kMaxDataFileBytes), hosts);
}

std::vector<FlowSpec> parse_ns3_flows(const std::string& path, std::string text, const std::vector<HostSpec>& hosts) {
  LineFile f(path, std::move(text));
  std::vector<Token> t;
  if (!f.next(t)) throw ScenarioError(path, 1, 1, "an empty flow file: expected the number of flows on the first line");
  if (t.size() != 1) f.fail(t[1].col, "expected only the number of flows on the first line");
  const uint64_t n = f.whole(t[0], "the number of flows", 1, 10'000'000);
  const uint64_t max_node = hosts.size() - 1;
  std::vector<FlowSpec> flows;
  while (f.next(t)) {
    if (flows.size() == n)
      f.fail(t[0].col, "more flows than the " + std::to_string(n) + " the first line announces");
    if (t.size() != 6)
      f.fail(t.size() > 6 ? t[6].col : 1, "expected 6 fields (src dst priority dport size start_time), got " +
                                               std::to_string(t.size()));
    FlowSpec flow;
    flow.from = hosts[f.whole(t[0], "src (a host index)", 0, max_node)].name;
    flow.to = hosts[f.whole(t[1], "dst (a host index)", 0, max_node)].name;
    if (flow.from == flow.to) f.fail(t[1].col, "src and dst must be different hosts");
    flow.priority = static_cast<uint8_t>(f.whole(t[2], "priority", 0, 7));
    f.whole(t[3], "dport", 0, 65535);
    flow.size = f.whole(t[4], "size (bytes)", 1, 1ull << 31);
    const auto start = duration_from_seconds(f.real(t[5], "start_time (seconds)"));
    if (!start) f.fail(t[5].col, "start_time (seconds) must be at most 9.2e6 (about 106 days), got " + t[5].text);
    flow.start = *start;
    flows.push_back(flow);
  }
  if (flows.size() < n)
    throw ScenarioError(path, f.line() + 1, 1, "the first line announces " + std::to_string(n) +
                                                   " flows, the file has " + std::to_string(flows.size()));
  return flows;
}

SizeCdf SizeCdf::read(const std::string& path) {
  LineFile f(path);
  SizeCdf cdf;
  std::vector<Token> t;
  int last_col = 1;
  while (f.next(t)) {
    if (t.size() != 2) f.fail(t.size() > 2 ? t[2].col : 1, "expected 'size cumulative_probability'");
    const double size = f.real(t[0], "a size (bytes)");
    const double p = f.real(t[1], "a cumulative probability");
    if (size > static_cast<double>(1ull << 31)) f.fail(t[0].col, "sizes must be at most 2GiB");
    if (!cdf.points.empty() && size < cdf.points.back().size) f.fail(t[0].col, "sizes must not decrease");
    if (!cdf.points.empty() && p < cdf.points.back().p) f.fail(t[1].col, "cumulative probabilities must not decrease");
    if (p > 100) f.fail(t[1].col, "a cumulative probability goes up to 100 (percent) or 1");
    cdf.points.push_back({size, p});
    last_col = t[1].col;
  }
  if (cdf.points.empty()) throw ScenarioError(path, 1, 1, "the CDF file lists no points");
  const double last = cdf.points.back().p;
  if (last != 100 && last != 1)
    f.fail(last_col, "the last cumulative probability must be 100 (percent) or 1 (a fraction)");
  for (Point& p : cdf.points) p.p /= last;
  return cdf;
}

uint64_t SizeCdf::sample(sim::RandomStream& r) const {
  const double u = r.uniform01();
  const auto it = std::lower_bound(points.begin(), points.end(), u, [](const Point& p, double v) { return p.p < v; });
  double size;
  if (it == points.begin()) {
    size = it->size;
  } else {
    const Point& b = *it;
    const Point& a = *(it - 1);
    size = a.size + (b.size - a.size) * (u - a.p) / (b.p - a.p);
  }
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(size)));
}

double SizeCdf::mean() const {
  double m = points.front().p * points.front().size;
  for (size_t i = 1; i < points.size(); ++i)
    m += (points[i].p - points[i - 1].p) * (points[i].size + points[i - 1].size) / 2;
  return m;
}

std::vector<size_t> random_derangement(size_t n, sim::RandomStream& r) {
  std::vector<size_t> perm(n);
  while (true) {
    std::iota(perm.begin(), perm.end(), size_t{0});
    for (size_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[r.uniform(i + 1)]);
    bool fixed = false;
    for (size_t i = 0; i < n; ++i) fixed = fixed || perm[i] == i;
    if (!fixed) return perm;  // rejection keeps it uniform over derangements
  }
}

}  // namespace rnicsim::scenario
