#include "cli/emulation_commands.hpp"

#include <fcntl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "emulation/server.hpp"
#include "scenario/scenario.hpp"
#include "verbs_shim/protocol.hpp"

namespace rnicsim::cli {
namespace {

constexpr int kExitUsage = 2;

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

bool parse_clock(const std::string& v, emulation::ClockMode& clock) {
  if (v == "real" || v == "virtual") {
    clock = v == "real" ? emulation::ClockMode::Real : emulation::ClockMode::Virtual;
    return true;
  }
  std::cerr << "rnicsim: --clock expects real or virtual, got '" << v << "'\n";
  return false;
}

}  // namespace

int cmd_serve(const std::vector<std::string>& args) {
  emulation::ServeOptions o;
  std::string file;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string* { return i + 1 < args.size() ? &args[++i] : nullptr; };
    const std::string* v = nullptr;
    if (a == "--socket" && (v = value())) {
      o.socket_path = *v;
    } else if (a == "--pcap" && (v = value())) {
      o.pcap_path = *v;
    } else if (a == "--device-name" && (v = value())) {
      if (v->empty() || v->size() > 63) {
        std::cerr << "rnicsim serve: --device-name expects 1 to 63 characters, got '" << *v << "'\n";
        return kExitUsage;
      }
      o.device_name = *v;
    } else if (a == "--dilation" && (v = value())) {
      char* end = nullptr;
      o.dilation = std::strtod(v->c_str(), &end);
      if (end == v->c_str() || *end != '\0' || !(o.dilation >= 1e-3)) {
        std::cerr << "rnicsim serve: --dilation expects a number >= 0.001, got '" << *v << "'\n";
        return kExitUsage;
      }
    } else if (a == "--clock" && (v = value())) {
      if (!parse_clock(*v, o.clock)) return kExitUsage;
    } else if (a == "--settle" && (v = value())) {
      char* end = nullptr;
      const double ms = std::strtod(v->c_str(), &end);
      if (end == v->c_str() || *end != '\0' || !(ms >= 0 && ms <= 1000)) {
        std::cerr << "rnicsim serve: --settle expects milliseconds from 0 to 1000, got '" << *v << "'\n";
        return kExitUsage;
      }
      o.settle = std::chrono::microseconds(static_cast<int64_t>(ms * 1000));
    } else if (a == "--payload-mover" && (v = value())) {
      if (*v != "on" && *v != "off") {
        std::cerr << "rnicsim serve: --payload-mover expects on or off, got '" << *v << "'\n";
        return kExitUsage;
      }
      o.payload_mover = *v == "on";
    } else if (a == "--idle-exit" && (v = value())) {
      o.idle_exit = std::chrono::seconds(std::atoi(v->c_str()));
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "rnicsim serve: unknown option or missing value: " << a << '\n';
      return kExitUsage;
    } else if (file.empty()) {
      file = a;
    } else {
      std::cerr << "rnicsim serve: one scenario file at a time\n";
      return kExitUsage;
    }
  }
  try {
    const scenario::Scenario s = file.empty() ? emulation::default_scenario() : scenario::load_scenario(file);
    return emulation::serve(s, o, std::cerr);
  } catch (const scenario::ScenarioError& e) {
    std::cerr << e.what() << '\n';
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "rnicsim serve: " << e.what() << '\n';
    return 1;
  }
}

int cmd_exec(const std::vector<std::string>& args) {
  std::string host, socket_path, scenario_file;
  bool passthrough = false;
  emulation::ClockMode clock = emulation::ClockMode::Real;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--host" && i + 1 < args.size()) {
      host = args[++i];
    } else if (a == "--socket" && i + 1 < args.size()) {
      socket_path = args[++i];
    } else if (a == "--scenario" && i + 1 < args.size()) {
      scenario_file = args[++i];
    } else if (a == "--clock" && i + 1 < args.size()) {
      if (!parse_clock(args[++i], clock)) return kExitUsage;
    } else if (a == "--passthrough") {
      passthrough = true;
    } else {
      std::cerr << "rnicsim exec: unknown option " << a << " (the program goes after --)\n";
      return kExitUsage;
    }
  }
  if (i >= args.size()) {
    std::cerr << "usage: rnicsim exec [--host NAME] [--socket PATH] [--scenario FILE] [--clock real|virtual] [--passthrough] -- PROGRAM ARGS\n";
    return kExitUsage;
  }
  if (socket_path.empty()) socket_path = emulation::default_socket_path();
  const std::string dir = self_dir();
  const std::string lib = dir + "/../lib";

  if (!passthrough && !daemon_answers(socket_path)) {
    // No daemon: start one (the given scenario or two hosts on a lossless
    // 100 Gb/s link) that leaves when it has had no program for a while.
    const pid_t pid = fork();
    if (pid < 0) {
      std::cerr << "rnicsim exec: fork failed\n";
      return 1;
    }
    if (pid == 0) {
      setsid();
      const std::string log = socket_path + ".log";
      const int null_in = open("/dev/null", O_RDONLY);
      dup2(null_in, 0);
      mkdir(socket_path.substr(0, socket_path.rfind('/')).c_str(), 0700);
      const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (out >= 0) {
        dup2(out, 1);
        dup2(out, 2);
      }
      const std::string self = dir + "/rnicsim";
      std::vector<const char*> argv = {self.c_str(), "serve", "--socket", socket_path.c_str(), "--idle-exit", "10"};
      if (clock == emulation::ClockMode::Virtual) argv.insert(argv.end(), {"--clock", "virtual"});
      if (!scenario_file.empty()) argv.push_back(scenario_file.c_str());
      argv.push_back(nullptr);
      execv(self.c_str(), const_cast<char* const*>(argv.data()));
      _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!daemon_answers(socket_path)) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid && !daemon_answers(socket_path)) {
        std::cerr << "rnicsim exec: the daemon did not start (see " << socket_path << ".log)\n";
        return 1;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        std::cerr << "rnicsim exec: the daemon does not answer on " << socket_path << '\n';
        return 1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  const char* old = std::getenv("LD_LIBRARY_PATH");
  const std::string path = old != nullptr && *old != '\0' ? lib + ":" + old : lib;
  setenv("LD_LIBRARY_PATH", path.c_str(), 1);
  setenv(verbs_proto::kSocketEnv, socket_path.c_str(), 1);
  if (!host.empty()) setenv(verbs_proto::kHostEnv, host.c_str(), 1);
  if (passthrough) setenv("RNICSIM_MODE", "passthrough", 1);
  // A reproducible run: the addresses the program puts on the wire (RETHs,
  // addresses in its messages) must not change run to run.
  if (clock == emulation::ClockMode::Virtual && personality(personality(0xffffffff) | ADDR_NO_RANDOMIZE) < 0)
    std::cerr << "rnicsim exec: cannot turn address-space randomisation off (" << std::strerror(errno)
              << "); the addresses the program sends will differ run to run\n";
  std::vector<char*> argv;
  for (size_t k = i; k < args.size(); ++k) argv.push_back(const_cast<char*>(args[k].c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::cerr << "rnicsim exec: cannot run " << argv[0] << ": " << std::strerror(errno) << '\n';
  return 127;
}

}  // namespace rnicsim::cli
