// A program's own view of the emulated host it runs on, without root: a mount
// namespace (inside a new user namespace when not root) where /sys/class and
// /dev show the host's device as the kernel would show a real one, and nothing
// else of the machine changes. What is shown is host_view's; this is how it
// gets there.
//
// A covered directory is a tmpfs: each entry the directory had is bound back
// (a symlink copied), the entries the view replaces are left out, the view's
// files are written, and the tmpfs becomes read-only. Bound entries keep their
// own file system, so /dev/null and /sys/class/net work as before.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "emulation/host_view.hpp"

namespace rnicsim::emulation {

// Puts this process (single-threaded) in new namespaces of `kinds`
// (CLONE_NEWNS, CLONE_NEWNET; a new mount namespace's mounts reach no other);
// when not root, inside a new user namespace that maps its user and group ids
// to themselves. "" or why not, with what to enable.
std::string enter_own_namespaces(int kinds);
std::string enter_own_mounts();  // CLONE_NEWNS

// Joins a host's network (host_network: the user namespace of process
// `user_ns_pid` unless 0, the network and UTS namespaces of `net_ns_pid`),
// then a mount namespace of its own with a sysfs of that network at /sys and
// the file `hosts` (if there is one) at /etc/hosts.
std::string enter_host(pid_t user_ns_pid, pid_t net_ns_pid, const std::string& hosts);

// Covers directory `dir` as said above; `fill` writes the new entries into it.
std::string cover_directory(const std::string& dir, const std::vector<std::string>& left_out,
                            const std::function<std::string(const std::string&)>& fill);

// The view of `view` at /sys/class and /dev/infiniband (in this process's own
// mount namespace: call enter_own_mounts first). "" or what failed.
std::string mount_host_view(const HostView& view, const std::string& sys_class = "/sys/class",
                            const std::string& dev = "/dev");

// What the kernel's settings say about unprivileged user namespaces, for a
// refusal's message: the setting that refuses them and how to allow them.
std::string user_namespace_advice();

}  // namespace rnicsim::emulation
