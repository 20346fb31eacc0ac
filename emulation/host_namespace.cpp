#include "emulation/host_namespace.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>

namespace rnicsim::emulation {

namespace {

std::string failed(const std::string& what) { return what + ": " + std::strerror(errno); }

bool write_file(const char* path, const std::string& text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// A sysctl's value, or -1 where the kernel has no such setting.
long sysctl_value(const char* path) {
  std::ifstream in(path);
  long v = -1;
  return in >> v ? v : -1;
}

struct Entry {
  std::string name;
  mode_t type;
};

std::vector<Entry> entries_of(int dir_fd) {
  std::vector<Entry> out;
  const int fd = dup(dir_fd);
  DIR* d = fd >= 0 ? fdopendir(fd) : nullptr;
  if (d == nullptr) return out;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    struct stat st{};
    if (name == "." || name == ".." || fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    out.push_back({name, st.st_mode & S_IFMT});
  }
  closedir(d);
  return out;
}

// Puts entry `e` of the directory open as `from` back at `dir`/name.
std::string bind_back(int from, const std::string& dir, const Entry& e) {
  const std::string src = "/proc/self/fd/" + std::to_string(from) + "/" + e.name;
  const std::string dst = dir + "/" + e.name;
  if (e.type == S_IFLNK) {
    char target[PATH_MAX];
    const ssize_t n = readlinkat(from, e.name.c_str(), target, sizeof target - 1);
    if (n < 0) return failed("readlink " + dst);
    target[n] = '\0';
    return symlink(target, dst.c_str()) == 0 ? "" : failed("symlink " + dst);
  }
  if (e.type == S_IFDIR) {
    if (mkdir(dst.c_str(), 0755) != 0) return failed("mkdir " + dst);
  } else {
    const int fd = open(dst.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return failed("create " + dst);
    close(fd);
  }
  return mount(src.c_str(), dst.c_str(), nullptr, MS_BIND | MS_REC, nullptr) == 0 ? "" : failed("bind " + dst);
}

// /dev/infiniband: the names a program checks for, each a bind of /dev/null
// (a character device anyone may open; nothing is read from it).
std::string fill_dev(const std::string& dev, int old_dev) {
  const std::string dir = dev + "/infiniband";
  if (mkdir(dir.c_str(), 0755) != 0) return failed("mkdir " + dir);
  const std::string null = "/proc/self/fd/" + std::to_string(old_dev) + "/null";
  for (const std::string& name : dev_infiniband_names()) {
    const std::string path = dir + "/" + name;
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return failed("create " + path);
    close(fd);
    if (mount(null.c_str(), path.c_str(), nullptr, MS_BIND, nullptr) != 0) return failed("bind " + path);
  }
  return {};
}

}  // namespace

std::string user_namespace_advice() {
  if (sysctl_value("/proc/sys/kernel/unprivileged_userns_clone") == 0)
    return "the kernel refuses unprivileged user namespaces: allow them with "
           "'sysctl -w kernel.unprivileged_userns_clone=1'";
  if (sysctl_value("/proc/sys/user/max_user_namespaces") == 0)
    return "user namespaces are limited to none: allow them with 'sysctl -w user.max_user_namespaces=15000'";
  if (sysctl_value("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
    return "AppArmor restricts unprivileged user namespaces: allow them with "
           "'sysctl -w kernel.apparmor_restrict_unprivileged_userns=0'";
  return "user namespaces are refused here (a container's seccomp profile, or a kernel built without them); "
         "allow unshare(CLONE_NEWUSER) for this user";
}

std::string enter_own_namespaces(int kinds) {
  const uid_t uid = geteuid();
  const gid_t gid = getegid();
  const auto refused = [] {
    const std::string what = failed("unshare");  // before the advice's own reads change errno
    return what + "; " + user_namespace_advice();
  };
  if (unshare(kinds | (uid != 0 ? CLONE_NEWUSER : 0)) != 0) return refused();
  // The ids stay what they were; setgroups must be refused before a gid map.
  if (uid != 0 && (!write_file("/proc/self/setgroups", "deny") ||
                   !write_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1") ||
                   !write_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1")))
    return failed("the user namespace's id maps");
  // Nothing mounted from here on reaches the mounts of any other namespace.
  if ((kinds & CLONE_NEWNS) != 0 && mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return failed("making / private");
  return {};
}

std::string enter_own_mounts() { return enter_own_namespaces(CLONE_NEWNS); }

std::string enter_host(pid_t user_ns_pid, pid_t net_ns_pid, const std::string& hosts) {
  const auto join = [](pid_t pid, const char* kind, int type) -> std::string {
    const std::string path = "/proc/" + std::to_string(pid) + "/ns/" + kind;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return failed("open " + path);
    const int rc = setns(fd, type);
    close(fd);
    return rc == 0 ? "" : failed(std::string("joining the host's ") + kind + " namespace");
  };
  if (user_ns_pid != 0)
    if (std::string e = join(user_ns_pid, "user", CLONE_NEWUSER); !e.empty()) return e;
  if (std::string e = join(net_ns_pid, "net", CLONE_NEWNET); !e.empty()) return e;
  if (std::string e = join(net_ns_pid, "uts", CLONE_NEWUTS); !e.empty()) return e;
  if (unshare(CLONE_NEWNS) != 0) return failed("unshare");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return failed("making / private");
  // A sysfs of the host's network namespace: /sys/class/net is its interfaces.
  if (mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) return failed("sysfs on /sys");
  // The hosts by name, as a cluster's resolver knows them.
  if (access(hosts.c_str(), R_OK) == 0 && mount(hosts.c_str(), "/etc/hosts", nullptr, MS_BIND, nullptr) != 0)
    return failed("binding the hosts' names on /etc/hosts");
  return {};
}

std::string cover_directory(const std::string& dir, const std::vector<std::string>& left_out,
                            const std::function<std::string(const std::string&)>& fill) {
  const int old = open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (old < 0) return failed("open " + dir);
  const int listing = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  std::vector<Entry> entries = listing >= 0 ? entries_of(listing) : std::vector<Entry>{};
  if (listing >= 0) close(listing);
  if (mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID, "mode=0755") != 0) {
    close(old);
    return failed("tmpfs on " + dir);
  }
  std::string error;
  for (const Entry& e : entries) {
    if (!error.empty()) break;
    if (std::find(left_out.begin(), left_out.end(), e.name) == left_out.end()) error = bind_back(old, dir, e);
  }
  if (error.empty()) error = fill(dir);
  if (error.empty() && mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID, nullptr) != 0)
    error = failed("read-only " + dir);
  if (!error.empty()) umount2(dir.c_str(), MNT_DETACH);  // half a cover would hide what the program needs
  close(old);
  return error;
}

std::string mount_host_view(const HostView& view, const std::string& sys_class, const std::string& dev) {
  // Any RDMA device of the machine is left out: the host has its own.
  static const std::vector<std::string> kRdmaClasses = {"infiniband", "infiniband_verbs", "infiniband_mad",
                                                         "infiniband_cm"};
  std::string error = cover_directory(sys_class, kRdmaClasses, [&](const std::string& dir) {
    return write_view_files(dir, sysfs_class_files(view));
  });
  if (!error.empty()) return error;
  const int old_dev = open(dev.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (old_dev < 0) return failed("open " + dev);
  error = cover_directory(dev, {"infiniband"}, [&](const std::string& dir) { return fill_dev(dir, old_dev); });
  close(old_dev);
  return error;
}

}  // namespace rnicsim::emulation
