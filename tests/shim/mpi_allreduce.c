// Every rank adds its vector into a sum with MPI_Allreduce, for vectors from
// one element to a megabyte's worth, and checks the sum it gets against the
// one it computes itself; rank 0 prints one line per size. Built against Open MPI,
// run by mpirun across four emulated hosts (tests/shim/mpi.sh).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpi_start.h"

enum { kRounds = 20, kMaxCount = 1 << 18 };

// Element i of rank r's vector in round k: integers, so the sum is exact.
static int64_t element(int r, int k, int i) { return (int64_t)r * 1000003 + (int64_t)k * 7919 + i; }

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  start_rank(&argc, &argv, &rank, &size);
  int64_t* in = malloc(sizeof *in * kMaxCount);
  int64_t* out = malloc(sizeof *out * kMaxCount);
  int bad = 0;
  for (int count = 1; count <= kMaxCount && !bad; count *= 8) {
    const double start = MPI_Wtime();
    for (int k = 0; k < kRounds && !bad; ++k) {
      for (int i = 0; i < count; ++i) in[i] = element(rank, k, i);
      MPI_Allreduce(in, out, count, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      for (int i = 0; i < count && !bad; ++i) {
        int64_t want = 0;
        for (int r = 0; r < size; ++r) want += element(r, k, i);
        if (out[i] != want) {
          fprintf(stderr, "rank %d: count %d round %d: element %d is %lld, not %lld\n", rank, count, k, i,
                  (long long)out[i], (long long)want);
          bad = 1;
        }
      }
    }
    const double us = (MPI_Wtime() - start) / kRounds * 1e6;
    if (rank == 0 && !bad) printf("allreduce %7d x int64 %3d rounds %10.2f us\n", count, kRounds, us);
  }
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf(any ? "allreduce: wrong sums\n" : "allreduce: every sum checked on %d ranks\n", size);
  free(in);
  free(out);
  MPI_Finalize();
  return any;
}
