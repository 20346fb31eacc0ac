// rnicsim serve | exec: the emulation daemon and the launcher of programs on the shim.

#include <fcntl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "cli/commands.hpp"
#include "emulation/host_launch.hpp"
#include "emulation/host_network.hpp"
#include "emulation/server.hpp"
#include "scenario/scenario.hpp"
#include "verbs_shim/protocol.hpp"

namespace rnicsim::cli {
namespace {

bool daemon_answers(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return false;
  std::strcpy(addr.sun_path, path.c_str());
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

std::string self_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<size_t>(n));
  return p.substr(0, p.rfind('/'));
}

}  // namespace

namespace {

struct ExecArgs {
  std::string host, socket_path, scenario_file, network = "shared";
  bool passthrough = false;
  emulation::ClockMode clock = emulation::ClockMode::Real;
  sim::LogLevel log_level = sim::LogLevel::Warn;
};

int exec_program(ExecArgs a, const Program& program);
int rsh_command(const std::string& host, const Program& command);

constexpr std::string_view kOnOff[] = {"on", "off"};
// --network's names: each host a network namespace of its own, or the machine's.
constexpr std::string_view kNetworkNames[] = {"namespaces", "shared"};
constexpr const char* kNetworkHelp =
    "namespaces: each host has its address on an interface of its own, which the other hosts' programs reach "
    "(and localhost is the program's own host); shared: every program has the machine's network";
// --clock's names, in emulation::ClockMode's order.
constexpr std::string_view kClockNames[] = {"real", "virtual"};
static_assert(static_cast<int>(emulation::ClockMode::Virtual) == 1);

// --clock real|virtual, bound to `clock`.
CLI::Option* add_clock(CLI::App& sub, emulation::ClockMode& clock, const std::string& description) {
  return add_choice(sub, "--clock", clock, kClockNames, description);
}

struct ServeArgs {
  emulation::ServeOptions o;
  std::string file, payload_mover = "on", ib_capture, network = "shared";
  uint64_t idle_exit = 0;
  double settle_ms = static_cast<double>(o.settle.count()) / 1000;
};

// How the daemon's simulated time runs against the wall clock.
void add_serve_clock(CLI::App& sub, ServeArgs& a) {
  add_clock(sub, a.o.clock,
            "real: simulated time follows the wall clock (times --dilation); virtual: it moves only with the "
            "model's work, so a run is reproducible");
  sub.add_option("--dilation", a.o.dilation, "wall-clock time per unit of simulated time, on the real clock")
      ->check(real_number(1e-3, HUGE_VAL))
      ->type_name("X")
      ->capture_default_str();
  sub.add_option("--settle", a.settle_ms,
                 "on the virtual clock, doorbells rung within this many milliseconds of each other land at one "
                 "simulated time")
      ->check(real_number(0, 1000))
      ->type_name("MS")
      ->capture_default_str();
}

int run_serve(ServeArgs& a) {
  a.o.payload_mover = a.payload_mover == "on";
  a.o.host_network = a.network == "namespaces";
  a.o.idle_exit = std::chrono::seconds(a.idle_exit);
  a.o.settle = std::chrono::microseconds(static_cast<int64_t>(a.settle_ms * 1000));
  try {
    scenario::Scenario s = a.file.empty() ? emulation::default_scenario() : scenario::load_scenario(a.file);
    if (!a.ib_capture.empty()) s.ib_capture = fabric::ib_capture_named(a.ib_capture);
    return emulation::serve(s, a.o, std::cerr);
  } catch (const scenario::ScenarioError& e) {
    std::cerr << e.what() << '\n';
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "rnicsim serve: " << e.what() << '\n';
    return kExitFailed;
  }
}

}  // namespace

