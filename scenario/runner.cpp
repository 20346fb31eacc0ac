#include "scenario/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "fabric/pcap_tap.hpp"
#include "scenario/expect.hpp"
#include "scenario/outputs.hpp"
#include "scenario/partition_map.hpp"
#include "scenario/progress.hpp"
#include "scenario/scenario.hpp"
#include "scenario/timeseries.hpp"
#include "scenario/unit_reports.hpp"
#include "scenario/workload.hpp"
#include "scenario/workloads.hpp"
#include "scenario/world.hpp"
#include "sim/byte_record.hpp"
#include "sim/output.hpp"
#include "sim/partitions.hpp"
#include "sim/tasks.hpp"

namespace rnicsim::scenario {
namespace {

const char* pattern_name(WorkloadPattern p) {
  switch (p) {
    case WorkloadPattern::Bandwidth: return "bw";
    case WorkloadPattern::Latency: return "lat";
    case WorkloadPattern::Flows: return "flows";
  }
  return "?";
}

}  // namespace

namespace {

// Why a workload has no result: the run ended first, after it delivered so much.
std::string unfinished(const Workload& w, sim::Time run_end) {
  if (!w.started()) return "did not finish: not started";
  char line[160];
  std::snprintf(line, sizeof line, "did not finish: %llu bytes delivered in %.3f us",
                static_cast<unsigned long long>(w.delivered_bytes()), w.ran_for(run_end).microseconds());
  return line;
}

// The verbs device of host `name`, as its program would see it in emulation.
std::string device_of(const Scenario& s, const std::string& name) {
  for (const HostSpec& h : s.hosts)
    if (h.name == name && !h.device.empty()) return h.device;
  return std::string(kDefaultDeviceName);
}

using Workloads = std::vector<std::unique_ptr<Workload>>;

// What this process runs of the world: every partition, or across ranks
// (sim::Partitions::set_ranks) those whose number modulo the rank count is
// its rank; rank 0 gathers the rest once the run is over.
struct Share {
  sim::RankLink* ranks = nullptr;  // none, or more than one
  bool holds(uint32_t partition) const {
    return ranks == nullptr || sim::Partitions::rank_of(partition, ranks->ranks()) == ranks->rank();
  }
  bool first() const { return ranks == nullptr || ranks->rank() == 0; }
};

// The first host's port (--pcap) and the scenario's captures, each written
// by the rank that runs its port.
std::vector<std::unique_ptr<fabric::PcapTap>> open_taps(World& world, const Scenario& s, const RunOptions& opts,
                                                        const Share& share) {
  const fabric::CaptureLinkType capture_type = fabric::capture_link_type(world.link_kind(), s.ib_capture);
  std::vector<std::unique_ptr<fabric::PcapTap>> taps;
  if (!opts.pcap_path.empty() && !world.hosts().empty() && world.hosts().front()->port &&
      share.holds(world.partition_of(*world.hosts().front()))) {
    taps.push_back(std::make_unique<fabric::PcapTap>(opts.pcap_path, capture_type));
    world.hosts().front()->port->add_tap(taps.back().get());
  }
  for (const CaptureSpec& c : s.captures) {
    if (!share.holds(world.node_partition(c.node))) continue;
    std::filesystem::path file(c.file);
    if (file.is_relative() && !opts.out_dir.empty()) {
      std::filesystem::create_directories(opts.out_dir);
      file = std::filesystem::path(opts.out_dir) / file;
    }
    taps.push_back(std::make_unique<fabric::PcapTap>(file.string(), capture_type, c.snaplen));
    taps.back()->set_priority_filter(c.priorities);
    fabric::Port& port = world.capture_port(c.node, c.port);
    port.add_tap(taps.back().get());
  }
  return taps;
}

bool all_done(const Workloads& workloads) {
  return std::all_of(workloads.begin(), workloads.end(), [](const auto& w) { return w->finished(); });
}

// Workloads with a start time begin then (the outside starts them); the
// others one after another, each at the end of the instant the one before it
// finished in. The run goes in stages (sim::Partitions::Stages): while a
// workload without a start time runs and another follows it, until it
// finishes; then until every workload has finished, and the run ends there.
// A partition's share of a stage is the stage's workloads' parts on it.
class Launcher {
public:
  using PartitionOf = std::function<size_t(const Host&)>;
  Launcher(World& world, Workloads& workloads, size_t partitions, PartitionOf partition_of)
      : workloads_(workloads), partition_of_(std::move(partition_of)), parts_on_(partitions) {
    for (auto& w : workloads_)
      for (size_t i = 0; i < w->parts(); ++i) parts_on_.at(partition_of_(*w->part_hosts(i).front())).push_back({w.get(), i});
    for (auto& w : workloads_) {
      if (!w->spec().start) continue;
      Workload* raw = w.get();
      starts_.push_back(std::make_unique<sim::Event>([this, raw] { start(*raw); }, "workload.start"));
      world.outside().schedule(*starts_.back(), sim::Time::zero() + *w->spec().start);
    }
    start_next_sequential();
  }
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // Whether some workload has parts in more than one partition (they may
  // send each other word: World::tell).
  bool spans_partitions() const {
    for (const auto& w : workloads_)
      for (size_t i = 1; i < w->parts(); ++i)
        if (partition_of_(*w->part_hosts(i).front()) != partition_of_(*w->part_hosts(0).front())) return true;
    return false;
  }
  // Whether partition `p`'s share of the stage is done; reads its parts only.
  bool share_done(size_t p) const {
    for (const auto& [w, part] : parts_on_[p])
      if ((stage_ == nullptr || w == stage_) && !w->part_done(part)) return false;
    return true;
  }
  // The stage is over (every event of its last instant has fired, no event
  // runs): the workloads take in what their parts did, then the next starts,
  // or the run ends.
  bool end_stage() {
    for (auto& w : workloads_) w->settle();
    return start_next_sequential();
  }

private:
  size_t next_sequential() const {
    size_t i = next_sequential_;
    while (i < workloads_.size() && workloads_[i]->spec().start) ++i;
    return i;
  }
  bool start_next_sequential() {
    next_sequential_ = next_sequential();
    if (next_sequential_ == workloads_.size()) return false;
    Workload& w = *workloads_[next_sequential_++];
    stage_ = next_sequential() < workloads_.size() ? &w : nullptr;  // the last one's stage is every workload's
    start(w);
    return true;
  }
  void start(Workload& w) {
    w.start([this, &w](size_t part) { on_part_done(w, part); });
  }
  // In the event that finished a part: if that ends its partition's share of
  // the stage, the partition stops there (the engine then waits for the others).
  void on_part_done(const Workload& w, size_t part) {
    const Host& home = *w.part_hosts(part).front();
    if (share_done(partition_of_(home))) home.nic->scheduler().stop();
  }
  Workloads& workloads_;
  PartitionOf partition_of_;
  std::vector<std::vector<std::pair<const Workload*, size_t>>> parts_on_;  // per partition
  std::vector<std::unique_ptr<sim::Event>> starts_;
  size_t next_sequential_ = 0;
  const Workload* stage_ = nullptr;  // the stage's workload; none: every workload
};

// The longest simulated stretch between progress reports: an uncut world's
// windows would end only where the outside acts.
constexpr sim::Duration kProgressWindow = sim::Duration::us(10);

// The engine's window: no longer than a cut link's delay (what crosses it
// arrives in a later window), nor than the control delay when a workload's
// parts may send each other word; at most kProgressWindow.
sim::Duration window(World& world, const Launcher& launcher) {
  sim::Duration w = std::min(kProgressWindow, world.cut_delay());
  if (launcher.spans_partitions()) w = std::min(w, world.control_delay());
  return w;
}

// How the engine's run went: whether the scenario's duration cut it short
// (else it ended at its last event), its window and the windows it ran.
struct EngineRun {
  bool cut = false;
  sim::Duration window;
  uint64_t windows = 0;
  uint64_t busiest_events = 0;  // each window's busiest partition's, summed
};

// Runs the world on the engine until its stages end (every workload done),
// nothing is left or the scenario's duration is reached.
EngineRun run_events(World& world, Launcher& launcher, sim::Time limit, unsigned threads, Progress& progress,
                     const Share& share) {
  const sim::Duration w = window(world, launcher);
  sim::Partitions engine(w, threads);
  if (share.ranks != nullptr) engine.set_ranks(*share.ranks, world.partitions());
  for (uint32_t p = 0; p < world.partitions(); ++p)
    if (share.holds(p))
      engine.add({&world.sim(p).scheduler(), [&world, p] { world.land(p); }, [&world, p] { world.clear(p); }},
                 world.mail(p));
  engine.set_outside(world.outside());
  engine.set_stages({[&](size_t p) { return launcher.share_done(p); }, [&](sim::Time) { return launcher.end_stage(); }});
  engine.set_between([&] { progress.update(world.now(), world.events_fired()); });
  engine.run_until(limit);
  progress.finish();
  return {!engine.ended() && world.pending_anywhere(), w, engine.windows(), engine.busiest_events()};
}

// What predicts a run across ranks from a run in one process (docs/PERFORMANCE.md,
// running on a cluster): the windows, each partition's units and events, and
// what each pair of partitions sent each other, in how many windows.
void write_engine_report(const std::string& path, World& world, const EngineRun& run, unsigned threads) {
  sim::Json j = sim::output_document("engine");
  j["partitions"] = world.partitions();
  j["threads"] = threads;
  j["window_ps"] = run.window.picoseconds();
  j["windows"] = run.windows;
  j["busiest_events"] = run.busiest_events;
  j["simulated_ps"] = world.now().picoseconds();
  std::vector<uint64_t> hosts(world.partitions()), switches(world.partitions());
  for (const auto& h : world.hosts()) ++hosts[world.partition_of(*h)];
  for (size_t i = 0; i < world.switches().size(); ++i) ++switches[world.switch_partition(i)];
  sim::Json parts = sim::Json::array(), crossings = sim::Json::array();
  for (uint32_t p = 0; p < world.partitions(); ++p) {
    parts.push_back({{"hosts", hosts[p]}, {"switches", switches[p]}, {"events", world.sim(p).scheduler().events_fired()}});
    for (uint32_t q = 0; q < world.partitions(); ++q)
      if (const World::Crossed& c = world.crossed(p, q); c.windows > 0)
        crossings.push_back({{"from", p}, {"to", q}, {"windows", c.windows}, {"bytes", c.bytes}});
  }
  j["partition"] = std::move(parts);
  j["crossings"] = std::move(crossings);
  sim::write_json_file(path, j, false);
}

// The events this rank fired: its partitions', and the outside's once (on rank 0).
uint64_t events_here(World& world, const Share& share) {
  const uint64_t all = world.events_fired();
  return share.first() ? all : all - world.outside().events_fired();
}

// Across ranks, once the run is over: every rank's units, workloads' parts
// and time series reach rank 0, which then holds what one process would;
// returns the events fired on every rank (on rank 0).
uint64_t gather(World& world, UnitReports& units, Workloads& workloads, Sampler* sampler, const Share& share) {
  sim::ByteWriter out;
  out.put(events_here(world, share));
  std::vector<size_t> hosts, switches;
  for (size_t i = 0; i < world.hosts().size(); ++i)
    if (share.holds(world.partition_of(*world.hosts()[i]))) hosts.push_back(i);
  for (size_t i = 0; i < world.switches().size(); ++i)
    if (share.holds(world.switch_partition(i))) switches.push_back(i);
  out.put_bytes(write_reports(units, hosts, switches));
  for (const auto& w : workloads) {
    std::vector<size_t> parts;
    for (size_t i = 0; i < w->parts(); ++i)
      if (share.holds(world.partition_of(*w->part_hosts(i).front()))) parts.push_back(i);
    w->write_parts(parts, out);
  }
  if (sampler != nullptr) sampler->write(out);
  std::vector<std::span<const std::byte>> to(static_cast<size_t>(share.ranks->ranks()));
  to[0] = out.bytes();
  const auto got = share.ranks->exchange(to);
  if (!share.first()) return 0;
  uint64_t events = events_here(world, share);
  for (size_t r = 1; r < got.size(); ++r) {
    sim::ByteReader in(got[r]);
    events += in.take<uint64_t>();
    read_reports(in.take_bytes(), units);
    for (auto& w : workloads) w->read_parts(in);
    if (sampler != nullptr) sampler->merge(in);
  }
  return events;
}

// What the workload was asked to do (its spec, as perftest would report it).
WorkloadSummary describe_workload(const Scenario& s, packet::LinkKind link, const WorkloadSpec& spec) {
  WorkloadSummary ws;
  ws.name = spec.name;
  ws.op = spec.pattern == WorkloadPattern::Flows ? "mixed" : to_string(spec.op);
  ws.pattern = pattern_name(spec.pattern);
  ws.size = spec.size;
  ws.from = spec.from;
  ws.to = spec.to;
  ws.link_type = packet::info(link).link_name;
  ws.nic_preset = s.nic_preset;
  ws.qps = spec.qps;
  ws.tx_depth = spec.tx_depth;
  ws.rx_depth = needs_recv(spec.op) ? spec.rx_depth : 0;
  ws.cq_mod = spec.cq_mod;
  ws.post_list = spec.post_list;
  ws.inline_size = spec.inline_size;
  ws.outs = spec.outs;
  ws.rdma_cm = spec.rdma_cm;
  ws.connection = std::string(nic::to_string(spec.connection));
  ws.device = device_of(s, spec.from);
  ws.mtu = s.path_mtu;
  return ws;
}

// What it did: counts, checks, rates and latencies.
WorkloadSummary summarise_workload(const Scenario& s, packet::LinkKind link, const Workload& w, sim::Time run_end) {
  WorkloadSummary ws = describe_workload(s, link, w.spec());
  ws.rows = w.rows();
  ws.flows = w.flows();
  ws.messages = w.messages();
  ws.bytes = w.bytes();
  ws.completed = w.finished() && !w.failed();
  ws.failure = w.failed() ? w.failure() : (w.finished() ? "" : unfinished(w, run_end));
  ws.data_verified = w.data_verified();
  ws.data_checked = w.data_checked();
  ws.counts = w.counts();
  ws.send_completions = w.send_completions();
  ws.completion_order_ok = w.completion_order_ok();
  ws.seconds = w.finished() ? w.elapsed().seconds() : 0;
  if (!w.finished()) {  // cut off (by duration:): what it delivered in the time it ran
    ws.bytes = w.delivered_bytes();
    ws.seconds = w.ran_for(run_end).seconds();
  }
  if (ws.seconds > 0) {
    ws.gbps = static_cast<double>(ws.bytes) * 8 / ws.seconds / 1e9;
    ws.mmsg_per_s = static_cast<double>(ws.messages) / ws.seconds / 1e6;
    ws.post_cpu_busy = w.posting_busy().seconds() / ws.seconds;
  }
  const sim::Histogram& h = w.latency_ps();
  ws.lat_p50_ps = h.percentile(0.5);
  ws.lat_p99_ps = h.percentile(0.99);
  ws.lat_min_ps = h.min();
  ws.lat_max_ps = h.max();
  ws.lat_mean_ps = h.mean();
  return ws;
}

Summary summarise(const Scenario& s, World& world, const UnitReports& units, const Workloads& workloads, sim::Time run_end,
                  sim::Time now, uint64_t events, uint64_t seed, std::chrono::steady_clock::time_point wall_start) {
  Summary sum;
  sum.name = s.name;
  sum.seed = seed;
  sum.size_only = s.size_only;
  sum.completed = all_done(workloads);
  for (const auto& w : workloads) {
    WorkloadSummary ws = summarise_workload(s, world.link_kind(), *w, run_end);
    if (!ws.completed) sum.completed = false;
    sum.messages += ws.messages;
    sum.bytes += ws.bytes;
    sum.workloads.push_back(ws);
  }
  summarise_hosts(units, sum);
  summarise_fabric(units, sum);
  sum.sim_seconds = now.since_start().seconds();
  sum.events = events;
  sum.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  sum.events_per_sec = sum.wall_seconds > 0 ? static_cast<double>(sum.events) / sum.wall_seconds : 0;
  sum.expectations = check_expectations(s.expect, sum);
  for (const ExpectResult& e : sum.expectations) sum.expectations_met &= e.ok;
  return sum;
}

}  // namespace

Summary run(const Scenario& s, const RunOptions& opts) {
  const auto wall_start = std::chrono::steady_clock::now();
  const uint64_t seed = opts.seed.value_or(s.seed);
  const unsigned threads = opts.threads > 0 ? opts.threads : sim::usable_cores();
  const Share share{opts.ranks != nullptr && opts.ranks->ranks() > 1 ? opts.ranks : nullptr};
  const auto ranks = static_cast<unsigned>(share.ranks != nullptr ? share.ranks->ranks() : 1);
  // The WQE timeline needs one partition; asked for with more, it says so below.
  const uint32_t partitions =
      s.partitions.value_or(opts.timeline.path.empty() ? default_partitions(s, threads * ranks) : 1);
  World world(s, seed, std::cerr, {}, Outside::Apart, partitions);
  world.set_ranks(share.ranks);
  for (uint32_t p = 0; p < world.partitions(); ++p) world.sim(p).log().set_level(opts.log_level);
  if (!opts.defer_writes)
    for (const auto& h : world.hosts()) h->memory.set_deferring(false);
  const auto taps = open_taps(world, s, opts, share);
  std::unique_ptr<Timeline> timeline;
  if (!opts.timeline.path.empty()) {
    // Its tracks are numbered and written as the NICs' events come: one thread's order.
    if (share.ranks != nullptr) throw std::invalid_argument("the WQE timeline is written from one process: run it without mpirun");
    if (world.partitions() > 1) throw std::invalid_argument("the WQE timeline is written from one partition: run it with --partitions 1");
    timeline = std::make_unique<Timeline>(opts.timeline.path, opts.timeline.filter);
    for (const auto& h : world.hosts()) timeline->attach(*h);
  }
  if (!opts.engine_report.empty() && share.ranks != nullptr)
    throw std::invalid_argument("the engine report is written from one process (it predicts ranks): run it without mpirun");

  Workloads workloads;
  for (const WorkloadSpec& w : s.workloads) workloads.push_back(make_workload(world, s, w, seed));
  Launcher launcher(world, workloads, world.partitions(), [&world](const Host& h) { return world.partition_of(h); });

  Progress progress(opts.quiet || !share.first() ? nullptr : &std::cerr, isatty(STDERR_FILENO) != 0, opts.progress, s,
                    workloads, wall_start);
  std::unique_ptr<Sampler> sampler;
  if (!opts.out_dir.empty()) {
    sampler = std::make_unique<Sampler>(world, workloads, opts.sample_interval);
    sampler->start();
  }
  const sim::Time limit = s.duration ? sim::Time::zero() + *s.duration : sim::Time::max();
  const EngineRun engine = run_events(world, launcher, limit, threads, progress, share);
  if (!opts.engine_report.empty()) write_engine_report(opts.engine_report, world, engine, threads);
  const sim::Time now = world.now_anywhere();  // the last event's time, on any rank
  const sim::Time run_end = engine.cut ? limit : now;
  if (sampler) sampler->stop();
  if (timeline) timeline->finish();
  for (auto& t : taps) t->flush();

  for (auto& w : workloads) w->settle();
  UnitReports units = reports(world);
  uint64_t events = world.events_fired();
  if (share.ranks != nullptr) {
    events = gather(world, units, workloads, sampler.get(), share);
    if (!share.first()) return {};
    for (auto& w : workloads) w->settle();
  }
  Summary sum = summarise(s, world, units, workloads, run_end, now, events, seed, wall_start);
  if (!opts.out_dir.empty()) write_outputs(units, workloads, *sampler, sum, opts.out_dir, opts.exact_twins, threads);
  if (!opts.perftest_json_dir.empty()) write_perftest_json(sum, opts.perftest_json_dir, opts.exact_twins);
  return sum;
}

Summary run_text(std::string_view yaml_text, std::string_view file_name, const RunOptions& opts) {
  return run(parse_scenario(std::string(yaml_text), std::string(file_name)), opts);
}

namespace {

const char* kResultLine = "---------------------------------------------------------------------------------------\n";

double percentile_of(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size()))) - (p > 0 ? 1 : 0);
  return v[std::min(i, v.size() - 1)];
}

