#include "emulation/program_state.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace rnicsim::emulation {
namespace {

// The fields of a stat file after the command name, which is in parentheses
// and may itself hold spaces or parentheses (empty if it cannot be read).
std::string fields_after_name(const std::string& stat_path) {
  const int fd = open(stat_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return {};
  buf[n] = '\0';
  const char* close_paren = std::strrchr(buf, ')');
  return close_paren != nullptr && close_paren[1] == ' ' ? std::string(close_paren + 2) : std::string();
}

// The state letter of one thread: the first field after the name.
char thread_state(const std::string& stat_path) {
  const std::string f = fields_after_name(stat_path);
  return f.empty() ? '?' : f[0];
}

// The first field of a thread's schedstat: nanoseconds on a CPU.
bool cpu_ns(const std::string& path, uint64_t& ns) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[96];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  unsigned long long v = 0;
  if (std::sscanf(buf, "%llu", &v) != 1) return false;
  ns = v;
  return true;
}

}  // namespace

ThreadsState threads_state(pid_t pid) {
  ThreadsState t;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return t;
  t.asleep = t.cpu_known = true;
  for (dirent* e; (e = readdir(d)) != nullptr;) {
    if (e->d_name[0] == '.') continue;
    const std::string task = dir + "/" + e->d_name;
    const char s = thread_state(task + "/stat");
    t.asleep = t.asleep && s != 'R' && s != '?';
    uint64_t ns = 0;
    t.cpu_known = t.cpu_known && cpu_ns(task + "/schedstat", ns);
    t.cpu_ns += ns;
  }
  closedir(d);
  return t;
}


pid_t parent_of(pid_t pid) {
  const std::string f = fields_after_name("/proc/" + std::to_string(pid) + "/stat");
  int parent = 0;  // the second field after the name
  return std::sscanf(f.c_str(), "%*c %d", &parent) == 1 ? parent : 0;
}

}  // namespace rnicsim::emulation
