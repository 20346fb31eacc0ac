// rnicsim: the command-line front end.
//   rnicsim run FILE.yaml [--seed N] [--pcap FILE] [--out DIR] [--set PATH=VALUE]...
//   rnicsim validate FILE.yaml [--set PATH=VALUE]...
//   rnicsim lint FILE.pcap
//   rnicsim serve [FILE.yaml] [--socket PATH] [--pcap FILE] [--dilation X]
//   rnicsim exec [--host NAME] [--socket PATH] -- PROGRAM ARGS
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/emulation_commands.hpp"
#include "cli/plot.hpp"
#include "lint/lint.hpp"
#include "scenario/params.hpp"
#include "scenario/runner.hpp"
#include "scenario/scenario.hpp"
#include "scenario/sweep.hpp"
#include "scenario/units.hpp"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

void usage(std::ostream& out) {
  out << "usage:\n"
         "  rnicsim run FILE.yaml [--seed N] [--pcap FILE] [--out DIR]   run a scenario in simulated time\n"
         "        [--set PATH=VALUE]...                                 (e.g. --set nic.mtu=1024, --set links.0.loss=0.01)\n"
         "  rnicsim validate FILE.yaml [--set PATH=VALUE]...          check a scenario without running it\n"
         "  rnicsim lint FILE.pcap                                     check a RoCEv2/InfiniBand capture\n"
         "  rnicsim params                                             list every scenario parameter\n"
         "  rnicsim plot DIR                                           PNG figures of a run's --out DIR\n"
         "  rnicsim serve [FILE.yaml] [--socket PATH] [--pcap FILE] [--dilation X] [--idle-exit SECONDS]\n"
         "                                                             run the NICs in real time for programs on the shim\n"
         "  rnicsim exec [--host NAME] [--socket PATH] [--scenario FILE] [--passthrough] -- PROGRAM ARGS\n"
         "                                                             run an unmodified RDMA program on the shim\n"
         "  rnicsim --help | --version\n";
}

std::optional<uint64_t> parse_u64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t next = v * 10 + static_cast<uint64_t>(c - '0');
    if (next / 10 != v) return std::nullopt;
    v = next;
  }
  return v;
}

// A sweep's runs, one after another, then its table (and sweep.csv with --out).
int run_sweep(const std::vector<rnicsim::scenario::SweepPoint>& points, rnicsim::scenario::RunOptions opts) {
  std::vector<rnicsim::scenario::Summary> results;
  bool all_ok = true;
  const std::string out_dir = opts.out_dir;
  for (size_t i = 0; i < points.size(); ++i) {
    std::cerr << "sweep run " << i + 1 << " of " << points.size() << ":";
    for (const auto& [path, v] : points[i].settings) std::cerr << ' ' << path << '=' << v;
    std::cerr << '\n';
    if (!out_dir.empty()) opts.out_dir = out_dir + "/run" + std::to_string(i + 1);
    opts.pcap_path.clear();  // one capture would hold every run: none
    results.push_back(rnicsim::scenario::run(points[i].scenario, opts));
    all_ok &= results.back().completed && results.back().expectations_met;
  }
  rnicsim::scenario::print_sweep_table(points, results, std::cout);
  if (!out_dir.empty()) {
    std::filesystem::create_directories(out_dir);
    std::ofstream csv(std::filesystem::path(out_dir) / "sweep.csv");
    rnicsim::scenario::write_sweep_csv(points, results, csv);
  }
  return all_ok ? kExitOk : kExitFailed;
}

