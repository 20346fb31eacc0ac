#include "scenario/workload_keys.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include "scenario/fabric_keys.hpp"
#include "scenario/flow_sources.hpp"
#include "scenario/text_file.hpp"
#include "scenario/units.hpp"

namespace rnicsim::scenario {

namespace {

constexpr auto kOps = op_words<false>();
constexpr std::pair<std::string_view, WorkloadOp> kAtomicTypes[] = {
    {"fetch_add", WorkloadOp::FetchAdd}, {"cmp_swap", WorkloadOp::CmpSwap},
    {"FETCH_AND_ADD", WorkloadOp::FetchAdd}, {"CMP_AND_SWAP", WorkloadOp::CmpSwap}};
constexpr auto kFlowOps = op_words<true>();
constexpr std::pair<std::string_view, WorkloadPattern> kPatterns[] = {
    {"bw", WorkloadPattern::Bandwidth}, {"lat", WorkloadPattern::Latency}, {"flows", WorkloadPattern::Flows}};

// Every workload takes these; a perftest (bw, lat) or a flows workload more.
const KeyInfo kWorkloadKeys[] = {
    {"name", "workloadN (N: place in the list from 0)", "text", "",
     "the workload's name in reports and metrics (letters, digits, '_', '-', '.')"},
    {"pattern", "bw", "bw | lat | flows", "", "perftest's ib_*_bw or ib_*_lat, or a set of flows"},
    {"start", "when the previous workload ends", "time (10us)", "", "when the workload starts"},
    {"priority", "0", "count", "0..7", "traffic priority: SL = priority, DSCP = 8 x priority"},
    {"timeout", "14", "count | time (100us)", "0..31", "local ACK timeout 4.096 us x 2^timeout, 0: none (-u); a time: exactly that"},
    {"retry_cnt", "7", "count", "0..7", "retransmissions after timeouts or NAKs before the QP fails"},
    {"rnr_retry", "7", "count", "0..7", "retries after RNR NAKs before the QP fails (7: no end)"},
};
const KeyInfo kPerftestKeys[] = {
    {"op", "", "write | write_imm | send | send_imm | read | atomic | fetch_add | cmp_swap", "", "the verb posted (required)"},
    {"from", "", "host name", "", "the requester's host (required)"},
    {"to", "", "host name", "", "the responder's host (required)"},
    {"size", "bw 65536, lat 2, atomics 8", "bytes (64KiB)", "1..2GiB", "message size (-s)"},
    {"all_sizes", "false", "true | false", "", "every power of two from 2 B to 8 MiB, one after another (-a)"},
    {"iterations", "bw 5000, lat 1000", "count", "1..2^40", "messages per QP (-n)"},
    {"count", "", "count", "1..2^40", "another name for iterations"},
    {"qps", "1", "count", "1..65536 (lat: 1)", "QP pairs, each running iterations (-q)"},
    {"processes", "1", "count", "1..qps", "bw: perftest processes sharing the QPs, each on a core of its own (QP i in process i mod N)"},
    {"tx_depth", "bw 128, lat 1 (at most iterations)", "count", "1..8192", "send queue depth (-t)"},
    {"rx_depth", "512 (at most iterations)", "count", "1..16384", "send, send_imm, write_imm: receives kept posted per QP (-r)"},
    {"cq_mod", "100; 1 above 8KiB messages; post_list with one; at most tx_depth", "count", "1..1024",
     "bw: every cq_mod-th WQE is signaled (-Q)"},
    {"post_list", "1", "count", "1..tx_depth", "bw: WQEs per doorbell; divides iterations (-l)"},
    {"inline_size", "lat write, write_imm, send: 64; else 0", "bytes", "0..64", "messages up to this size go inline (-I)"},
    {"outs", "16", "count", "1..255", "READs and atomics outstanding per QP (-o)"},
    {"atomic_type", "fetch_add", "fetch_add | cmp_swap | FETCH_AND_ADD | CMP_AND_SWAP", "", "op: atomic: which one (-A)"},
    {"connect", "exchange", "exchange | rdma_cm", "", "how the QPs connect: numbers exchanged out of band, or the RDMA CM on the wire (-R)"},
    {"connection", "RC", "RC | UC | UD", "", "the QPs' transport (-c): UC writes and sends without ACKs, UD sends datagrams of one packet"},
};
const KeyInfo kFlowsKeys[] = {
    {"flows", "", "list | file | map", "", "the flows: a list, a CSV or ns-3 flow file, or a generator (required)"},
    {"qp_per_flow", "false", "true | false", "", "a QP pair per flow, else one per pair of hosts"},
    {"tx_depth", "128", "count", "1..8192", "send queue depth of each QP"},
    {"base_rtt", "2 x the path's propagation delay", "time (4us)", "", "round trip of the ideal FCT a slowdown divides by"},
};
// A flow in a list, and the columns of a CSV flow file.
const KeyInfo kFlowKeys[] = {
    {"from", "", "host name", "", "the sender (required)"},
    {"to", "", "host name", "", "the receiver (required)"},
    {"op", "write", "write | write_imm | send | read", "", "the verb of the flow's one message"},
    {"size", "", "bytes (64KiB)", "1..2GiB", "the message's size (required)"},
    {"start", "0", "time (10us)", "", "when the flow starts, after the workload starts"},
    {"priority", "the workload's", "count", "0..7", "the flow's traffic priority"},
};
const KeyInfo kFlowFileKeys[] = {
    {"file", "", "file", "", "a CSV or ns-3 flow file, relative to the scenario (required)"},
    {"format", "ns3 if the first line is a lone number, else csv", "csv | ns3", "",
     "ns3: the ns-3 RDMA simulators' flow file (N, then src dst priority dport size start_time)"},
};
// Every generator takes these; each kind more.
const KeyInfo kGeneratorKeys[] = {
    {"generate", "", "all_to_all | incast | permutation | poisson", "", "the pattern generated (required)"},
    {"op", "write", "write | write_imm | send | read", "", "the verb of every flow"},
    {"start", "0", "time (10us)", "", "when the flows start (poisson: the first arrivals' origin), after the workload"},
};
const KeyInfo kAllToAllKeys[] = {
    {"size", "", "bytes (64KiB)", "1..2GiB", "every flow's size (required)"},
    {"hosts", "all", "[host] | all", "", "the hosts taking part"},
};
const KeyInfo kIncastKeys[] = {
    {"size", "", "bytes (1MiB)", "1..2GiB", "every flow's size (required)"},
    {"to", "", "host name", "", "the receiver of every flow (required)"},
    {"from", "all", "[host] | all", "", "the senders (the receiver left out)"},
};
const KeyInfo kPoissonKeys[] = {
    {"load", "", "fraction of the link rate", "above 0 .. 1", "offered load of each host (required)"},
    {"cdf", "", "file", "", "flow sizes: lines 'size cumulative_probability', to 100 or 1 (required)"},
    {"count", "", "count", "1..10^7", "flows to generate (this or duration required)"},
    {"duration", "", "time (1ms)", "", "generate arrivals until this time (this or count required)"},
    {"hosts", "all", "[host] | all", "", "the hosts sending and receiving"},
};
enum class FlowGenerator : uint8_t { AllToAll, Incast, Permutation, Poisson };
constexpr std::pair<std::string_view, FlowGenerator> kFlowGenerators[] = {
    {"all_to_all", FlowGenerator::AllToAll},
    {"incast", FlowGenerator::Incast},
    {"permutation", FlowGenerator::Permutation},
    {"poisson", FlowGenerator::Poisson}};
enum class FlowFileFormat : uint8_t { Csv, Ns3 };
constexpr std::pair<std::string_view, FlowFileFormat> kFlowFileFormats[] = {{"csv", FlowFileFormat::Csv},
                                                                            {"ns3", FlowFileFormat::Ns3}};
constexpr uint64_t kMaxGeneratedFlows = 10'000'000;

void check_linked(const Reader& r, const YAML::Node& at, const Scenario& s, const std::string& from,
                  const std::string& to) {
  if (from == to) r.fail(at, "'from' and 'to' must be different hosts");
  if (!reachable(s, from, to)) r.fail(at, std::string(s.fabric.has_switches() ? "no path" : "no link") + " joins '" + from + "' and '" + to + "'");
}

uint64_t message_size(const Reader& r, const YAML::Node& n, const std::string& what) {
  const uint64_t size = r.parsed<uint64_t>(n, what + " (bytes, like 64KiB)", parse_size);
  if (size < 1 || size > (1ull << 31)) r.fail(n, what + " must be from 1 byte to 2GiB");
  return size;
}

[[noreturn]] void fail_at(const std::string& path, int line, int col, const std::string& msg) {
  throw ScenarioError(path, line, col, msg);
}

// A line of a CSV file split on commas, each field trimmed, with its column for errors.
using CsvFields = std::vector<std::pair<std::string, int>>;
CsvFields split_csv_line(const std::string& text) {
  CsvFields fields;
  size_t pos = 0;
  while (true) {
    const size_t comma = text.find(',', pos);
    std::string f = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const size_t b = f.find_first_not_of(" \t");
    const size_t e = f.find_last_not_of(" \t");
    const int col = static_cast<int>(pos + (b == std::string::npos ? 0 : b)) + 1;
    fields.emplace_back(b == std::string::npos ? "" : f.substr(b, e - b + 1), col);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return fields;
}

// The header of a flow CSV: each column a flow key, once; from, to, op and size there.
std::vector<std::string> read_flow_csv_header(const std::string& path, int line_no, const CsvFields& fields) {
  std::vector<std::string> columns;
  for (const auto& [name, col] : fields) {
    const std::string& column = name;  // a lambda may not capture a structured binding (clang 14)
    if (std::none_of(std::begin(kFlowKeys), std::end(kFlowKeys), [&](const KeyInfo& k) { return k.name == column; })) {
      std::string list;
      for (const KeyInfo& k : kFlowKeys) list += (list.empty() ? "" : ", ") + std::string(k.name);
      fail_at(path, line_no, col, "unknown column '" + name + "' (expected a header of: " + list + ")");
    }
    if (std::find(columns.begin(), columns.end(), name) != columns.end())
      fail_at(path, line_no, col, "column '" + name + "' appears twice");
    columns.push_back(name);
  }
  for (const char* need : {"from", "to", "op", "size"})
    if (std::find(columns.begin(), columns.end(), need) == columns.end())
      fail_at(path, line_no, 1, std::string("the header needs a '") + need + "' column (from, to, op, size, start)");
  return columns;
}

// One flow of a flow CSV, its fields under `columns`.
FlowSpec read_flow_csv_line(const Reader& cr, int line_no, const std::vector<std::string>& columns,
                            const CsvFields& fields, const Scenario& s, const KnownHost& known_host) {
  const std::string& path = cr.file();
  if (fields.size() != columns.size())
    fail_at(path, line_no, 1, "expected " + std::to_string(columns.size()) + " fields, got " + std::to_string(fields.size()));
  FlowSpec f;
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string& v = fields[i].first;
    const int col = fields[i].second;
    // Reuse the YAML checks: wrap the field in a node and map its errors here.
    try {
      const YAML::Node n(v);
      if (columns[i] == "from") f.from = known_host(n, "from");
      if (columns[i] == "to") f.to = known_host(n, "to");
      if (columns[i] == "op") f.op = cr.choice(n, "op", kFlowOps);
      if (columns[i] == "size") f.size = message_size(cr, n, "size");
      if (columns[i] == "start") f.start = cr.parsed<sim::Duration>(n, "start (a time like 10us)", parse_duration);
      if (columns[i] == "priority") f.priority = static_cast<uint8_t>(cr.integer(n, "priority", 0, 7));
    } catch (const ScenarioError& e) {
      std::string msg = e.what();
      // Drop the "file:line:col: " the node's (meaningless) mark produced.
      for (int colons = 0; colons < 3 && !msg.empty(); ++colons) msg.erase(0, msg.find(':') + 1);
      if (!msg.empty() && msg.front() == ' ') msg.erase(0, 1);
      fail_at(path, line_no, col, msg);
    }
  }
  if (f.from == f.to) fail_at(path, line_no, 1, "'from' and 'to' must be different hosts");
  if (!reachable(s, f.from, f.to)) fail_at(path, line_no, 1, std::string(s.fabric.has_switches() ? "no path" : "no link") + " joins '" + f.from + "' and '" + f.to + "'");
  return f;
}

// A flow CSV: a header naming the columns (from, to, op, size, start, priority;
// start and priority may be left out), then one flow a line. '#' starts a comment line.
std::vector<FlowSpec> read_flow_csv(const Reader& r, const YAML::Node& at, const std::string& path,
                                    std::string file_text, const Scenario& s, const KnownHost& known_host) {
  std::istringstream in(std::move(file_text));
  const Reader cr(path);
  std::vector<FlowSpec> flows;
  std::vector<std::string> columns;
  std::string text;
  int line_no = 0;
  while (std::getline(in, text)) {
    ++line_no;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    const size_t first = text.find_first_not_of(" \t");
    if (first == std::string::npos || text[first] == '#') continue;
    const CsvFields fields = split_csv_line(text);
    if (columns.empty())
      columns = read_flow_csv_header(path, line_no, fields);
    else
      flows.push_back(read_flow_csv_line(cr, line_no, columns, fields, s, known_host));
  }
  if (flows.empty()) r.fail(at, "the flow file '" + path + "' lists no flows");
  return flows;
}

// A file named in the scenario, relative to the scenario's directory.
std::string scenario_path(const Reader& r, const YAML::Node& n, const Scenario& s, const std::string& what) {
  const std::filesystem::path p = r.scalar(n, what);
  if (p.is_absolute()) return p.string();
  return (std::filesystem::path(s.file).parent_path() / p).lexically_normal().string();
}

// Flows whose sizes follow a CDF file and whose arrivals are a Poisson process:
// host i starts flows at rate load x its link rate / (8 x the mean size), each to
// a uniformly random other host; together one process at the sum of the rates,
// each arrival's source drawn in proportion to its host's rate.
void generate_poisson(const Reader& r, const YAML::Node& g, const Scenario& s, const std::vector<std::string>& hosts,
                      const FlowSpec& proto, const std::string& stream, WorkloadSpec& spec) {
  if (!g["load"] || !g["cdf"] || (!g["count"] == !g["duration"]))
    r.fail(g, "poisson needs 'load', 'cdf' and one of 'count' or 'duration'");
  if (hosts.size() < 2) r.fail(g, "poisson needs at least two hosts");
  const double load = r.real(g["load"], "load (of the link rate)", 0.0, 1.0);
  if (load <= 0) r.fail(g["load"], "load must be above 0");
  const std::string cdf_path = scenario_path(r, g["cdf"], s, "cdf (a file of 'size cumulative_probability' lines)");
  if (!std::filesystem::exists(cdf_path)) r.fail(g["cdf"], "cannot open the CDF file '" + cdf_path + "'");
  const SizeCdf cdf = SizeCdf::read(cdf_path);
  uint64_t count = kMaxGeneratedFlows;
  sim::Duration until = sim::Duration::max();
  if (g["count"]) count = r.integer(g["count"], "count (flows)", 1, kMaxGeneratedFlows);
  if (g["duration"]) until = r.parsed<sim::Duration>(g["duration"], "duration (a time like 1ms)", parse_duration);
  const fabric::Topology& t = s.fabric.topology;
  std::vector<double> rate_cum;  // flows per second, cumulative over hosts
  double total = 0;
  for (const std::string& h : hosts) {
    total += load * static_cast<double>(t.access_rate(static_cast<uint32_t>(t.find(h)))) / (8.0 * cdf.mean());
    rate_cum.push_back(total);
  }
  sim::RandomStream rng(s.seed, stream);
  double at_s = 0;
  while (spec.flows.size() < count) {
    at_s += rng.exponential(1.0 / total);
    FlowSpec f = proto;
    const auto at = duration_from_seconds(at_s);
    if (!at || *at > sim::Duration::max() - proto.start) {
      if (g["duration"]) break;  // past any duration
      r.fail(g["load"], "the load is too low: the flows would start more than 106 days in");
    }
    if (*at >= until) break;
    f.start = proto.start + *at;
    const double u = rng.uniform01() * total;
    const size_t src = static_cast<size_t>(std::upper_bound(rate_cum.begin(), rate_cum.end(), u) - rate_cum.begin());
    size_t dst = rng.uniform(hosts.size() - 1);
    if (dst >= src) ++dst;
    f.from = hosts[std::min(src, hosts.size() - 1)];
    f.to = hosts[dst];
    f.size = cdf.sample(rng);
    check_linked(r, g, s, f.from, f.to);
    spec.flows.push_back(f);
  }
  if (spec.flows.size() == kMaxGeneratedFlows && !g["count"])
    r.fail(g["duration"], "the duration asks for more than " + std::to_string(kMaxGeneratedFlows) + " flows");
}

// flows: {generate: all_to_all | incast | permutation | poisson, ...}: the flows
// of a collective pattern, all starting at `start`, or Poisson arrivals.
void generate_flows(const Reader& r, const YAML::Node& g, const Scenario& s, const KnownHost& known_host,
                    WorkloadSpec& spec) {
  if (!g["generate"]) r.fail(g, "a flow generator needs 'generate' (all_to_all, incast, permutation or poisson)");
  const FlowGenerator kind = r.choice(g["generate"], "generate", kFlowGenerators);
  const bool poisson = kind == FlowGenerator::Poisson;
  if (kind == FlowGenerator::Incast)
    r.expect_keys(g, "an incast generator", kGeneratorKeys, kIncastKeys);
  else if (poisson)
    r.expect_keys(g, "a poisson generator", kGeneratorKeys, kPoissonKeys);
  else
    r.expect_keys(g, "a flow generator", kGeneratorKeys, kAllToAllKeys);
  if (!poisson && !g["size"]) r.fail(g, "a flow generator needs 'size'");
  FlowSpec proto;
  if (!poisson) proto.size = message_size(r, g["size"], "flow size");
  if (g["op"]) proto.op = r.choice(g["op"], "flow op", kFlowOps);
  if (g["start"]) proto.start = r.parsed<sim::Duration>(g["start"], "flow start (a time like 10us)", parse_duration);
  auto host_list = [&](const YAML::Node& n, const std::string& what) {
    std::vector<std::string> v;
    if (!n || (n.IsScalar() && n.Scalar() == "all")) {
      for (const HostSpec& h : s.hosts) v.push_back(h.name);
      return v;
    }
    if (!n.IsSequence() || n.size() == 0) r.fail(n, "expected " + what + " to be a list of hosts or 'all'");
    for (const YAML::Node& h : n) {
      v.push_back(known_host(h, what));
      if (std::count(v.begin(), v.end(), v.back()) > 1) r.fail(h, "host '" + v.back() + "' is listed twice");
    }
    return v;
  };
  auto add = [&](const YAML::Node& at, const std::string& a, const std::string& b) {
    check_linked(r, at, s, a, b);
    FlowSpec f = proto;
    f.from = a;
    f.to = b;
    spec.flows.push_back(f);
  };
  const std::string stream = "workload." + spec.name + ".flows";
  if (kind == FlowGenerator::AllToAll) {
    const std::vector<std::string> hosts = host_list(g["hosts"], "hosts");
    for (const std::string& a : hosts)
      for (const std::string& b : hosts)
        if (a != b) add(g, a, b);
  } else if (kind == FlowGenerator::Permutation) {
    const std::vector<std::string> hosts = host_list(g["hosts"], "hosts");
    if (hosts.size() < 2) r.fail(g["hosts"] ? g["hosts"] : g, "a permutation needs at least two hosts");
    sim::RandomStream rng(s.seed, stream);
    const std::vector<size_t> perm = random_derangement(hosts.size(), rng);
    for (size_t i = 0; i < hosts.size(); ++i) add(g, hosts[i], hosts[perm[i]]);
  } else if (poisson) {
    generate_poisson(r, g, s, host_list(g["hosts"], "hosts"), proto, stream, spec);
  } else {
    if (!g["to"]) r.fail(g, "incast takes 'to' (and optionally 'from')");
    const std::string to = known_host(g["to"], "to");
    for (const std::string& a : host_list(g["from"], "from"))
      if (a != to) add(g["to"], a, to);
  }
  if (spec.flows.empty()) r.fail(g, "the flow generator made no flows");
}

// flows: FILE or {file: FILE, format: csv | ns3}; without a format, a file whose
// first line is a lone number is an ns-3 flow file, else a CSV file.
std::vector<FlowSpec> read_flow_file(const Reader& r, const YAML::Node& flows, const Scenario& s,
                                     const KnownHost& known_host) {
  const YAML::Node file = flows.IsMap() ? flows["file"] : flows;
  if (flows.IsMap()) {
    r.expect_keys(flows, "a flow file", kFlowFileKeys);
    if (!file) r.fail(flows, "a flow file needs 'file'");
  }
  const std::string path = scenario_path(r, file, s, "a flow file");
  FlowFileFormat format = FlowFileFormat::Csv;
  if (flows.IsMap() && flows["format"]) format = r.choice(flows["format"], "format", kFlowFileFormats);
  if (!std::filesystem::exists(path)) r.fail(file, "cannot open the flow file '" + path + "'");
  std::string text = read_text_file(path, kMaxDataFileBytes);
  if (!(flows.IsMap() && flows["format"]) && looks_like_ns3_flow_text(text)) format = FlowFileFormat::Ns3;
  if (format == FlowFileFormat::Csv) return read_flow_csv(r, file, path, std::move(text), s, known_host);
  std::vector<FlowSpec> v = parse_ns3_flows(path, std::move(text), s.hosts);
  for (const FlowSpec& f : v) check_linked(r, file, s, f.from, f.to);
  return v;
}

WorkloadSpec read_flows(const Reader& r, const YAML::Node& w, const Scenario& s, const KnownHost& known_host,
                        WorkloadSpec spec) {
  r.expect_keys(w, "a flows workload", kWorkloadKeys, kFlowsKeys);
  const YAML::Node flows = w["flows"];
  if (!flows) r.fail(w, "a flows workload needs 'flows': a list of flows or a CSV file");
  if (flows.IsScalar() || (flows.IsMap() && flows["file"])) {
    spec.flows = read_flow_file(r, flows, s, known_host);
  } else if (flows.IsMap()) {
    generate_flows(r, flows, s, known_host, spec);
  } else {
    if (!flows.IsSequence() || flows.size() == 0)
      r.fail(flows, "expected 'flows' to be a non-empty list of flows or the name of a CSV file");
    for (const YAML::Node& f : flows) {
      r.expect_keys(f, "a flow", kFlowKeys);
      if (!f["from"] || !f["to"] || !f["size"]) r.fail(f, "a flow needs 'from', 'to' and 'size'");
      FlowSpec flow;
      flow.from = known_host(f["from"], "from");
      flow.to = known_host(f["to"], "to");
      check_linked(r, f["to"], s, flow.from, flow.to);
      if (f["op"]) flow.op = r.choice(f["op"], "flow op", kFlowOps);
      flow.size = message_size(r, f["size"], "flow size");
      if (f["start"]) flow.start = r.parsed<sim::Duration>(f["start"], "flow start (a time like 10us)", parse_duration);
      if (f["priority"]) flow.priority = static_cast<uint8_t>(r.integer(f["priority"], "flow priority", 0, 7));
      spec.flows.push_back(flow);
    }
  }
  if (w["qp_per_flow"]) spec.qp_per_flow = r.boolean(w["qp_per_flow"], "qp_per_flow");
  spec.tx_depth = 128;
  if (w["tx_depth"]) spec.tx_depth = static_cast<uint32_t>(r.integer(w["tx_depth"], "tx_depth", 1, 8192));
  if (w["base_rtt"]) spec.base_rtt = r.parsed<sim::Duration>(w["base_rtt"], "base_rtt (a time like 4us)", parse_duration);
  spec.size = 0;
  for (const FlowSpec& f : spec.flows) spec.size = std::max(spec.size, f.size);
  spec.iterations = spec.flows.size();
  spec.from = spec.flows.front().from;
  spec.to = spec.flows.front().to;
  return spec;
}

}  // namespace

std::vector<KeySection> workload_key_sections() {
  return {{"workloads[]", "", kWorkloadKeys},
          {"workloads[]", "pattern: bw | lat", kPerftestKeys},
          {"workloads[]", "pattern: flows", kFlowsKeys},
          {"workloads[].flows[]", "a list; also the columns of a CSV flow file", kFlowKeys},
          {"workloads[].flows", "a flow file", kFlowFileKeys},
          {"workloads[].flows", "a generator", kGeneratorKeys},
          {"workloads[].flows", "generate: all_to_all | permutation", kAllToAllKeys},
          {"workloads[].flows", "generate: incast", kIncastKeys},
          {"workloads[].flows", "generate: poisson", kPoissonKeys}};
}

namespace {

// perftest's -c: what each transport carries (IBTA table 38: UC has no READ or
// atomics, UD only SENDs).
void read_connection(const Reader& r, const YAML::Node& w, WorkloadSpec& spec) {
  spec.connection = r.choice(w["connection"], "connection", nic::kQpTypes);
  const OpShape shape = op_row(spec.op).shape;
  if (spec.connection == nic::QpType::Uc && shape != OpShape::Message)
    r.fail(w["connection"], "UC carries WRITEs and SENDs, not " + std::string(to_string(spec.op)));
  if (spec.connection == nic::QpType::Ud && !is_send(spec.op))
    r.fail(w["connection"], "UD carries SENDs only, not " + std::string(to_string(spec.op)));
  if (spec.connection != nic::QpType::Rc && spec.rdma_cm)
    r.fail(w["connection"], "connect: rdma_cm goes with connection: RC");
}

// op (or atomic_type), connect, and the two hosts of a perftest workload.
void read_perftest_op(const Reader& r, const YAML::Node& w, const Scenario& s, const KnownHost& known_host,
                      WorkloadSpec& spec) {
  if (!w["op"]) r.fail(w, "a workload needs 'op' (write, write_imm, send, send_imm, read, atomic, fetch_add or cmp_swap)");
  spec.op = r.choice(w["op"], "op", kOps);
  if (w["atomic_type"]) {
    if (r.scalar(w["op"], "op") != "atomic") r.fail(w["atomic_type"], "atomic_type goes with op: atomic");
    spec.op = r.choice(w["atomic_type"], "atomic_type", kAtomicTypes);
  }
  if (w["connect"]) {
    const std::string c = r.scalar(w["connect"], "connect");
    if (c != "exchange" && c != "rdma_cm") r.fail(w["connect"], "connect must be exchange or rdma_cm, not '" + c + "'");
    spec.rdma_cm = c == "rdma_cm";
  }
  if (w["connection"]) read_connection(r, w, spec);
  if (!w["from"] || !w["to"]) r.fail(w, "a workload needs 'from' and 'to' hosts");
  spec.from = known_host(w["from"], "from");
  spec.to = known_host(w["to"], "to");
  check_linked(r, w["to"], s, spec.from, spec.to);
}

// Sizes: perftest's -s, or -a (2 B to 8 MiB, powers of two); atomics are 8 bytes.
void read_sizes(const Reader& r, const YAML::Node& w, bool lat, WorkloadSpec& spec) {
  if (w["all_sizes"]) spec.all_sizes = r.boolean(w["all_sizes"], "all_sizes");
  if (w["size"] && spec.all_sizes) r.fail(w["size"], "size and all_sizes: true exclude each other");
  spec.size = lat ? 2 : 65536;
  if (w["size"]) spec.size = message_size(r, w["size"], "size");
  if (is_atomic(spec.op)) {
    if (w["size"] && spec.size != kPerftestAtomicSize) r.fail(w["size"], "atomics are 8 bytes: size must be 8");
    spec.size = kPerftestAtomicSize;
    spec.sizes = {spec.size};
  } else if (spec.all_sizes) {
    for (uint64_t b = 2; b <= kPerftestMaxSize; b *= 2) spec.sizes.push_back(b);
    spec.size = kPerftestMaxSize;
  } else {
    spec.sizes = {spec.size};
  }
}

// A UD message is one packet: as perftest does, a larger size becomes the path
// MTU, and -a stops there.
void fit_ud_sizes(uint64_t path_mtu, WorkloadSpec& spec) {
  for (uint64_t& b : spec.sizes) b = std::min(b, path_mtu);
  spec.sizes.erase(std::unique(spec.sizes.begin(), spec.sizes.end()), spec.sizes.end());
  spec.size = std::min(spec.size, path_mtu);
}

// Iterations (per QP), QPs, the queues' depths and the post list, each depth at
// most the iterations.
void read_depths(const Reader& r, const YAML::Node& w, bool lat, WorkloadSpec& spec) {
  if (w["iterations"] && w["count"]) r.fail(w["count"], "count is another name for iterations: give one of them");
  spec.iterations = lat ? 1000 : 5000;
  if (w["iterations"]) spec.iterations = r.integer(w["iterations"], "iterations", 1, 1ull << 40);
  if (w["count"]) spec.iterations = r.integer(w["count"], "count", 1, 1ull << 40);
  const YAML::Node iters_node = w["iterations"] ? w["iterations"] : w["count"];

  if (w["qps"]) spec.qps = static_cast<uint32_t>(r.integer(w["qps"], "qps", 1, 65536));
  if (lat && spec.qps != 1) r.fail(w["qps"], "latency tests use one QP (perftest's *_lat): qps must be 1");
  if (w["processes"]) {
    spec.processes = static_cast<uint32_t>(r.integer(w["processes"], "processes", 1, 65536));
    if (spec.processes > spec.qps) r.fail(w["processes"], "processes must not exceed qps (each process has a QP at least)");
  }

  spec.tx_depth = lat ? 1 : 128;
  if (w["tx_depth"]) spec.tx_depth = static_cast<uint32_t>(r.integer(w["tx_depth"], "tx_depth", 1, 8192));
  if (spec.tx_depth > spec.iterations) spec.tx_depth = static_cast<uint32_t>(spec.iterations);

  spec.rx_depth = needs_recv(spec.op) ? 512 : 1;
  if (w["rx_depth"]) {
    if (!needs_recv(spec.op)) r.fail(w["rx_depth"], "rx_depth applies to send, send_imm and write_imm");
    spec.rx_depth = static_cast<uint32_t>(r.integer(w["rx_depth"], "rx_depth", 1, 16384));
  }
  if (spec.rx_depth > spec.iterations) spec.rx_depth = static_cast<uint32_t>(spec.iterations);

  if (w["post_list"]) {
    spec.post_list = static_cast<uint32_t>(r.integer(w["post_list"], "post_list", 1, 8192));
    if (lat && spec.post_list != 1) r.fail(w["post_list"], "post_list applies to bw tests");
    if (spec.post_list > spec.tx_depth)
      r.fail(w["post_list"], "post_list must not exceed tx_depth (" + std::to_string(spec.tx_depth) + ")");
    if (spec.iterations % spec.post_list != 0)
      r.fail(iters_node ? iters_node : w["post_list"], "iterations must be a multiple of post_list");
  }
}

// Signalling, as perftest resolves it: every cq_mod-th WQE (100), every one for
// messages over 8 KiB unless asked, the post list size with a post list, never
// more than tx_depth.
void read_cq_mod(const Reader& r, const YAML::Node& w, WorkloadSpec& spec) {
  spec.cq_mod = 100;
  const bool cq_mod_given = static_cast<bool>(w["cq_mod"]);
  if (cq_mod_given) spec.cq_mod = static_cast<uint32_t>(r.integer(w["cq_mod"], "cq_mod", 1, 1024));
  if (!cq_mod_given && !spec.all_sizes && spec.size > kPerftestCqModSizeLimit) spec.cq_mod = 1;
  if (spec.post_list > 1) {
    if (!cq_mod_given)
      spec.cq_mod = spec.post_list;
    else if (spec.post_list % spec.cq_mod != 0)
      r.fail(w["cq_mod"], "post_list must be a multiple of cq_mod");
  }
  if (spec.cq_mod > spec.tx_depth) spec.cq_mod = spec.tx_depth;
}

// Inline: perftest's latency tests default to the largest inline the device
// takes (220 B for WRITE, 236 B for SEND on ConnectX); the modelled WQE holds 64.
void read_inline_size(const Reader& r, const YAML::Node& w, bool lat, WorkloadSpec& spec) {
  const bool can_inline = op_row(spec.op).can_inline;
  spec.inline_size = lat && can_inline ? kModelMaxInline : 0;
  if (w["inline_size"]) {
    const uint64_t v = r.parsed<uint64_t>(w["inline_size"], "inline_size (bytes)", parse_size);
    if (v > kModelMaxInline)
      r.fail(w["inline_size"], "inline_size must be at most 64 (the modelled WQE's inline segment), got " +
                                   std::to_string(v));
    spec.inline_size = can_inline ? static_cast<uint32_t>(v) : 0;  // READ and atomics never inline (perftest)
  }
}

// A perftest workload (bw, lat): perftest's options, resolved as perftest does.
WorkloadSpec read_perftest(const Reader& r, const YAML::Node& w, const Scenario& s, const KnownHost& known_host,
                           WorkloadSpec spec) {
  r.expect_keys(w, "a workload", kWorkloadKeys, kPerftestKeys);
  const bool lat = spec.pattern == WorkloadPattern::Latency;
  read_perftest_op(r, w, s, known_host, spec);
  read_sizes(r, w, lat, spec);
  if (spec.connection == nic::QpType::Ud) fit_ud_sizes(s.path_mtu, spec);
  read_depths(r, w, lat, spec);
  read_cq_mod(r, w, spec);
  read_inline_size(r, w, lat, spec);
  if (w["outs"]) spec.outs = static_cast<uint32_t>(r.integer(w["outs"], "outs", 1, 255));
  return spec;
}

// `timeout`: the IBTA's exponent (4.096 us x 2^timeout), or a time the QP's
// local ACK timer then takes exactly (a simulation may want 100us, which no
// exponent gives).
void read_timeout(const Reader& r, const YAML::Node& n, WorkloadSpec& spec) {
  const std::string s = r.scalar(n, "timeout");
  if (!s.empty() && std::isdigit(static_cast<unsigned char>(s.back()))) {
    spec.timeout = static_cast<uint8_t>(r.integer(n, "timeout", 0, 31));
    return;
  }
  spec.ack_timeout = r.parsed<sim::Duration>(n, "timeout (0..31, or a time like 100us)", parse_duration);
  if (spec.ack_timeout <= sim::Duration::zero()) r.fail(n, "timeout as a time must be above zero");
}

}  // namespace

WorkloadSpec read_workload(const Reader& r, const YAML::Node& w, const Scenario& s, const KnownHost& known_host) {
  if (!w.IsMap()) r.fail(w, "expected a workload (a mapping of keys to values)");
  WorkloadSpec spec;
  if (w["priority"]) spec.priority = static_cast<uint8_t>(r.integer(w["priority"], "priority", 0, 7));
  if (w["timeout"]) read_timeout(r, w["timeout"], spec);
  if (w["retry_cnt"]) spec.retry_cnt = static_cast<uint8_t>(r.integer(w["retry_cnt"], "retry_cnt", 0, 7));
  if (w["rnr_retry"]) spec.rnr_retry = static_cast<uint8_t>(r.integer(w["rnr_retry"], "rnr_retry", 0, 7));
  spec.name = w["name"] ? r.scalar(w["name"], "workload name") : "workload" + std::to_string(s.workloads.size());
  // The name becomes a file name (flows_NAME.csv), a --set path and a CSV column.
  if (!valid_name(spec.name))
    r.fail(w["name"], "workload name '" + spec.name + "' must be letters, digits, '_', '-' or '.'");
  if (w["start"]) spec.start = r.parsed<sim::Duration>(w["start"], "start (a time like 10us)", parse_duration);
  if (w["pattern"]) spec.pattern = r.choice(w["pattern"], "pattern", kPatterns);
  if (spec.pattern == WorkloadPattern::Flows) return read_flows(r, w, s, known_host, spec);
  return read_perftest(r, w, s, known_host, spec);
}

}  // namespace rnicsim::scenario
