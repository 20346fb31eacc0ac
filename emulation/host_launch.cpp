#include "emulation/host_launch.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ostream>

#include "emulation/host_namespace.hpp"
#include "emulation/host_network.hpp"
#include "verbs_shim/hello.hpp"

namespace rnicsim::emulation {
namespace proto = verbs_proto;

namespace {

// The signals a launcher passes on to its program.
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

sigset_t forwarded_and_child() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kForwarded) sigaddset(&set, s);
  sigaddset(&set, SIGCHLD);
  return set;
}

std::string lease_error(const proto::Opened& o, const LaunchSpec& spec) {
  if (o.connect_error != 0)
    return "the daemon does not answer on " + spec.socket_path + " (" + std::strerror(o.connect_error) + ")";
  if (o.hello_error == ENODEV) return "the scenario has no host named " + spec.host;
  if (o.hello_error == EBUSY)
    return spec.host.empty() ? "every host of the scenario has a program" : "host " + spec.host + " has a program";
  return std::string("the daemon refused the host: ") + std::strerror(o.hello_error);
}

// Ends the launcher as the program ended: its status, or death by its signal.
int end_as(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  const int sig = WTERMSIG(status);
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);  // the program dumped its own core, if any
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  return 128 + sig;
}

// Waits for the program, passing on what was sent to the launcher. A signal
// from the terminal (SI_KERNEL) reached the program in the same process group
// already and is not sent twice.
int supervise(pid_t child, const sigset_t& set) {
  for (;;) {
    siginfo_t si{};
    const int sig = sigwaitinfo(&set, &si);
    if (sig < 0) continue;
    if (sig == SIGCHLD) {
      int status = 0;
      if (waitpid(child, &status, WNOHANG) == child) return end_as(status);
      continue;
    }
    if (si.si_code != SI_KERNEL) kill(child, sig);
  }
}

[[noreturn]] void run_program(const LaunchSpec& spec, const proto::DeviceInfo& info, pid_t launcher,
                              const sigset_t& old_mask, std::ostream& err) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // a launcher killed outright takes its program along
  if (getppid() != launcher) _exit(1);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  if (spec.view) {
    HostView view{info, std::string(info.netdev, strnlen(info.netdev, sizeof info.netdev)),
                  static_cast<uint32_t>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)))};
    std::string e = info.net_ns_pid != 0
                        ? enter_host(info.user_ns_pid, info.net_ns_pid, hosts_file_path(spec.socket_path))
                        : enter_own_mounts();
    if (e.empty()) e = mount_host_view(view);
    if (!e.empty())
      err << "rnicsim exec: " << spec.argv[0] << " runs without host " << info.host
          << "'s view in /sys and /dev: " << e << std::endl;
  }
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  err << "rnicsim exec: cannot run " << argv[0] << ": " << std::strerror(errno) << std::endl;
  _exit(127);
}

}  // namespace

int launch_on_host(const LaunchSpec& spec, std::ostream& err) {
  if (!spec.host.empty()) setenv(proto::kHostEnv, spec.host.c_str(), 1);
  static uint64_t probe = 0;  // read by the daemon for as long as the lease lasts
  const proto::Opened lease = proto::open_session(spec.socket_path, probe);
  proto::DeviceInfo info{};
  if (lease.fd < 0 || !proto::body_as(lease.reply, info)) {
    err << "rnicsim exec: " << lease_error(lease, spec) << '\n';
    return 1;
  }
  setenv(proto::kHostEnv, info.host, 1);  // the program and its children ask for this host by name
  const sigset_t set = forwarded_and_child();
  sigset_t old_mask;
  sigprocmask(SIG_BLOCK, &set, &old_mask);
  const pid_t launcher = getpid();
  const pid_t child = fork();
  if (child < 0) {
    err << "rnicsim exec: fork: " << std::strerror(errno) << '\n';
    return 1;
  }
  if (child == 0) {
    close(lease.fd);
    run_program(spec, info, launcher, old_mask, err);
  }
  return supervise(child, set);
}

}  // namespace rnicsim::emulation
