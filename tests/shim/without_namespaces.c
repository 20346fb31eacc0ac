/* Runs a command where unshare(2) fails with EPERM, as on a machine whose
 * kernel or container refuses namespaces: the host view's fallback is tested
 * under it. usage: without_namespaces PROGRAM ARGS... */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../emulation/refuse_namespaces.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PROGRAM ARGS...\n", argv[0]);
    return 2;
  }
  if (refuse_namespaces() != 0) {
    perror("seccomp");
    return 1;
  }
  execvp(argv[1], argv + 1);
  fprintf(stderr, "%s: cannot run %s: %s\n", argv[0], argv[1], strerror(errno));
  return 127;
}