void print_flows_report(const WorkloadSummary& w, std::ostream& out) {
  char line[512];
  std::vector<double> fct, slow;
  for (const FlowResult& f : w.flows) {
    if (!f.done) continue;
    fct.push_back(f.fct_us);
    slow.push_back(f.slowdown);
  }
  out << kResultLine;
  std::snprintf(line, sizeof line, "                    Flows: %s (%zu flows, %zu completed)\n", w.name.c_str(),
                w.flows.size(), fct.size());
  out << line << kResultLine;
  std::snprintf(line, sizeof line, " %-10s %12s %12s %12s %12s\n", "", "mean", "p50", "p99", "max");
  out << line;
  auto mean = [](const std::vector<double>& v) {
    double t = 0;
    for (double x : v) t += x;
    return v.empty() ? 0.0 : t / static_cast<double>(v.size());
  };
  std::snprintf(line, sizeof line, " %-10s %12.3f %12.3f %12.3f %12.3f\n", "FCT[usec]", mean(fct),
                percentile_of(fct, 0.5), percentile_of(fct, 0.99), percentile_of(fct, 1.0));
  out << line;
  std::snprintf(line, sizeof line, " %-10s %12.3f %12.3f %12.3f %12.3f\n", "slowdown", mean(slow),
                percentile_of(slow, 0.5), percentile_of(slow, 0.99), percentile_of(slow, 1.0));
  out << line << kResultLine;
}

}  // namespace

