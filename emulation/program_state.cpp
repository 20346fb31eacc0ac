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

}  // namespace

bool asleep(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return false;
  bool all = true;
  for (dirent* e; all && (e = readdir(d)) != nullptr;) {
    if (e->d_name[0] == '.') continue;
    const char s = thread_state(dir + "/" + e->d_name + "/stat");
    all = s != 'R' && s != '?';
  }
  closedir(d);
  return all;
}

pid_t parent_of(pid_t pid) {
  const std::string f = fields_after_name("/proc/" + std::to_string(pid) + "/stat");
  int parent = 0;  // the second field after the name
  return std::sscanf(f.c_str(), "%*c %d", &parent) == 1 ? parent : 0;
}

}  // namespace rnicsim::emulation