Action add_serve(CLI::App& sub, const Program&) {
  auto a = std::make_shared<ServeArgs>();
  sub.add_option("FILE.yaml", a->file, "the scenario whose hosts the programs become")
      ->type_name("")
      ->default_str("two hosts on a lossless 100 Gb/s link");
  sub.add_option("--socket", a->o.socket_path, "the daemon's socket")
      ->type_name("PATH")
      ->default_str(emulation::default_socket_path());
  sub.add_option("--pcap", a->o.pcap_path, "capture the first host's port into FILE")->type_name("FILE")->default_str("none");
  add_ib_capture(sub, a->ib_capture);
  add_timeline(sub, a->o.timeline);
  sub.add_option("--device-name", a->o.device_name, "the verbs device every program sees")
      ->check(text_length(1, 63))
      ->type_name("NAME")
      ->default_str("each host's device:, else rnicsim0");
  add_serve_clock(sub, *a);
  one_of(sub.add_option("--payload-mover", a->payload_mover,
                        "write received payload into the programs from a second thread")
             ->capture_default_str(),
         kOnOff);
  sub.add_option("--idle-exit", a->idle_exit, "exit after SECONDS without any program connected, 0 for never")
      ->check(whole_number(0, UINT32_MAX))
      ->type_name("SECONDS")
      ->capture_default_str();
  one_of(sub.add_option("--network", a->network, kNetworkHelp)->capture_default_str(), kNetworkNames);
  add_log_level(sub, a->o.log_level);
  return [a] { return run_serve(*a); };
}

Action add_exec(CLI::App& sub, const Program& program) {
  auto a = std::make_shared<ExecArgs>();
  sub.add_option("--host", a->host, "the scenario's host the program becomes")
      ->type_name("NAME")
      ->default_str("the first free one");
  sub.add_option("--socket", a->socket_path, "the daemon's socket")
      ->type_name("PATH")
      ->default_str(emulation::default_socket_path());
  sub.add_option("--scenario", a->scenario_file, "the scenario of the daemon exec starts when none answers")
      ->type_name("FILE")
      ->default_str("two hosts on a lossless 100 Gb/s link");
  add_clock(sub, a->clock,
            "the clock of the daemon exec starts; virtual also runs the program without address-space "
            "randomisation, since the addresses it sends appear on the wire");
  one_of(sub.add_option("--network", a->network, std::string("the network of the daemon exec starts; ") + kNetworkHelp)
             ->capture_default_str(),
         kNetworkNames);
  sub.add_flag("--passthrough", a->passthrough, "no daemon: every verb goes to the system's libibverbs");
  add_log_level(sub, a->log_level)->description("what the daemon exec starts logs, from the most");
  sub.footer("Everything after -- is the program and its arguments; rnicsim reads none of it.");
  return [a, &program] { return exec_program(*a, program); };
}

// rsh HOST COMMAND, as rsh and ssh run a command: its words joined by spaces,
// run by /bin/sh on the host (so the quoting mpirun gives survives). The
// daemon is the calling program's ($RNICSIM_SOCKET, which exec sets), else
// the default one: rsh has no options, so that everything after the host is
// the command. A host is a name or an address of the scenario's hosts.
Action add_rsh(CLI::App& sub, const Program& program) {
  auto host = std::make_shared<std::string>();
  sub.add_option("host", *host, "the scenario's host, by name or address")->required()->type_name("HOST");
  sub.footer("Everything after HOST is the command; rnicsim reads none of it. Open MPI: "
             "mpirun --mca plm_rsh_agent 'rnicsim rsh' -H host0,host1 ...");
  return [host, &program] { return rsh_command(*host, program); };
}

