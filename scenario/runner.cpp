#include "scenario/runner.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "fabric/pcap_tap.hpp"
#include "scenario/workload.hpp"
#include "scenario/world.hpp"

namespace rnicsim::scenario {
namespace {

const char* op_name(WorkloadOp op) {
  switch (op) {
    case WorkloadOp::Write: return "write";
    case WorkloadOp::WriteImm: return "write_imm";
    case WorkloadOp::Send: return "send";
  }
  return "?";
}

}  // namespace

Summary run(const Scenario& s, const RunOptions& opts) {
  const auto wall_start = std::chrono::steady_clock::now();
  const uint64_t seed = opts.seed.value_or(s.seed);
  std::ostream& log_sink = std::cerr;
  World world(s, seed, log_sink);

  std::unique_ptr<fabric::PcapTap> tap;
  if (!opts.pcap_path.empty() && !world.hosts().empty() && world.hosts().front()->port) {
    tap = std::make_unique<fabric::PcapTap>(opts.pcap_path, fabric::CaptureLinkType::Ethernet);
    world.hosts().front()->port->add_tap(tap.get());
  }

  std::vector<std::unique_ptr<Workload>> workloads;
  for (const WorkloadSpec& w : s.workloads) workloads.push_back(std::make_unique<Workload>(world, w, s.path_mtu, seed));

  // Workloads with a start time begin then; the others one after another.
  std::vector<std::unique_ptr<sim::Event>> starts;
  size_t next_sequential = 0;
  std::function<void()> start_next_sequential = [&] {
    while (next_sequential < workloads.size()) {
      Workload& w = *workloads[next_sequential++];
      if (w.spec().start) continue;
      w.start(start_next_sequential);
      return;
    }
  };
  for (auto& w : workloads) {
    if (!w->spec().start) continue;
    Workload* raw = w.get();
    starts.push_back(std::make_unique<sim::Event>([raw] { raw->start({}); }, "workload.start"));
    world.sim().scheduler().schedule(*starts.back(), sim::Time::zero() + *w->spec().start);
  }
  start_next_sequential();

  const sim::Time limit = s.duration ? sim::Time::zero() + *s.duration : sim::Time::max();
  auto all_done = [&] {
    return std::all_of(workloads.begin(), workloads.end(), [](const auto& w) { return w->finished(); });
  };
  sim::Scheduler& sched = world.sim().scheduler();
  while (!all_done() && !sched.empty() && sched.next_time() <= limit) sched.step();

  Summary sum;
  sum.name = s.name;
  sum.seed = seed;
  sum.completed = all_done();
  for (const auto& w : workloads) {
    WorkloadSummary ws;
    ws.name = w->spec().name;
    ws.op = op_name(w->spec().op);
    ws.pattern = w->spec().pattern == WorkloadPattern::Bandwidth ? "bw" : "lat";
    ws.size = w->spec().size;
    ws.messages = w->messages();
    ws.bytes = w->bytes();
    ws.completed = w->finished() && !w->failed();
    ws.failure = w->failed() ? w->failure() : (w->finished() ? "" : "did not finish");
    if (!ws.completed) sum.completed = false;
    ws.data_verified = w->data_verified();
    ws.seconds = w->finished() ? w->elapsed().seconds() : 0;
    if (ws.seconds > 0) {
      ws.gbps = static_cast<double>(ws.bytes) * 8 / ws.seconds / 1e9;
      ws.mmsg_per_s = static_cast<double>(ws.messages) / ws.seconds / 1e6;
    }
    const sim::Histogram& h = w->latency_ps();
    ws.lat_p50_ps = h.percentile(0.5);
    ws.lat_p99_ps = h.percentile(0.99);
    ws.lat_min_ps = h.min();
    ws.lat_max_ps = h.max();
    ws.lat_mean_ps = h.mean();
    sum.messages += ws.messages;
    sum.bytes += ws.bytes;
    sum.workloads.push_back(ws);
  }
  for (const auto& h : world.hosts()) {
    if (h->port) {
      sum.packets += h->port->counters().tx_frames;
      sum.drops += h->port->counters().drops_loss + h->port->counters().drops_queue_full;
    }
    sum.data_packets += h->nic->requester().packets_sent();
    sum.retransmissions += h->nic->stats().retransmitted_packets;
    sum.rx_errors += h->nic->rx_pipeline().counters().malformed + h->nic->rx_pipeline().counters().bad_icrc;
  }
  sum.sim_seconds = world.sim().now().since_start().seconds();
  sum.events = sched.events_fired();
  sum.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  sum.events_per_sec = sum.wall_seconds > 0 ? static_cast<double>(sum.events) / sum.wall_seconds : 0;
  if (tap) tap->flush();

  if (!opts.out_dir.empty()) {
    std::filesystem::create_directories(opts.out_dir);
    std::ofstream js(std::filesystem::path(opts.out_dir) / "summary.json");
    write_summary_json(sum, js);
    std::ofstream st(std::filesystem::path(opts.out_dir) / "stats.json");
    sim::Stats& stats = world.sim().stats();
    for (const auto& h : world.hosts()) {
      const std::string p = h->name + ".";
      const auto& rx = h->nic->rx_pipeline().counters();
      const auto& rs = h->nic->responder().counters();
      stats.counter(p + "nic.tx_packets").add(h->nic->stats().tx_packets);
      stats.counter(p + "nic.tx_bytes").add(h->nic->stats().tx_bytes);
      stats.counter(p + "nic.rx_packets").add(rx.packets);
      stats.counter(p + "nic.rx_malformed").add(rx.malformed);
      stats.counter(p + "nic.rx_bad_icrc").add(rx.bad_icrc);
      stats.counter(p + "nic.rx_unknown_qp").add(rx.unknown_qp);
      stats.counter(p + "nic.retransmitted_packets").add(h->nic->stats().retransmitted_packets);
      stats.counter(p + "nic.responder.duplicates").add(rs.duplicates);
      stats.counter(p + "nic.responder.out_of_sequence").add(rs.out_of_sequence);
      stats.counter(p + "nic.responder.rnr_naks").add(rs.rnr_naks);
      stats.counter(p + "nic.responder.acks_sent").add(rs.acks_sent);
      stats.counter(p + "nic.completer.timeouts").add(h->nic->completer().timeouts());
      stats.counter(p + "nic.dma.reads").add(h->nic->dma().reads());
      stats.counter(p + "nic.dma.writes").add(h->nic->dma().writes());
      stats.counter(p + "nic.pcie.upstream_bytes").add(h->nic->pcie().upstream_bytes());
      stats.counter(p + "nic.pcie.downstream_bytes").add(h->nic->pcie().downstream_bytes());
      if (h->port) {
        stats.counter(p + "port0.tx_frames").add(h->port->counters().tx_frames);
        stats.counter(p + "port0.drops_loss").add(h->port->counters().drops_loss);
      }
    }
    for (const auto& w : workloads) {
      sim::Histogram& hist = stats.histogram("workload." + w->spec().name + ".latency_ps");
      hist = w->latency_ps();
    }
    stats.write_json(st);
  }
  return sum;
}

Summary run_text(std::string_view yaml_text, std::string_view file_name, const RunOptions& opts) {
  return run(parse_scenario(std::string(yaml_text), std::string(file_name)), opts);
}

void print_summary(const Summary& s, std::ostream& out) {
  char line[512];
  out << "scenario " << s.name << " (seed " << s.seed << ")\n";
  out << "---------------------------------------------------------------------------------------------------\n";
  std::snprintf(line, sizeof line, " %-14s %-9s %-3s %10s %10s %12s %10s %11s %11s %5s\n", "workload", "op", "pat",
                "#bytes", "#msgs", "BW[Gb/s]", "MsgRate[Mpps]", "lat_p50[us]", "lat_p99[us]", "data");
  out << line;
  for (const WorkloadSummary& w : s.workloads) {
    std::snprintf(line, sizeof line, " %-14s %-9s %-3s %10llu %10llu %12.2f %13.6f %11.3f %11.3f %5s\n",
                  w.name.c_str(), w.op.c_str(), w.pattern.c_str(), static_cast<unsigned long long>(w.size),
                  static_cast<unsigned long long>(w.messages), w.gbps, w.mmsg_per_s,
                  static_cast<double>(w.lat_p50_ps) / 1e6, static_cast<double>(w.lat_p99_ps) / 1e6,
                  w.data_verified ? "ok" : "BAD");
    out << line;
    if (!w.failure.empty()) out << "   error: " << w.failure << '\n';
  }
  out << "---------------------------------------------------------------------------------------------------\n";
  std::snprintf(line, sizeof line,
                "messages %llu  bytes %llu  packets %llu (data %llu)  retransmissions %llu  drops %llu  rx errors %llu\n",
                static_cast<unsigned long long>(s.messages), static_cast<unsigned long long>(s.bytes),
                static_cast<unsigned long long>(s.packets), static_cast<unsigned long long>(s.data_packets),
                static_cast<unsigned long long>(s.retransmissions), static_cast<unsigned long long>(s.drops),
                static_cast<unsigned long long>(s.rx_errors));
  out << line;
  std::snprintf(line, sizeof line, "simulated %.6f ms  wall %.3f s  events %llu  (%.2f M events/s)\n",
                s.sim_seconds * 1e3, s.wall_seconds, static_cast<unsigned long long>(s.events),
                s.events_per_sec / 1e6);
  out << line;
  out << (s.completed ? "result: completed\n" : "result: INCOMPLETE\n");
}

void write_summary_json(const Summary& s, std::ostream& out) {
  out << "{\n  \"scenario\": ";
  sim::write_json_string(out, s.name);
  out << ",\n  \"seed\": " << s.seed << ",\n  \"completed\": " << (s.completed ? "true" : "false")
      << ",\n  \"messages\": " << s.messages << ",\n  \"bytes\": " << s.bytes << ",\n  \"packets\": " << s.packets
      << ",\n  \"data_packets\": " << s.data_packets << ",\n  \"retransmissions\": " << s.retransmissions
      << ",\n  \"drops\": " << s.drops << ",\n  \"rx_errors\": " << s.rx_errors
      << ",\n  \"simulated_seconds\": " << s.sim_seconds << ",\n  \"events\": " << s.events
      << ",\n  \"workloads\": [";
  const char* sep = "\n";
  for (const WorkloadSummary& w : s.workloads) {
    out << sep << "    {\"name\": ";
    sim::write_json_string(out, w.name);
    out << ", \"op\": \"" << w.op << "\", \"pattern\": \"" << w.pattern << "\", \"size\": " << w.size
        << ", \"messages\": " << w.messages << ", \"bytes\": " << w.bytes << ", \"seconds\": " << w.seconds
        << ", \"gbps\": " << w.gbps << ", \"mmsg_per_s\": " << w.mmsg_per_s << ", \"latency_ps\": {\"min\": "
        << w.lat_min_ps << ", \"p50\": " << w.lat_p50_ps << ", \"p99\": " << w.lat_p99_ps << ", \"max\": "
        << w.lat_max_ps << "}, \"completed\": " << (w.completed ? "true" : "false")
        << ", \"data_verified\": " << (w.data_verified ? "true" : "false") << "}";
    sep = ",\n";
  }
  out << "\n  ]\n}\n";
}

}  // namespace rnicsim::scenario
