#include "cli/plot.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iostream>

extern const char* const kPlotScript;

namespace rnicsim::cli {

int plot(const std::string& dir) {
  // python3 reads the script from a pipe ("-") and gets DIR as its argument.
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("rnicsim plot: pipe");
    return 1;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("rnicsim plot: fork");
    return 1;
  }
  if (pid == 0) {
    dup2(fds[0], STDIN_FILENO);
    close(fds[0]);
    close(fds[1]);
    // Debian's interpreter, where python3-matplotlib installs; else whatever python3 is first.
    execl("/usr/bin/python3", "python3", "-", dir.c_str(), static_cast<char*>(nullptr));
    execlp("python3", "python3", "-", dir.c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "rnicsim plot: cannot run python3 (%s); install python3-matplotlib\n", std::strerror(errno));
    _exit(127);
  }
  close(fds[0]);
  const size_t n = std::strlen(kPlotScript);
  size_t done = 0;
  while (done < n) {
    const ssize_t w = write(fds[1], kPlotScript + done, n - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  close(fds[1]);
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return 1;
  if (!WIFEXITED(status)) return 1;
  // The script reports its own errors (a missing matplotlib as an ImportError).
  return WEXITSTATUS(status);
}

}  // namespace rnicsim::cli
