#include "emulation/program_state.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace rnicsim::emulation {
namespace {

// The state letter of one thread: the field after the command name, which is
// in parentheses and may itself hold spaces or parentheses.
char thread_state(const std::string& stat_path) {
  const int fd = open(stat_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return '?';
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return '?';
  buf[n] = '\0';
  const char* close_paren = std::strrchr(buf, ')');
  return close_paren != nullptr && close_paren[1] == ' ' ? close_paren[2] : '?';
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

}  // namespace rnicsim::emulation