void print_perftest_report(const WorkloadSummary& w, std::ostream& out) {
  char line[512];
  out << kResultLine << "                    " << perftest_title(w) << "\n";
  std::snprintf(line, sizeof line, " Workload        : %s\t\tHosts          : %s -> %s\n", w.name.c_str(),
                w.from.c_str(), w.to.c_str());
  out << line;
  std::snprintf(line, sizeof line, " Number of qps   : %u\t\tTransport type : IB\n", w.qps);
  out << line;
  out << " Connection type : " << w.connection << "\t\tUsing SRQ      : OFF\n";
  if (!w.nic_preset.empty()) out << " NIC preset      : " << w.nic_preset << "\n";
  out << " TX depth        : " << w.tx_depth << "\n";
  if (w.post_list > 1) out << " Post List       : " << w.post_list << "\n";
  if (w.rx_depth > 0) out << " RX depth        : " << w.rx_depth << "\n";
  if (w.pattern == "bw") out << " CQ Moderation   : " << w.cq_mod << "\n";
  out << " Mtu             : " << w.mtu << "[B]\n";
  out << " Link type       : " << w.link_type << "\n";
  out << " Max inline data : " << w.inline_size << "[B]\n";
  out << kResultLine;
  if (w.pattern == "bw") {
    out << " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n";
    for (const PerftestRow& r : w.rows) {
      std::snprintf(line, sizeof line, " %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t     %-7.6lf\n",
                    static_cast<unsigned long>(r.bytes), static_cast<unsigned long>(r.iterations), r.bw_peak_gbps,
                    r.bw_avg_gbps, r.msg_rate_mpps);
      out << line;
    }
  } else {
    out << " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
           "99% percentile[usec]   99.9% percentile[usec] \n";
    for (const PerftestRow& r : w.rows) {
      std::snprintf(line, sizeof line,
                    " %-7lu %lu          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f "
                    "\t\t%-7.2f\n",
                    static_cast<unsigned long>(r.bytes), static_cast<unsigned long>(r.iterations), r.t_min_us,
                    r.t_max_us, r.t_typical_us, r.t_avg_us, r.t_stdev_us, r.t_p99_us, r.t_p999_us);
      out << line;
    }
  }
  out << kResultLine;
}

