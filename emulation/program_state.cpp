#include "emulation/program_state.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
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

// A thread's schedstat: nanoseconds on a CPU, then waiting for one, then the
// number of times it was put on one.
bool schedstat(const std::string& path, uint64_t& ns, uint64_t& slices) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[96];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  unsigned long long on_cpu = 0, waiting = 0, runs = 0;
  if (std::sscanf(buf, "%llu %llu %llu", &on_cpu, &waiting, &runs) != 3) return false;
  ns = on_cpu;
  slices = runs;
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
    uint64_t ns = 0, slices = 0;
    t.cpu_known = t.cpu_known && schedstat(task + "/schedstat", ns, slices);
    t.cpu_ns += ns;
    t.slices += slices;
    ++t.threads;
    t.thread_ids += std::strtoull(e->d_name, nullptr, 10);
  }
  closedir(d);
  return t;
}

void ThreadsState::add(const ThreadsState& t) {
  asleep = asleep && t.asleep;
  cpu_known = cpu_known && t.cpu_known;
  cpu_ns += t.cpu_ns;
  slices += t.slices;
  threads += t.threads;
  thread_ids += t.thread_ids;
}

bool asleep_throughout(const ThreadsState& first, const ThreadsState& second) {
  return first.asleep && second.asleep && first.cpu_known && second.cpu_known && first.cpu_ns == second.cpu_ns &&
         first.slices == second.slices && first.threads == second.threads && first.thread_ids == second.thread_ids;
}


pid_t parent_of(pid_t pid) {
  const std::string f = fields_after_name("/proc/" + std::to_string(pid) + "/stat");
  int parent = 0;  // the second field after the name
  return std::sscanf(f.c_str(), "%*c %d", &parent) == 1 ? parent : 0;
}

}  // namespace rnicsim::emulation
