// Two ranks bounce a message of each size between them and check every byte,
// as a ping-pong benchmark does; rank 0 prints one line per size. Built against
// Open MPI, run by mpirun across two emulated hosts (tests/shim/mpi.sh).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_start.h"

enum { kIterations = 50, kMaxSize = 1 << 20 };

// The byte at offset i of the message of round r from rank `from`: every
// round's bytes differ, so a stale buffer shows.
static unsigned char pattern(int from, int r, size_t i) { return (unsigned char)(from * 131 + r * 7 + i * 13); }

static int check(const unsigned char* buf, size_t n, int from, int r) {
  for (size_t i = 0; i < n; ++i)
    if (buf[i] != pattern(from, r, i)) {
      fprintf(stderr, "size %zu round %d: byte %zu is %u, not %u\n", n, r, i, buf[i], pattern(from, r, i));
      return 1;
    }
  return 0;
}

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  start_rank(&argc, &argv, &rank, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "needs 2 ranks, has %d\n", size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  unsigned char* buf = malloc(kMaxSize);
  const int peer = 1 - rank;
  int bad = 0;
  for (size_t n = 1; n <= kMaxSize && !bad; n *= 4) {
    const double start = MPI_Wtime();
    for (int r = 0; r < kIterations && !bad; ++r) {
      if (rank == 0) {
        for (size_t i = 0; i < n; ++i) buf[i] = pattern(0, r, i);
        MPI_Send(buf, (int)n, MPI_BYTE, peer, r, MPI_COMM_WORLD);
        MPI_Recv(buf, (int)n, MPI_BYTE, peer, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad = check(buf, n, 1, r);
      } else {
        MPI_Recv(buf, (int)n, MPI_BYTE, peer, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad = check(buf, n, 0, r);
        for (size_t i = 0; i < n; ++i) buf[i] = pattern(1, r, i);
        MPI_Send(buf, (int)n, MPI_BYTE, peer, r, MPI_COMM_WORLD);
      }
    }
    const double half_rtt_us = (MPI_Wtime() - start) / kIterations / 2 * 1e6;
    if (rank == 0 && !bad) printf("pingpong %8zu bytes %4d rounds %10.2f us\n", n, kIterations, half_rtt_us);
  }
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf(any ? "pingpong: data corrupted\n" : "pingpong: every byte checked\n");
  free(buf);
  MPI_Finalize();
  return any;
}
