#include "scenario/outputs.hpp"

#include <algorithm>
#include <filesystem>

#include "scenario/expect.hpp"
#include "scenario/timeseries.hpp"
#include "scenario/unit_reports.hpp"
#include "scenario/workload.hpp"
#include "scenario/world.hpp"
#include "sim/tasks.hpp"

namespace rnicsim::scenario {
namespace {

// Per port and priority: PFC sent and received, paused time, and the headroom
// kept for the port's lossless priorities (stats.json).
void port_stats(sim::Stats& stats, const std::string& prefix, const PortReport& port) {
  const auto& c = port.counters;
  const fabric::PfcSendCounters* pfc = port.has_pfc ? &port.pfc : nullptr;
  if (pfc != nullptr) stats.counter(prefix + "pfc_headroom_bytes").add(port.headroom);
  stats.counter(prefix + "tx_frames").add(c.tx_frames);
  stats.counter(prefix + "drops_loss").add(c.drops_loss);
  if (c.drops_link_down > 0) stats.counter(prefix + "drops_link_down").add(c.drops_link_down);
  for (uint8_t p = 0; p < 8; ++p) {
    const std::string q = ".p" + std::to_string(p);
    if (c.pause_rx[p] + c.xon_rx[p] > 0) {
      stats.counter(prefix + "pfc_pause_rx" + q).add(c.pause_rx[p]);
      stats.counter(prefix + "pfc_xon_rx" + q).add(c.xon_rx[p]);
      stats.counter(prefix + "pfc_paused_ps" + q).add(static_cast<uint64_t>(c.paused_time[p].picoseconds()));
    }
    if (pfc != nullptr && pfc->xoff[p] > 0) {
      stats.counter(prefix + "pfc_xoff_tx" + q).add(pfc->xoff[p]);
      stats.counter(prefix + "pfc_refresh_tx" + q).add(pfc->refresh[p]);
      stats.counter(prefix + "pfc_xon_tx" + q).add(pfc->xon[p]);
    }
  }
}

// A host NIC's counters under "HOST.nic." (stats.json).
void nic_stats(sim::Stats& stats, const std::string& name, const HostReport::Counters& h) {
  const std::string p = name + ".nic.";
  const auto& rx = h.rx;
  const auto& rs = h.responder;
  const std::pair<const char*, uint64_t> counters[] = {
      {"tx_packets", h.nic.tx_packets},
      {"tx_bytes", h.nic.tx_bytes},
      {"rx_packets", rx.packets},
      {"rx_malformed", rx.malformed},
      {"rx_bad_icrc", rx.bad_icrc},
      {"rx_unknown_qp", rx.unknown_qp},
      {"rx_wrong_transport", rx.wrong_transport},
      {"rx_bad_pkey", rx.bad_pkey},
      {"rx_wrong_source", rx.wrong_source},
      {"cq_overruns", h.cq_overruns},
      {"rx_ecn_ce", rx.ecn_ce},
      {"rx_buffer_peak_bytes", h.rx_buffer_peak},
      {"rx_cnps", rx.cnps},
      {"retransmitted_packets", h.nic.retransmitted_packets},
      {"cnps_sent", h.nic.cnps_sent},
      {"responder.duplicates", rs.duplicates},
      {"responder.out_of_sequence", rs.out_of_sequence},
      {"responder.sequence_naks", rs.sequence_naks},
      {"responder.repeated_naks", rs.repeated_naks},
      {"responder.rnr_naks", rs.rnr_naks},
      {"responder.bad_opcode_sequence", rs.bad_opcode_sequence},
      {"responder.acks_sent", rs.acks_sent},
      {"completer.naks", h.completer_naks},
      {"completer.timeouts", h.completer_timeouts},
      {"dma.reads", h.dma_reads},
      {"dma.writes", h.dma_writes},
      {"pcie.upstream_bytes", h.pcie_upstream_bytes},
      {"pcie.downstream_bytes", h.pcie_downstream_bytes},
  };
  for (const auto& [name, value] : counters) stats.counter(p + name).add(value);
}

// The run's stats registry with every NIC, port and switch counter and each
// workload's latency histogram added.
sim::Stats fill_stats(const UnitReports& r, const std::vector<std::unique_ptr<Workload>>& workloads) {
  sim::Stats stats;
  for (size_t i = 0; i < r.hosts.size(); ++i) {
    const HostReport::Counters& h = r.hosts[i].counters;
    nic_stats(stats, r.host_names[i], h);
    if (h.has_port) port_stats(stats, r.host_names[i] + ".port0.", h.port);
  }
  for (size_t i = 0; i < r.switches.size(); ++i) {
    const SwitchReport& sw = r.switches[i];
    const std::string p = r.switch_names[i] + ".";
    stats.counter(p + "forwarded").add(sw.counters.forwarded);
    stats.counter(p + "ecn_marked").add(sw.counters.ecn_marked);
    stats.counter(p + "buffer_peak_bytes").add(sw.buffer_peak);
    for (size_t d = 0; d < fabric::kDropCauseNames.size(); ++d)
      stats.counter(p + "drops." + std::string(fabric::kDropCauseNames[d])).add(sw.counters.drops[d]);
    for (size_t port = 0; port < sw.ports.size(); ++port)
      port_stats(stats, p + "port" + std::to_string(port) + ".", sw.ports[port]);
  }
  for (const auto& w : workloads) stats.histogram("workload." + w->spec().name + ".latency_ps") = w->latency_ps();
  return stats;
}

// Every QP of every NIC: its counters and congestion-control state.
void write_qp_csv(const UnitReports& r, const std::filesystem::path& file, bool exact_twin) {
  sim::CsvWriter out(file, exact_twin);
  for (const char* c : {"host", "qpn", "type", "state", "tx_packets", "rx_packets", "retransmitted_packets",
                        "ecn_ce_received", "cnps_received", "rate_limited", "rate_gbps", "rate_cuts"})
    out.text(c);
  out.end_row();
  for (size_t i = 0; i < r.hosts.size(); ++i)
    for (const QpReport& qp : r.hosts[i].qps) {
      out.text(r.host_names[i]).number(qp.qpn.value()).text(nic::to_string(qp.type)).text(nic::to_string(qp.state));
      out.number(qp.tx_packets).number(qp.rx_packets).number(qp.retransmitted_packets);
      out.number(qp.ecn_ce_received).number(qp.cnps_received).number(qp.cc.limited ? 1 : 0);
      out.number(static_cast<double>(qp.cc.rate) / 1e9).number(qp.cc.rate_cuts);
      out.end_row();
    }
}

sim::Json fabric_json(const FabricSummary& f) {
  sim::Json drops = sim::Json::object();
  for (size_t d = 0; d < f.switch_drops.size(); ++d) drops[std::string(fabric::kDropCauseNames[d])] = f.switch_drops[d];
  const sim::Json pfc = {{"frames_sent", f.pfc_frames_sent}, {"watchdog_trips", f.watchdog_trips},
                         {"xoff_sent", f.xoff_sent},         {"refresh_sent", f.refresh_sent},
                         {"xon_sent", f.xon_sent},           {"pause_received", f.pause_received},
                         {"xon_received", f.xon_received},   {"paused_us", f.paused_us}};
  return {{"switches", f.switches},
          {"forwarded", f.forwarded},
          {"peak_buffer_bytes", f.peak_buffer_bytes},
          {"ecn_marked", f.ecn_marked},
          {"ecn_ce_received", f.ecn_ce_received},
          {"cnps_received", f.cnps_received},
          {"cnps_sent", f.cnps_sent},
          {"drops", drops},
          {"credit_stalls", f.credit_stalls},
          {"credit_stall_us", f.credit_stall_us},
          {"pfc", pfc}};
}

// {"SUCCESS": n, ...}: the statuses seen, by ibv_wc_status name.
sim::Json completions_json(const std::array<uint64_t, kCompletionStatuses>& c) {
  sim::Json j = sim::Json::object();
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i] != 0) j[completion_status_name(i)] = c[i];
  return j;
}