void summarise_fabric(World& world, Summary& sum) { summarise_fabric(reports(world), sum); }

void print_fabric(const FabricSummary& f, std::ostream& out) {
  if (f.switches > 0) {
    out << "fabric: " << f.switches << " switches, " << f.forwarded << " frames forwarded, peak buffer "
        << f.peak_buffer_bytes << " bytes, drops:";
    for (size_t d = 0; d < f.switch_drops.size(); ++d) out << ' ' << fabric::kDropCauseNames[d] << ' ' << f.switch_drops[d];
    out << '\n';
  }
  if (f.ecn_marked + f.ecn_ce_received > 0) {
    out << "ECN: " << f.ecn_marked << " frames marked CE by switches, " << f.ecn_ce_received
        << " CE packets received by NICs, " << f.cnps_received << " CNPs received\n";
  }
  if (f.pfc_used()) {
    out << "PFC: " << f.pfc_frames_sent << " pause frames sent";
    char line[256];
    for (size_t p = 0; p < 8; ++p) {
      if (f.xoff_sent[p] + f.pause_received[p] == 0) continue;
      std::snprintf(line, sizeof line,
                    "; priority %zu: sent %llu XOFF, %llu refresh, %llu XON; received %llu pauses, %llu XON; paused "
                    "%.3f us",
                    p, static_cast<unsigned long long>(f.xoff_sent[p]), static_cast<unsigned long long>(f.refresh_sent[p]),
                    static_cast<unsigned long long>(f.xon_sent[p]), static_cast<unsigned long long>(f.pause_received[p]),
                    static_cast<unsigned long long>(f.xon_received[p]), f.paused_us[p]);
      out << line;
    }
    if (f.watchdog_trips > 0) out << "; PFC watchdog tripped " << f.watchdog_trips << " times";
    out << '\n';
  }
  if (f.credit_stalls > 0) {
    char line[160];
    std::snprintf(line, sizeof line, "IB credits: %llu stalls waiting for credit, %.3f us in all\n",
                  static_cast<unsigned long long>(f.credit_stalls), f.credit_stall_us);
    out << line;
  }
  const uint64_t overflow = f.switch_drops[static_cast<size_t>(fabric::DropCause::HeadroomOverflow)];
  if (overflow > 0)
    out << "WARNING: PFC HEADROOM OVERFLOW: " << overflow
        << " frames of lossless priorities dropped (the headroom is too small for the links: raise pfc.headroom)\n";
}

