#include "scenario/params.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "scenario/expect.hpp"
#include "scenario/nic_keys.hpp"

namespace rnicsim::scenario {
namespace {

// The scenario's own keys (the NIC's come from their key tables).
const ParamInfo kScenarioKeys[] = {
    {"name", "the file name", "text", "", "the scenario's name in reports"},
    {"seed", "1", "count", "", "seed of every random stream (loss, faults, payload bytes); --seed overrides it"},
    {"link_layer", "roce_v2", "roce_v2 | roce_v2_ipv6 | ib", "", "RoCEv2 over IPv4 or IPv6, or native InfiniBand"},
    {"ib_grh", "false", "true | false", "", "ib: every packet carries a GRH"},
    {"payload", "full", "full | size_only", "",
     "size_only: payload bytes are not materialised (captures hold headers; data not checked)"},
    {"duration", "until the workloads end", "time (10ms)", "", "stop the run at this simulated time"},
    {"hosts[].name", "", "text", "", "a host (simulated memory and one RNIC)"},
    {"hosts[].ip", "10.0.0.N", "IPv4 / IPv6 text", "", "the host's address (ib: its GID)"},
    {"hosts[].lid", "N", "count", "1..49151", "ib: the port's LID"},
    {"links[].between", "", "[node, node]", "", "a full-duplex link"},
    {"links[].rate", "100Gbps", "bits/s (100Gbps)", "", "data rate after line coding"},
    {"links[].delay", "1us", "time", "", "propagation delay"},
    {"links[].loss", "0", "probability", "0..1", "Bernoulli loss, each direction"},
    {"links[].gilbert_elliott", "off", "{p_good_bad, p_bad_good, loss_good, loss_bad}", "", "burst loss"},
    {"links[].down", "", "[{from: time, to: time}]", "", "times the link is down"},
    {"switches / topology / switch / pfc / ib_credits / captures", "", "see docs/SCENARIOS.md", "", "the fabric"},
    {"host.poll_delay", "50ns", "time", "", "from a CQE landing to the host acting on it"},
    {"host.mem_poll_interval", "10ns", "time", "", "how often a host spinning on memory reads it"},
    {"host.blueflame", "true", "true | false", "", "a WQE posted alone goes with its doorbell"},
    {"workloads[]", "", "map", "", "perftest-like tests and flows: see scenarios/perftest.yaml"},
    {"workloads[].flows", "", "list | file | map", "",
     "pattern: flows: a list, a CSV or ns-3 flow file, or a generator"},
    {"workloads[].flows[].priority", "the workload's", "count", "0..7", "an inline or CSV flow's traffic priority"},
    {"workloads[].flows.format", "by content", "csv | ns3", "",
     "ns3: the ns-3 RDMA simulators' flow file (N, then src dst priority dport size start_time)"},
    {"workloads[].flows.generate", "", "all_to_all | incast | permutation | poisson", "", "a flow generator"},
    {"workloads[].flows.hosts", "all", "[host] | all", "", "all_to_all, permutation, poisson: the hosts taking part"},
    {"workloads[].flows.size", "", "bytes (64KiB)", "", "all_to_all, incast, permutation: every flow's size"},
    {"workloads[].flows.load", "", "fraction", "0..1", "poisson: offered load per host, of its link rate"},
    {"workloads[].flows.cdf", "", "file", "", "poisson: flow sizes, lines 'size cumulative_probability' (to 100 or 1)"},
    {"workloads[].flows.count / duration", "", "count / time", "", "poisson: flows to generate, or arrivals until"},
    {"faults[].link", "", "[host, host]", "", "both directions of a link"},
    {"faults[].host / direction", "both", "tx | rx | both", "", "what a host sends, receives, or both"},
    {"faults[].action", "", "drop | corrupt | delay", "", "what a rule does to the packets it matches"},
    {"faults[].opcode / psn / qpn", "any", "IBTA name / number", "", "which packets a rule matches"},
    {"faults[].nth / count", "1 / 1", "count", "", "the nth matching packet and count - 1 after it"},
    {"faults[].delay", "", "time", "", "action: delay: added to the propagation delay"},
    {"expect[]", "", "\"METRIC OP VALUE\"", "", "conditions on measured values; metrics below"},
    {"sweep.PATH", "", "[values]", "", "run once per value (a grid for several paths)"},
};

void print_rows(std::ostream& out, const std::vector<ParamInfo>& rows) {
  size_t w0 = 0, w1 = 0, w2 = 0;
  for (const ParamInfo& p : rows) {
    w0 = std::max(w0, p.path.size());
    w1 = std::max(w1, p.default_value.size());
    w2 = std::max(w2, p.unit.size());
  }
  for (const ParamInfo& p : rows) {
    out << p.path << std::string(w0 - p.path.size() + 2, ' ') << p.default_value
        << std::string(w1 - p.default_value.size() + 2, ' ') << p.unit << std::string(w2 - p.unit.size() + 2, ' ')
        << p.description;
    if (!p.range.empty()) out << " [" << p.range << "]";
    out << '\n';
  }
}

}  // namespace

void print_params(std::ostream& out) {
  out << "# scenario keys: key, default, unit, meaning\n";
  print_rows(out, std::vector<ParamInfo>(std::begin(kScenarioKeys), std::end(kScenarioKeys)));
  out << "\n# NIC parameters (nic: or a preset): key, default, unit, meaning [range]\n";
  print_rows(out, nic_parameters());
  out << "\n# expect: metrics\n";
  for (const std::string& m : expect_metrics()) out << m << '\n';
}

}  // namespace rnicsim::scenario
