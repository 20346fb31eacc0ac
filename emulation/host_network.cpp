#include "emulation/host_network.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "emulation/host_namespace.hpp"

namespace rnicsim::emulation {

namespace {

// iproute2's ip: Debian has it in /usr/bin, and /sbin where a PATH asks for it.
constexpr const char* kIpPaths[] = {"/usr/bin/ip", "/bin/ip", "/usr/sbin/ip", "/sbin/ip"};

std::string failed(const std::string& what) { return what + ": " + std::strerror(errno); }

bool write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string read_all(int fd) {
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// ip keeps CAP_NET_ADMIN across its exec: in a user namespace where the user is
// itself, not root, an exec would drop every capability the namespace gave.
bool keep_net_admin_across_exec() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  data[0].inheritable |= 1u << CAP_NET_ADMIN;
  if (syscall(SYS_capset, &header, data) != 0) return false;
  return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_ADMIN, 0, 0) == 0;
}

// Runs `ip -batch -` on `commands`, in the network namespace of process
// `netns_of` (0: this process's). "" or what ip said.
std::string run_ip(pid_t netns_of, const std::string& commands) {
  int in[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) return failed("pipe");
  if (pipe2(err, O_CLOEXEC) != 0) return failed("pipe");
  const pid_t pid = fork();
  if (pid == 0) {
    if (netns_of != 0) {
      const int fd = open(("/proc/" + std::to_string(netns_of) + "/ns/net").c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) _exit(126);
    }
    if (geteuid() != 0 && !keep_net_admin_across_exec()) _exit(125);
    dup2(in[0], 0);
    dup2(err[1], 2);
    for (const char* ip : kIpPaths) execl(ip, "ip", "-batch", "-", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  close(err[1]);
  write_all(in[1], commands);
  close(in[1]);
  const std::string said = read_all(err[0]);
  close(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return "iproute2's ip is not installed";
  return "ip: " + (said.empty() ? std::string("failed") : said);
}

// A process that only holds a new network namespace and a UTS namespace named
// after its host, until its keeper dies.
pid_t start_holder(int report_fd, const std::string& name) {
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(report_fd);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    const bool ok = unshare(CLONE_NEWNET | CLONE_NEWUTS) == 0 && sethostname(name.data(), name.size()) == 0;
    (void)!write(ready[1], ok ? "y" : "n", 1);
    for (;;) pause();
  }
  close(ready[1]);
  char ok = 'n';
  const bool ready_ok = read(ready[0], &ok, 1) == 1 && ok == 'y';
  close(ready[0]);
  return ready_ok ? pid : -1;
}

std::string bridge_commands(const std::vector<pid_t>& holders) {
  std::ostringstream c;
  c << "link set lo up\nlink add br0 type bridge\nlink set br0 up\n";
  for (size_t i = 0; i < holders.size(); ++i)
    c << "link add v" << i << " type veth peer name " << HostNetwork::kInterface << " netns " << holders[i] << '\n'
      << "link set v" << i << " master br0\nlink set v" << i << " up\n";
  return c.str();
}

// The keeper: the namespaces, the holders, the links; then it reports (one
// line: "ok PID..." or "error WHY") and waits to die with the daemon.
[[noreturn]] void keeper(const std::vector<NetworkHost>& hosts, pid_t daemon, int report_fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != daemon) _exit(1);
  const auto report = [&](const std::string& line) {
    write_all(report_fd, line + "\n");
    close(report_fd);
  };
  std::string error = enter_own_namespaces(CLONE_NEWNET);
  std::vector<pid_t> holders;
  for (size_t i = 0; i < hosts.size() && error.empty(); ++i) {
    holders.push_back(start_holder(report_fd, hosts[i].name));
    if (holders.back() < 0) error = failed("a host's network namespace");
  }
  if (error.empty()) error = run_ip(0, bridge_commands(holders));
  for (size_t i = 0; i < hosts.size() && error.empty(); ++i) error = run_ip(holders[i], host_ip_commands(hosts, i));
  if (!error.empty()) {
    report("error " + error);
    _exit(1);
  }
  std::string line = "ok";
  for (pid_t p : holders) line += " " + std::to_string(p);
  report(line);
  for (;;) pause();
}

}  // namespace

std::string address_text(const std::array<uint8_t, 16>& ip) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  char text[INET6_ADDRSTRLEN] = {};
  if (std::memcmp(ip.data(), kMapped, sizeof kMapped) == 0) inet_ntop(AF_INET, ip.data() + 12, text, sizeof text);
  else inet_ntop(AF_INET6, ip.data(), text, sizeof text);
  return text;
}

std::string hosts_file(const std::vector<NetworkHost>& hosts) {
  std::string text = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n";
  for (const NetworkHost& h : hosts) text += address_text(h.ip) + "\t" + h.name + "\n";
  return text;
}

std::string host_named(const std::string& hosts_text, const std::string& host) {
  std::istringstream lines(hosts_text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string address, name;
    if (words >> address >> name && address == host && name != "localhost") return name;
  }
  return host;
}

std::string host_ip_commands(const std::vector<NetworkHost>& hosts, size_t i) {
  const auto prefixed = [](const std::string& ip) { return ip + (ip.find(':') != std::string::npos ? "/128" : "/32"); };
  const NetworkHost& h = hosts.at(i);
  const std::string ip = address_text(h.ip);
  char mac[18];
  std::snprintf(mac, sizeof mac, "%02x:%02x:%02x:%02x:%02x:%02x", h.mac[0], h.mac[1], h.mac[2], h.mac[3], h.mac[4],
                h.mac[5]);
  const std::string dev = HostNetwork::kInterface;
  std::ostringstream c;
  c << "link set lo up\nlink set " << dev << " address " << mac << "\nlink set " << dev << " up\n"
    << "addr add " << prefixed(ip) << " dev " << dev << (ip.find(':') != std::string::npos ? " nodad" : "")
    << '\n';
  for (size_t j = 0; j < hosts.size(); ++j)
    if (j != i) c << "route add " << prefixed(address_text(hosts[j].ip)) << " dev " << dev << '\n';
  return c.str();
}

std::unique_ptr<HostNetwork> HostNetwork::create(const std::vector<NetworkHost>& hosts, std::string& error) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    error = failed("pipe");
    return nullptr;
  }
  const pid_t daemon = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    error = failed("fork");
    return nullptr;
  }
  if (pid == 0) {
    close(report[0]);
    keeper(hosts, daemon, report[1]);
  }
  close(report[1]);
  std::istringstream said(read_all(report[0]));
  close(report[0]);
  std::string word;
  said >> word;
  if (word != "ok") {
    std::getline(said >> std::ws, error);
    if (error.empty()) error = "the network's keeper died";
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return nullptr;
  }
  std::unique_ptr<HostNetwork> net(new HostNetwork);
  net->keeper_ = pid;
  net->user_ns_ = geteuid() != 0;
  for (pid_t p; said >> p;) net->holders_.push_back(p);
  return net;
}

HostNetwork::~HostNetwork() {
  kill(keeper_, SIGKILL);  // its holders follow (PR_SET_PDEATHSIG)
  waitpid(keeper_, nullptr, 0);
}

}  // namespace rnicsim::emulation