void print_summary(const Summary& s, std::ostream& out) {
  char line[512];
  for (const WorkloadSummary& w : s.workloads) {
    if (!w.rows.empty()) print_perftest_report(w, out);
    if (!w.flows.empty()) print_flows_report(w, out);
  }
  out << "scenario " << s.name << " (seed " << s.seed << ")\n";
  if (s.size_only)
    out << "payload: size-only (payload bytes not materialised: captures hold headers, data not checked)\n";
  out << "---------------------------------------------------------------------------------------------------\n";
  std::snprintf(line, sizeof line, " %-14s %-9s %-3s %10s %10s %12s %10s %11s %11s %5s\n", "workload", "op", "pat",
                "#bytes", "#msgs", "BW[Gb/s]", "MsgRate[Mpps]", "lat_p50[us]", "lat_p99[us]", "data");
  out << line;
  for (const WorkloadSummary& w : s.workloads) {
    std::snprintf(line, sizeof line, " %-14s %-9s %-3s %10llu %10llu %12.2f %13.6f %11.3f %11.3f %5s\n",
                  w.name.c_str(), w.op.c_str(), w.pattern.c_str(), static_cast<unsigned long long>(w.size),
                  static_cast<unsigned long long>(w.messages), w.gbps, w.mmsg_per_s,
                  static_cast<double>(w.lat_p50_ps) / 1e6, static_cast<double>(w.lat_p99_ps) / 1e6,
                  !w.data_checked ? "n/a" : w.data_verified ? "ok" : "BAD");
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
  print_fabric(s.fabric, out);
  std::snprintf(line, sizeof line, "simulated %.6f ms  wall %.3f s  events %llu  (%.2f M events/s)\n",
                s.sim_seconds * 1e3, s.wall_seconds, static_cast<unsigned long long>(s.events),
                s.events_per_sec / 1e6);
  out << line;
  for (const ExpectResult& e : s.expectations)
    out << "expect " << (e.ok ? "ok    " : "FAILED") << "  " << e.expectation.text << "  (measured " << e.measured_text
        << ")\n";
  if (!s.expectations.empty()) {
    size_t failed = 0;
    for (const ExpectResult& e : s.expectations) failed += e.ok ? 0 : 1;
    out << "expectations: " << s.expectations.size() - failed << " ok, " << failed << " failed\n";
  }
  out << (s.completed ? "result: completed\n" : "result: INCOMPLETE\n");
}

}  // namespace rnicsim::scenario