namespace {

// No daemon answers: start one (the given scenario or two hosts on a lossless
// 100 Gb/s link) that leaves when it has had no program for a while. 0 once it
// answers, else the exit code.
int start_daemon(const ExecArgs& a, const std::string& dir) {
  const pid_t pid = fork();
  if (pid < 0) {
    std::cerr << "rnicsim exec: fork failed\n";
    return kExitFailed;
  }
  if (pid == 0) {
    setsid();
    const std::string log = a.socket_path + ".log";
    const int null_in = open("/dev/null", O_RDONLY);
    dup2(null_in, 0);
    mkdir(a.socket_path.substr(0, a.socket_path.rfind('/')).c_str(), 0700);
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (out >= 0) {
      dup2(out, 1);
      dup2(out, 2);
    }
    const std::string self = dir + "/rnicsim";
    const std::string level(sim::to_string(a.log_level));
    std::vector<const char*> argv = {self.c_str(), "serve", "--socket", a.socket_path.c_str(), "--idle-exit", "10",
                                     "--log-level", level.c_str()};
    if (a.clock == emulation::ClockMode::Virtual) argv.insert(argv.end(), {"--clock", "virtual"});
    if (a.network != "shared") argv.insert(argv.end(), {"--network", a.network.c_str()});
    if (!a.scenario_file.empty()) argv.push_back(a.scenario_file.c_str());
    argv.push_back(nullptr);
    execv(self.c_str(), const_cast<char* const*>(argv.data()));
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!daemon_answers(a.socket_path)) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid && !daemon_answers(a.socket_path)) {
      std::cerr << "rnicsim exec: the daemon did not start (see " << a.socket_path << ".log)\n";
      return kExitFailed;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::cerr << "rnicsim exec: the daemon does not answer on " << a.socket_path << '\n';
      return kExitFailed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return kExitOk;
}

int exec_program(ExecArgs a, const Program& program) {
  if (a.socket_path.empty()) a.socket_path = emulation::default_socket_path();
  const std::string dir = self_dir();
  const std::string lib = dir + "/../lib";
  if (!a.passthrough && !daemon_answers(a.socket_path))
    if (const int rc = start_daemon(a, dir); rc != kExitOk) return rc;

  const char* old = std::getenv("LD_LIBRARY_PATH");
  const std::string path = old != nullptr && *old != '\0' ? lib + ":" + old : lib;
  setenv("LD_LIBRARY_PATH", path.c_str(), 1);
  setenv(verbs_proto::kSocketEnv, a.socket_path.c_str(), 1);
  if (a.passthrough) setenv("RNICSIM_MODE", "passthrough", 1);
  // A reproducible run: the addresses the program puts on the wire (RETHs,
  // addresses in its messages) must not change run to run.
  if (a.clock == emulation::ClockMode::Virtual && personality(personality(0xffffffff) | ADDR_NO_RANDOMIZE) < 0)
    std::cerr << "rnicsim exec: cannot turn address-space randomisation off (" << std::strerror(errno)
              << "); the addresses the program sends will differ run to run\n";
  if (!a.passthrough) return emulation::launch_on_host({a.socket_path, a.host, program, true}, std::cerr);
  std::vector<char*> argv;
  for (const std::string& arg : program) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::cerr << "rnicsim exec: cannot run " << argv[0] << ": " << std::strerror(errno) << '\n';
  return 127;
}

// The host the caller is on runs the command itself (rsh to localhost): a host
// has one program at a time, and the caller is it.
int rsh_command(const std::string& host, const Program& command) {
  const char* sock = std::getenv(verbs_proto::kSocketEnv);
  ExecArgs a;
  a.socket_path = sock != nullptr && *sock != '\0' ? sock : emulation::default_socket_path();
  std::ifstream file(emulation::hosts_file_path(a.socket_path));
  std::ostringstream hosts;
  hosts << file.rdbuf();
  a.host = emulation::host_named(hosts.str(), host);
  std::string line;
  for (const std::string& word : command) line += (line.empty() ? "" : " ") + word;
  const char* own = std::getenv(verbs_proto::kHostEnv);
  if (own != nullptr && a.host == own) {
    const char* argv[] = {"/bin/sh", "-c", line.c_str(), nullptr};
    execv(argv[0], const_cast<char* const*>(argv));
    std::cerr << "rnicsim rsh: cannot run /bin/sh: " << std::strerror(errno) << '\n';
    return 127;
  }
  if (!daemon_answers(a.socket_path)) {
    std::cerr << "rnicsim rsh: no daemon answers on " << a.socket_path << '\n';
    return kExitFailed;
  }
  return exec_program(a, {"/bin/sh", "-c", line});
}

}  // namespace
}  // namespace rnicsim::cli
