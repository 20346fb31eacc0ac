// Each emulated host as a machine on a network: a network namespace per host
// (with a UTS namespace: the scenario's host name is its hostname) whose
// interface (eth0) has the host's scenario MAC and address, the hosts'
// interfaces joined by a bridge in a namespace of the network's own, so that a
// program's own TCP and UDP sockets reach the other hosts at their scenario
// addresses, and "localhost" is the program's own host, as on a cluster.
// Rootless where the daemon is not root; nothing outside changes.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rnicsim::emulation {

struct NetworkHost {
  std::array<uint8_t, 16> ip{};  // IPv6; IPv4 as an IPv4-mapped address
  std::array<uint8_t, 6> mac{};
  std::string name;  // its host name (uname, /etc/hosts)
};

// An address as ip writes it: dotted for an IPv4-mapped one.
std::string address_text(const std::array<uint8_t, 16>& ip);

// The namespaces are held by small processes (a keeper, and one holder per
// host) that die with the daemon, inside one user namespace that maps the user
// to itself where the daemon is not root; a program joins its host's through
// /proc/PID/ns (host_namespace's enter_host). The interfaces are made with
// iproute2's ip, run in the namespaces.
class HostNetwork {
public:
  static constexpr const char* kInterface = "eth0";

  // Builds the network of `hosts`; nullptr and `error` says why not.
  static std::unique_ptr<HostNetwork> create(const std::vector<NetworkHost>& hosts, std::string& error);
  ~HostNetwork();
  HostNetwork(const HostNetwork&) = delete;
  HostNetwork& operator=(const HostNetwork&) = delete;

  // The keeper, whose user namespace the programs join (0: none, the daemon is root).
  pid_t user_ns_pid() const { return user_ns_ ? keeper_ : 0; }
  // The process whose network and UTS namespaces are host `i`'s.
  pid_t net_ns_pid(size_t i) const { return holders_.at(i); }

private:
  HostNetwork() = default;
  pid_t keeper_ = 0;
  bool user_ns_ = false;
  std::vector<pid_t> holders_;
};

// /etc/hosts of every host: localhost, and each host's name at its address,
// so that cluster tools (mpirun's -H) find the hosts by name.
std::string hosts_file(const std::vector<NetworkHost>& hosts);
// The name `host` has in such a file: its own if it is an address there, else
// `host` itself (a name, or nothing the file knows).
std::string host_named(const std::string& hosts_text, const std::string& host);
// Where the daemon of `socket_path` keeps it for the programs' launchers.
inline std::string hosts_file_path(const std::string& socket_path) { return socket_path + ".hosts"; }

// The `ip -batch` commands that give a host its interface, address and a route
// to each other host (the bridge is one link: every host is a neighbour).
std::string host_ip_commands(const std::vector<NetworkHost>& hosts, size_t i);

}  // namespace rnicsim::emulation
