// rnicsim run | validate | params: scenarios in simulated time.
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/mpi_session.hpp"
#include "scenario/params.hpp"
#include "scenario/runner.hpp"
#include "scenario/scenario.hpp"
#include "scenario/sweep.hpp"
#include "scenario/units.hpp"
#include "sim/output.hpp"

namespace rnicsim::cli {
namespace {

namespace sc = rnicsim::scenario;

struct ScenarioArgs {
  std::string file;
  std::vector<std::string> overrides;
};

void add_scenario_args(CLI::App& sub, ScenarioArgs& a) {
  sub.add_option("FILE.yaml", a.file, "the scenario file")->required()->type_name("");
  sub.add_option("--set", a.overrides,
                 "change a setting before the scenario is checked (nic.mtu=1024, links.0.loss=0.01, "
                 "workloads.NAME.size=4KiB); see rnicsim params")
      ->allow_extra_args(false)
      ->type_name("PATH=VALUE")
      ->default_str("none");
}

// Loads the runs (one, or a sweep's) and hands them to `use`; a scenario or
// override error exits 2 with its message, anything else 1.
int with_runs(const char* cmd, const ScenarioArgs& a, const std::function<int(const std::vector<sc::SweepPoint>&)>& use) {
  try {
    return use(sc::load_runs(a.file, a.overrides));
  } catch (const sc::ScenarioError& e) {
    std::cerr << e.what() << '\n';
    return kExitUsage;
  } catch (const sc::OverrideError& e) {
    std::cerr << "rnicsim " << cmd << ": " << e.what() << '\n';
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "rnicsim " << cmd << ": " << e.what() << '\n';
    return kExitFailed;
  }
}

// A sweep's runs, one after another, then its table (and sweep.csv with --out).
int run_sweep(const std::vector<sc::SweepPoint>& points, sc::RunOptions opts) {
  std::vector<sc::Summary> results;
  bool all_ok = true;
  const std::string out_dir = opts.out_dir, perftest_dir = opts.perftest_json_dir;
  for (size_t i = 0; i < points.size(); ++i) {
    std::cerr << "sweep run " << i + 1 << " of " << points.size() << ":";
    for (const auto& [path, v] : points[i].settings) std::cerr << ' ' << path << '=' << v;
    std::cerr << '\n';
    const std::string run = "/run" + std::to_string(i + 1);
    if (!out_dir.empty()) opts.out_dir = out_dir + run;
    if (!perftest_dir.empty()) opts.perftest_json_dir = perftest_dir + run;
    opts.pcap_path.clear();  // one capture would hold every run: none
    opts.timeline.path.clear();  // and one timeline
    opts.engine_report.clear();  // and one engine report
    results.push_back(sc::run(points[i].scenario, opts));
    all_ok &= results.back().completed && results.back().expectations_met;
  }
  sc::print_sweep_table(points, results, std::cout);
  if (!out_dir.empty()) {
    std::filesystem::create_directories(out_dir);
    sim::CsvWriter csv(std::filesystem::path(out_dir) / "sweep.csv", opts.exact_twins);
    sc::write_sweep_csv(points, results, csv);
  }
  return all_ok ? kExitOk : kExitFailed;
}

// One rank of a run across processes: rank 0 prints the run's summary and
// gives its exit status; an error on any rank ends every rank (MPI_Abort)
// with its message, since the others would wait for it.
int run_as_rank(const sc::Scenario& s, sc::RunOptions opts, sim::RankLink& ranks) {
  opts.ranks = &ranks;
  try {
    const auto summary = sc::run(s, opts);
    if (ranks.rank() != 0) return kExitOk;
    sc::print_summary(summary, std::cout);
    std::cout.flush();
    return summary.completed && summary.expectations_met ? kExitOk : kExitFailed;
  } catch (const std::exception& e) {
    ranks.abort(e.what());
  }
  return kExitFailed;  // not reached: abort() ends every rank
}

struct RunArgs {
  ScenarioArgs scenario;
  sc::RunOptions opts;
  uint64_t seed = 0;
  std::string sample = "10us";
  std::string ib_capture;
  uint32_t partitions = 0;
};

}  // namespace

Action add_run(CLI::App& sub, const Program&) {
  auto a = std::make_shared<RunArgs>();
  add_scenario_args(sub, a->scenario);
  CLI::Option* seed = sub.add_option("--seed", a->seed, "seed of every random stream, instead of the scenario's")
                          ->check(whole_number(0, UINT64_MAX))
                          ->type_name("N")
                          ->default_str("the scenario's seed");
  sub.add_option("--pcap", a->opts.pcap_path, "capture the first host's port into FILE")
      ->type_name("FILE")
      ->default_str("none");
  add_ib_capture(sub, a->ib_capture);
  add_timeline(sub, a->opts.timeline);
  sub.add_option("--out", a->opts.out_dir, "write summary.json, stats.json and the CSV files into DIR (docs/OUTPUTS.md)")
      ->type_name("DIR")
      ->default_str("none");
  sub.add_option("--engine-report", a->opts.engine_report,
                 "write the engine's windows, each partition's units and events and what crossed between "
                 "partitions into FILE (JSON), to plan a run across ranks (docs/PERFORMANCE.md)")
      ->type_name("FILE")
      ->default_str("none");
  sub.add_option("--perftest-json", a->opts.perftest_json_dir,
                 "write DIR/NAME.json per perftest workload, as perftest's --out_json writes it (docs/OUTPUTS.md)")
      ->type_name("DIR")
      ->default_str("none");
  sub.add_option("--sample", a->sample, "the time series' interval, with --out")
      ->check(positive_duration())
      ->type_name("TIME")
      ->capture_default_str();
  sub.add_flag("--exact-twins", a->opts.exact_twins,
               "beside each --out file FILE write FILE.exact, every double as a hex float (for checking the "
               "decimal text)");
  add_choice(sub, "--progress", a->opts.progress.mode, sc::kProgressModeNames,
             "a line on stderr with the simulated time against the scenario's end, events/s and the time left "
             "(rewritten in place on a terminal): auto after the run's first second, always, never");
  sub.add_option("--progress-interval", a->opts.progress.interval_s,
                 "seconds between progress lines when stderr is not a terminal")
      ->check(real_number(0.01, 86400))
      ->type_name("SECONDS")
      ->capture_default_str();
  add_log_level(sub, a->opts.log_level);
  CLI::Option* partitions =
      sub.add_option("--partitions", a->partitions,
                     "cut the world into N partitions that run side by side (the outputs are the same for any N)")
          ->check(whole_number(1, 4096))
          ->type_name("N")
          ->default_str("the scenario's partitions, else one per thread for 64 hosts or more, else 1");
  sub.add_option("--threads", a->opts.threads, "threads that run the partitions")
      ->check(whole_number(1, 1024))
      ->type_name("T")
      ->default_str("the cores it may run on");
  return [a, seed, partitions] {
    if (seed->count() > 0) a->opts.seed = a->seed;
    if (partitions->count() > 0) a->scenario.overrides.push_back("partitions=" + std::to_string(a->partitions));
    a->opts.sample_interval = *sc::parse_duration(a->sample);
    if (!a->ib_capture.empty()) a->scenario.overrides.push_back("ib_capture=" + a->ib_capture);
    return with_runs("run", a->scenario, [&](const std::vector<sc::SweepPoint>& runs) {
      const std::unique_ptr<RankSession> job = join_mpirun_job();
      if (runs.size() != 1 || !runs.front().settings.empty()) {
        if (job) throw std::invalid_argument("a sweep runs in one process: run it without mpirun");
        return run_sweep(runs, a->opts);
      }
      if (job) return run_as_rank(runs.front().scenario, a->opts, job->ranks());
      const auto summary = sc::run(runs.front().scenario, a->opts);
      sc::print_summary(summary, std::cout);
      return summary.completed && summary.expectations_met ? kExitOk : kExitFailed;
    });
  };
}

Action add_validate(CLI::App& sub, const Program&) {
  auto a = std::make_shared<ScenarioArgs>();
  add_scenario_args(sub, *a);
  return [a] {
    return with_runs("validate", *a, [&](const std::vector<sc::SweepPoint>& runs) {
      const auto& s = runs.front().scenario;
      const size_t switches = s.fabric.topology.nodes.size() - s.fabric.topology.hosts().size();
      std::cout << a->file << ": ok (" << s.hosts.size() << " hosts, ";
      if (switches > 0) std::cout << switches << " switches, ";
      std::cout << s.fabric.topology.links.size() << " links, " << s.workloads.size() << " workloads";
      if (runs.size() > 1 || !runs.front().settings.empty()) std::cout << "; a sweep of " << runs.size() << " runs";
      std::cout << ")\n";
      return kExitOk;
    });
  };
}

Action add_params(CLI::App&, const Program&) {
  return [] {
    sc::print_params(std::cout);
    return kExitOk;
  };
}

}  // namespace rnicsim::cli