sim::Json perftest_json(const WorkloadSummary& w) {
  sim::Json rows = sim::Json::array();
  for (const PerftestRow& r : w.rows) {
    sim::Json row = {{"bytes", r.bytes}, {"iterations", r.iterations}};
    if (w.pattern == "bw") {
      row.update({{"bw_peak_gbps", r.bw_peak_gbps}, {"bw_avg_gbps", r.bw_avg_gbps}, {"msg_rate_mpps", r.msg_rate_mpps}});
    } else {
      row.update({{"t_min_us", r.t_min_us}, {"t_max_us", r.t_max_us}, {"t_typical_us", r.t_typical_us},
                  {"t_avg_us", r.t_avg_us}, {"t_stdev_us", r.t_stdev_us}, {"t_p99_us", r.t_p99_us},
                  {"t_p999_us", r.t_p999_us}});
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

sim::Json workload_json(const WorkloadSummary& w) {
  sim::Json j = {{"name", w.name},
                 {"op", w.op},
                 {"pattern", w.pattern},
                 {"qps", w.qps},
                 {"size", w.size},
                 {"messages", w.messages},
                 {"bytes", w.bytes},
                 {"seconds", w.seconds},
                 {"gbps", w.gbps},
                 {"mmsg_per_s", w.mmsg_per_s},
                 {"post_cpu_busy", w.post_cpu_busy},
                 {"latency_ps", {{"min", w.lat_min_ps}, {"p50", w.lat_p50_ps}, {"p99", w.lat_p99_ps},
                                 {"max", w.lat_max_ps}, {"mean", w.lat_mean_ps}}},
                 {"completed", w.completed},
                 {"failure", w.failure},
                 {"data_verified", w.data_verified},
                 {"data_checked", w.data_checked}};
  for (const auto& [key, count] : kWorkloadCounts) j[key] = w.counts.*count;
  j["completion_order_ok"] = w.completion_order_ok;
  j["send_completions"] = completions_json(w.send_completions);
  if (!w.rows.empty()) j["perftest"] = perftest_json(w);
  if (!w.flows.empty()) {
    uint64_t done = 0;
    double slow = 0;
    for (const FlowResult& f : w.flows)
      if (f.done) ++done, slow += f.slowdown;
    j.update({{"flows", w.flows.size()},
              {"flows_completed", done},
              {"mean_slowdown", done ? slow / static_cast<double>(done) : 0.0}});
  }
  return j;
}

}  // namespace

sim::Json summary_json(const Summary& s) {
  sim::Json j = sim::output_document("rnicsim.summary");
  j.update({{"scenario", s.name},
            {"seed", s.seed},
            {"completed", s.completed},
            {"size_only", s.size_only},
            {"messages", s.messages},
            {"bytes", s.bytes},
            {"packets", s.packets},
            {"data_packets", s.data_packets},
            {"retransmissions", s.retransmissions},
            {"drops", s.drops},
            {"rx_errors", s.rx_errors},
            {"simulated_seconds", s.sim_seconds},
            {"events", s.events},
            {"payload_writes_dropped", s.payload_writes_dropped},
            {"fabric", fabric_json(s.fabric)},
            {"completions", completions_json(s.completions)},
            {"expectations_met", s.expectations_met}});
  sim::Json expectations = sim::Json::array();
  for (const ExpectResult& e : s.expectations)
    expectations.push_back({{"expect", e.expectation.text}, {"measured", e.measured}, {"ok", e.ok}});
  j["expectations"] = std::move(expectations);
  sim::Json workloads = sim::Json::array();
  for (const WorkloadSummary& w : s.workloads) workloads.push_back(workload_json(w));
  j["workloads"] = std::move(workloads);
  return j;
}

void write_flows_csv(const WorkloadSummary& w, sim::CsvWriter& out) {
  for (const char* c : {"flow", "from", "to", "op", "size", "start_us", "end_us", "fct_us", "ideal_us", "slowdown"})
    out.text(c);
  out.end_row();
  for (size_t i = 0; i < w.flows.size(); ++i) {
    const FlowResult& f = w.flows[i];
    out.number(i).text(f.spec.from).text(f.spec.to).text(to_string(f.spec.op)).number(f.spec.size);
    if (f.done) {
      out.number(f.start.since_start().microseconds()).number(f.end.since_start().microseconds());
      out.number(f.fct_us).number(f.ideal_us).number(f.slowdown);
    } else {
      out.empty().empty().empty().number(f.ideal_us).empty();
    }
    out.end_row();
  }
}

namespace {

constexpr double kPerftestMegabyte = 1 << 20;  // perftest's MB/sec

sim::Json perftest_test_info(const WorkloadSummary& w) {
  const bool bw = w.pattern == "bw", reads = w.op == "read" || w.op == "fetch_add" || w.op == "cmp_swap";
  std::string test = perftest_title(w);
  std::replace(test.begin(), test.end(), ' ', '_');
  sim::Json j = {{"test", test},
                 {"Dual_port", "OFF"},
                 {"Device", w.device},
                 {"Number_of_qps", w.qps},
                 {"Transport_type", "IB"},
                 {"Connection_type", w.connection},
                 {"Using_SRQ", "OFF"},
                 // perftest asks for relaxed ordering but where the program polls the data (ib_write_lat).
                 {"PCIe_relax_order", !bw && w.op == "write" ? "OFF" : "ON"},
                 {"ibv_wr_API", "OFF"},
                 {"TX_depth", w.tx_depth}};
  if (w.post_list > 1) j["Post_List"] = w.post_list;
  if (bw) j["CQ_Moderation"] = w.cq_mod;
  j["Mtu"] = w.mtu;
  j["Link_type"] = w.link_type;
  // The RoCEv2 GID of the host's address: index 3 of the table the shim shows, perftest's choice.
  if (w.link_type == "Ethernet") j["GID_index"] = 3;
  if (reads) j["Outstand_reads"] = w.outs;
  else j["Max_inline_data"] = w.inline_size;
  j["rdma_cm_QPs"] = w.rdma_cm ? "ON" : "OFF";
  j["Data_ex_method"] = w.rdma_cm ? "rdma_cm" : "Ethernet";
  return j;
}

sim::Json perftest_results(const WorkloadSummary& w) {
  const PerftestRow& r = w.rows.back();
  sim::Json j = {{"MsgSize", r.bytes}, {"n_iterations", r.iterations}};
  const auto megabytes = [](double gbps) { return gbps * 1e9 / 8 / kPerftestMegabyte; };
  if (w.pattern == "bw")
    j.update({{"BW_peak", megabytes(r.bw_peak_gbps)}, {"BW_average", megabytes(r.bw_avg_gbps)},
              {"MsgRate", r.msg_rate_mpps}});
  else
    j.update({{"t_min", r.t_min_us}, {"t_max", r.t_max_us}, {"t_typical", r.t_typical_us}, {"t_avg", r.t_avg_us},
              {"t_stdev", r.t_stdev_us}, {"percentile_99", r.t_p99_us}, {"percentile_99.9", r.t_p999_us}});
  return j;
}

}  // namespace

std::string perftest_title(const WorkloadSummary& w) {
  std::string t;
  if (w.op == "send" || w.op == "send_imm") t = "Send ";
  else if (w.op == "write") t = "RDMA_Write ";
  else if (w.op == "write_imm") t = "RDMA_Write_imm ";
  else if (w.op == "read") t = "RDMA_Read ";
  else if (w.op == "fetch_add") t = "Atomic FETCH_AND_ADD ";
  else if (w.op == "cmp_swap") t = "Atomic CMP_AND_SWAP ";
  if (w.pattern == "bw") t += w.post_list > 1 ? "Post List BW " : "BW ";
  else t += "Latency ";
  return t + "Test";
}

sim::Json perftest_out_json(const WorkloadSummary& w) {
  if (w.rows.empty()) return nullptr;
  return {{"test_info", perftest_test_info(w)}, {"results", perftest_results(w)}};
}

void write_perftest_json(const Summary& sum, const std::filesystem::path& dir, bool exact_twins) {
  std::filesystem::create_directories(dir);
  for (const WorkloadSummary& w : sum.workloads)
    if (const sim::Json j = perftest_out_json(w); !j.is_null())
      sim::write_json_file(dir / (w.name + ".json"), j, exact_twins);
}

void write_outputs(const UnitReports& units, const std::vector<std::unique_ptr<Workload>>& workloads, const Sampler& sampler,
                   const Summary& sum, const std::filesystem::path& dir, bool exact_twins, unsigned threads) {
  std::filesystem::create_directories(dir);
  // Each piece reads what no other changes (the stats registry is filled by
  // its own piece only), so the files are the same on any thread count.
  std::vector<std::function<void()>> tasks = sampler.writers(dir, exact_twins);
  tasks.emplace_back([&] {
    sim::Json stats = sim::output_document("rnicsim.stats");
    stats.update(fill_stats(units, workloads).to_json());
    sim::write_json_file(dir / "stats.json", stats, exact_twins);
  });
  tasks.emplace_back([&] { write_qp_csv(units, dir / "qps.csv", exact_twins); });
  tasks.emplace_back([&] { sim::write_json_file(dir / "summary.json", summary_json(sum), exact_twins); });
  for (const WorkloadSummary& w : sum.workloads) {
    if (w.flows.empty()) continue;
    tasks.emplace_back([&] {
      sim::CsvWriter csv(dir / ("flows_" + w.name + ".csv"), exact_twins);
      write_flows_csv(w, csv);
    });
  }
  sim::run_tasks(tasks, threads);
}

}  // namespace rnicsim::scenario
