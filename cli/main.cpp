// rnicsim: the command-line front end.
//   rnicsim run FILE.yaml [--seed N] [--pcap FILE] [--out DIR]
//   rnicsim validate FILE.yaml
//   rnicsim lint FILE.pcap
//   rnicsim serve [FILE.yaml] [--socket PATH] [--pcap FILE] [--dilation X]
//   rnicsim exec [--host NAME] [--socket PATH] -- PROGRAM ARGS
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/emulation_commands.hpp"
#include "lint/lint.hpp"
#include "scenario/runner.hpp"
#include "scenario/scenario.hpp"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

void usage(std::ostream& out) {
  out << "usage:\n"
         "  rnicsim run FILE.yaml [--seed N] [--pcap FILE] [--out DIR]   run a scenario in simulated time\n"
         "  rnicsim validate FILE.yaml                                 check a scenario without running it\n"
         "  rnicsim lint FILE.pcap                                     check a RoCEv2/InfiniBand capture\n"
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

int cmd_run(const std::vector<std::string>& args) {
  std::string file;
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
    const auto scenario = rnicsim::scenario::load_scenario(file);
    const auto summary = rnicsim::scenario::run(scenario, opts);
    rnicsim::scenario::print_summary(summary, std::cout);
    return summary.completed ? kExitOk : kExitFailed;
  } catch (const rnicsim::scenario::ScenarioError& e) {
    std::cerr << e.what() << '\n';
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "rnicsim run: " << e.what() << '\n';
    return kExitFailed;
  }
}

int cmd_validate(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    usage(std::cerr);
    return kExitUsage;
  }
  try {
    const auto s = rnicsim::scenario::load_scenario(args[0]);
    std::cout << args[0] << ": ok (" << s.hosts.size() << " hosts, " << s.links.size() << " links, "
              << s.workloads.size() << " workloads)\n";
    return kExitOk;
  } catch (const rnicsim::scenario::ScenarioError& e) {
    std::cerr << e.what() << '\n';
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