int cmd_run(const std::vector<std::string>& args) {
  std::string file;
  std::vector<std::string> overrides;
  rnicsim::scenario::RunOptions opts;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> const std::string* {
      if (i + 1 >= args.size()) {
        std::cerr << "rnicsim run: " << flag << " needs a value\n";
        return nullptr;
      }
      return &args[++i];
    };
    if (a == "--seed") {
      const std::string* v = value("--seed");
      if (v == nullptr) return kExitUsage;
      auto n = parse_u64(*v);
      if (!n) {
        std::cerr << "rnicsim run: --seed expects a whole number, got '" << *v << "'\n";
        return kExitUsage;
      }
      opts.seed = *n;
    } else if (a == "--pcap") {
      const std::string* v = value("--pcap");
      if (v == nullptr) return kExitUsage;
      opts.pcap_path = *v;
    } else if (a == "--out") {
      const std::string* v = value("--out");
      if (v == nullptr) return kExitUsage;
      opts.out_dir = *v;
    } else if (a == "--sample") {
      const std::string* v = value("--sample");
      if (v == nullptr) return kExitUsage;
      const auto d = rnicsim::scenario::parse_duration(*v);
      if (!d || d->picoseconds() <= 0) {
        std::cerr << "rnicsim run: --sample expects a time like 10us, got '" << *v << "'\n";
        return kExitUsage;
      }
      opts.sample_interval = *d;
    } else if (a == "--set") {
      const std::string* v = value("--set");
      if (v == nullptr) return kExitUsage;
      overrides.push_back(*v);
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "rnicsim run: unknown option " << a << '\n';
      return kExitUsage;
    } else if (file.empty()) {
      file = a;
    } else {
      std::cerr << "rnicsim run: one scenario file at a time\n";
      return kExitUsage;
    }
  }
  if (file.empty()) {
    usage(std::cerr);
    return kExitUsage;
  }
  try {
    const auto runs = rnicsim::scenario::load_runs(file, overrides);
    if (runs.size() != 1 || !runs.front().settings.empty()) return run_sweep(runs, opts);
    const auto summary = rnicsim::scenario::run(runs.front().scenario, opts);
    rnicsim::scenario::print_summary(summary, std::cout);
    return summary.completed && summary.expectations_met ? kExitOk : kExitFailed;
  } catch (const rnicsim::scenario::ScenarioError& e) {
    std::cerr << e.what() << '\n';
    return kExitUsage;
  } catch (const rnicsim::scenario::OverrideError& e) {
    std::cerr << "rnicsim run: " << e.what() << '\n';
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "rnicsim run: " << e.what() << '\n';
    return kExitFailed;
  }
}

int cmd_validate(const std::vector<std::string>& args) {
  std::vector<std::string> overrides;
  std::string file;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--set" && i + 1 < args.size()) {
      overrides.push_back(args[++i]);
    } else if (file.empty() && !args[i].empty() && args[i][0] != '-') {
      file = args[i];
    } else {
      usage(std::cerr);
      return kExitUsage;
    }
  }
  if (file.empty()) {
    usage(std::cerr);
    return kExitUsage;
  }
  try {
    const auto runs = rnicsim::scenario::load_runs(file, overrides);
    const auto& s = runs.front().scenario;
    const size_t switches = s.fabric.topology.nodes.size() - s.fabric.topology.hosts().size();
    std::cout << file << ": ok (" << s.hosts.size() << " hosts, ";
    if (switches > 0) std::cout << switches << " switches, ";
    std::cout << s.fabric.topology.links.size() << " links, " << s.workloads.size() << " workloads";
    if (runs.size() > 1 || !runs.front().settings.empty()) std::cout << "; a sweep of " << runs.size() << " runs";
    std::cout << ")\n";
    return kExitOk;
  } catch (const rnicsim::scenario::ScenarioError& e) {
    std::cerr << e.what() << '\n';
    return kExitUsage;
  } catch (const rnicsim::scenario::OverrideError& e) {
    std::cerr << "rnicsim validate: " << e.what() << '\n';
    return kExitUsage;
  }
}

int cmd_lint(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    usage(std::cerr);
    return kExitUsage;
  }
  return rnicsim::lint::run_lint(args[0], std::cout, std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    usage(std::cerr);
    return kExitUsage;
  }
  const std::string cmd = args.front();
  args.erase(args.begin());
  if (cmd == "run") return cmd_run(args);
  if (cmd == "validate") return cmd_validate(args);
  if (cmd == "lint") return cmd_lint(args);
  if (cmd == "plot") {
    if (args.size() != 1) {
      usage(std::cerr);
      return kExitUsage;
    }
    return rnicsim::cli::plot(args[0]);
  }
  if (cmd == "params") {
    rnicsim::scenario::print_params(std::cout);
    return kExitOk;
  }
  if (cmd == "serve") return rnicsim::cli::cmd_serve(args);
  if (cmd == "exec") return rnicsim::cli::cmd_exec(args);
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    usage(std::cout);
    return kExitOk;
  }
  if (cmd == "--version") {
    std::cout << "rnicsim 0.1.0\n";
    return kExitOk;
  }
  std::cerr << "rnicsim: unknown command '" << cmd << "'\n";
  usage(std::cerr);
  return kExitUsage;
}
