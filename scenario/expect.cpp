#include "scenario/expect.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "scenario/units.hpp"
#include "scenario/yaml_reader.hpp"

namespace rnicsim::scenario {
namespace {

enum class Unit : uint8_t { Rate, Time, Count, Ratio };

struct WorkloadMetric {
  std::string_view name;
  Unit unit;
  std::string_view what;
  double (*get)(const WorkloadSummary&);
};

struct TotalMetric {
  std::string_view name;
  Unit unit;
  std::string_view what;
  double (*get)(const Summary&);
};

double ps_to_s(uint64_t ps) { return static_cast<double>(ps) / 1e12; }

double slowdown_quantile(const WorkloadSummary& w, double q) {
  std::vector<double> v;
  for (const FlowResult& f : w.flows)
    if (f.done) v.push_back(f.slowdown);
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // Nearest rank: the smallest value with at least q of the flows at or below it.
  const size_t rank = std::max<size_t>(1, static_cast<size_t>(std::ceil(q * static_cast<double>(v.size()))));
  return v[std::min(rank, v.size()) - 1];
}

constexpr WorkloadMetric kWorkloadMetrics[] = {
    {"throughput", Unit::Rate, "goodput of the workload's messages", [](const WorkloadSummary& w) { return w.gbps * 1e9; }},
    {"message_rate", Unit::Count, "messages per second", [](const WorkloadSummary& w) { return w.mmsg_per_s * 1e6; }},
    {"post_cpu_busy", Unit::Ratio, "the busiest posting core's share of the run", [](const WorkloadSummary& w) { return w.post_cpu_busy; }},
    {"messages", Unit::Count, "messages completed", [](const WorkloadSummary& w) { return static_cast<double>(w.messages); }},
    {"latency_p50", Unit::Time, "median latency", [](const WorkloadSummary& w) { return ps_to_s(w.lat_p50_ps); }},
    {"latency_p99", Unit::Time, "99th percentile latency", [](const WorkloadSummary& w) { return ps_to_s(w.lat_p99_ps); }},
    {"latency_min", Unit::Time, "lowest latency", [](const WorkloadSummary& w) { return ps_to_s(w.lat_min_ps); }},
    {"latency_max", Unit::Time, "highest latency", [](const WorkloadSummary& w) { return ps_to_s(w.lat_max_ps); }},
    {"slowdown_p50", Unit::Ratio, "median flow completion slowdown (flows)", [](const WorkloadSummary& w) { return slowdown_quantile(w, 0.5); }},
    {"slowdown_p99", Unit::Ratio, "99th percentile slowdown (flows)", [](const WorkloadSummary& w) { return slowdown_quantile(w, 0.99); }},
    {"slowdown_max", Unit::Ratio, "highest slowdown (flows)", [](const WorkloadSummary& w) { return slowdown_quantile(w, 1.0); }},
};

constexpr TotalMetric kTotalMetrics[] = {
    {"drops", Unit::Count, "frames lost on wires, to faults or at full queues", [](const Summary& s) { return static_cast<double>(s.drops); }},
    {"retransmissions", Unit::Count, "request packets sent again", [](const Summary& s) { return static_cast<double>(s.retransmissions); }},
    {"rx_errors", Unit::Count, "frames receivers dropped as malformed or with a bad ICRC", [](const Summary& s) { return static_cast<double>(s.rx_errors); }},
    {"packets", Unit::Count, "frames put on wires", [](const Summary& s) { return static_cast<double>(s.packets); }},
    {"data_packets", Unit::Count, "request packets sent", [](const Summary& s) { return static_cast<double>(s.data_packets); }},
    {"messages", Unit::Count, "messages completed, all workloads", [](const Summary& s) { return static_cast<double>(s.messages); }},
    {"simulated_time", Unit::Time, "simulated time of the run", [](const Summary& s) { return s.sim_seconds; }},
    {"ecn_marked", Unit::Count, "frames switches marked Congestion Experienced", [](const Summary& s) { return static_cast<double>(s.fabric.ecn_marked); }},
    {"ce_received", Unit::Count, "packets that reached a NIC marked Congestion Experienced", [](const Summary& s) { return static_cast<double>(s.fabric.ecn_ce_received); }},
    {"cnps", Unit::Count, "CNPs sent by notification points", [](const Summary& s) { return static_cast<double>(s.fabric.cnps_sent); }},
    {"pfc_pauses", Unit::Count, "PFC pause frames (XOFF and refreshes) sent, all priorities", [](const Summary& s) {
       double n = 0;
       for (size_t p = 0; p < 8; ++p) n += static_cast<double>(s.fabric.xoff_sent[p] + s.fabric.refresh_sent[p]);
       return n;
     }},
    {"pfc_paused_time", Unit::Time, "time ports stood paused, summed over ports and priorities", [](const Summary& s) {
       double us = 0;
       for (double v : s.fabric.paused_us) us += v;
       return us / 1e6;
     }},
};

// ibv_wc_status names without IBV_WC_, by value.
constexpr std::string_view kStatusNames[] = {
    "SUCCESS",         "LOC_LEN_ERR",      "LOC_QP_OP_ERR",     "LOC_EEC_OP_ERR",    "LOC_PROT_ERR",
    "WR_FLUSH_ERR",    "MW_BIND_ERR",      "BAD_RESP_ERR",      "LOC_ACCESS_ERR",    "REM_INV_REQ_ERR",
    "REM_ACCESS_ERR",  "REM_OP_ERR",       "RETRY_EXC_ERR",     "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR",
    "REM_INV_RD_REQ_ERR", "REM_ABORT_ERR", "INV_EECN_ERR",      "INV_EEC_STATE_ERR", "FATAL_ERR",
    "RESP_TIMEOUT_ERR", "GENERAL_ERR"};
static_assert(std::size(kStatusNames) == kCompletionStatuses);

}  // namespace

std::string_view completion_status_name(size_t status) { return status < std::size(kStatusNames) ? kStatusNames[status] : "?"; }

namespace {

std::string_view unit_name(Unit u) {
  switch (u) {
    case Unit::Rate: return "a rate like 90Gbps";
    case Unit::Time: return "a time like 2us";
    case Unit::Count: return "a number";
    case Unit::Ratio: return "a number";
  }
  return "";
}

std::string format(double v, Unit u) {
  char b[64];
  switch (u) {
    case Unit::Rate: std::snprintf(b, sizeof b, "%.3f Gb/s", v / 1e9); break;
    case Unit::Time: std::snprintf(b, sizeof b, "%.3f us", v * 1e6); break;
    case Unit::Count: std::snprintf(b, sizeof b, "%.10g", v); break;
    case Unit::Ratio: std::snprintf(b, sizeof b, "%.4g", v); break;
  }
  return b;
}

struct Resolved {
  Unit unit;
  const WorkloadMetric* workload_metric = nullptr;
  std::string workload;
  const TotalMetric* total = nullptr;
  int status = -1;
};

std::optional<Resolved> resolve(const std::string& metric, const Scenario* s) {
  for (const TotalMetric& t : kTotalMetrics)
    if (t.name == metric) return Resolved{t.unit, nullptr, "", &t, -1};
  const size_t dot = metric.rfind('.');
  if (dot == std::string::npos) return std::nullopt;
  const std::string head = metric.substr(0, dot), tail = metric.substr(dot + 1);
  if (head == "completions") {
    for (size_t i = 0; i < std::size(kStatusNames); ++i)
      if (kStatusNames[i] == tail) return Resolved{Unit::Count, nullptr, "", nullptr, static_cast<int>(i)};
    return std::nullopt;
  }
  bool known = s == nullptr;
  if (s != nullptr)
    for (const WorkloadSpec& w : s->workloads) known |= w.name == head;
  if (!known) return std::nullopt;
  for (const WorkloadMetric& m : kWorkloadMetrics)
    if (m.name == tail) return Resolved{m.unit, &m, head, nullptr, -1};
  return std::nullopt;
}

constexpr std::pair<std::string_view, ExpectOp> kOps[] = {
    {"<=", ExpectOp::LessEqual}, {">=", ExpectOp::GreaterEqual}, {"==", ExpectOp::Equal},
    {"!=", ExpectOp::NotEqual},  {"<", ExpectOp::Less},          {">", ExpectOp::Greater},
};

bool holds(double m, ExpectOp op, double v) {
  switch (op) {
    case ExpectOp::Less: return m < v;
    case ExpectOp::LessEqual: return m <= v;
    case ExpectOp::Greater: return m > v;
    case ExpectOp::GreaterEqual: return m >= v;
    case ExpectOp::Equal: return m == v;
    case ExpectOp::NotEqual: return m != v;
  }
  return false;
}

}  // namespace

std::vector<Expectation> read_expectations(const Reader& r, const YAML::Node& n, const Scenario& s) {
  if (!n.IsSequence()) r.fail(n, "expected 'expect' to be a list of conditions like \"write.throughput >= 90Gbps\"");
  std::vector<Expectation> out;
  for (const YAML::Node& e : n) {
    Expectation x;
    x.text = r.scalar(e, "an expectation");
    std::istringstream in(x.text);
    std::string op, value, extra;
    in >> x.metric >> op >> value >> extra;
    if (x.metric.empty() || op.empty() || value.empty() || !extra.empty())
      r.fail(e, "expected METRIC OP VALUE (like \"write.throughput >= 90Gbps\"), got '" + x.text + "'");
    const auto res = resolve(x.metric, &s);
    if (!res)
      r.fail(e, "unknown metric '" + x.metric + "' (a total like drops, WORKLOAD.throughput with a workload of this "
                    "scenario, or completions.STATUS; rnicsim params lists them)");
    const auto* it = std::find_if(std::begin(kOps), std::end(kOps), [&](const auto& p) { return p.first == op; });
    if (it == std::end(kOps)) r.fail(e, "unknown comparison '" + op + "' (use <, <=, >, >=, == or !=)");
    x.op = it->second;
    bool ok = true;
    switch (res->unit) {
      case Unit::Rate: {
        const auto v = parse_rate(value);
        ok = v.has_value();
        if (ok) x.value = static_cast<double>(*v);
        break;
      }
      case Unit::Time: {
        const auto v = parse_duration(value);
        ok = v.has_value();
        if (ok) x.value = v->seconds();
        break;
      }
      case Unit::Count:
      case Unit::Ratio: {
        char* end = nullptr;
        x.value = std::strtod(value.c_str(), &end);
        ok = end != value.c_str() && *end == '\0' && std::isfinite(x.value);
        break;
      }
    }
    if (!ok) r.fail(e, "'" + x.metric + "' is compared with " + std::string(unit_name(res->unit)) + ", got '" + value + "'");
    out.push_back(std::move(x));
  }
  return out;
}

std::vector<ExpectResult> check_expectations(const std::vector<Expectation>& es, const Summary& s) {
  std::vector<ExpectResult> out;
  for (const Expectation& e : es) {
    ExpectResult r;
    r.expectation = e;
    const auto res = resolve(e.metric, nullptr);
    if (!res) {
      r.measured_text = "no such metric";
      out.push_back(r);
      continue;
    }
    if (res->total != nullptr) {
      r.measured = res->total->get(s);
    } else if (res->status >= 0) {
      r.measured = static_cast<double>(s.completions[static_cast<size_t>(res->status)]);
    } else {
      const auto w = std::find_if(s.workloads.begin(), s.workloads.end(),
                                  [&](const WorkloadSummary& x) { return x.name == res->workload; });
      if (w == s.workloads.end()) {
        r.measured_text = "workload did not run";
        out.push_back(r);
        continue;
      }
      r.measured = res->workload_metric->get(*w);
    }
    r.measured_text = format(r.measured, res->unit);
    r.ok = holds(r.measured, e.op, e.value);
    out.push_back(r);
  }
  return out;
}

std::vector<std::string> expect_metrics() {
  std::vector<std::string> v;
  for (const TotalMetric& t : kTotalMetrics) v.push_back(std::string(t.name) + "  (" + std::string(unit_name(t.unit)) + "): " + std::string(t.what));
  for (const WorkloadMetric& m : kWorkloadMetrics)
    v.push_back("WORKLOAD." + std::string(m.name) + "  (" + std::string(unit_name(m.unit)) + "): " + std::string(m.what));
  v.push_back("completions.STATUS  (a number): work completions with that ibv_wc_status, e.g. completions.RETRY_EXC_ERR");
  return v;
}

}  // namespace rnicsim::scenario
