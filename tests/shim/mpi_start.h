// The start both MPI test programs share: MPI_Init, then one line saying which
// rank runs on which host (the test checks every host had one).
#pragma once
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

static void start_rank(int* argc, char*** argv, int* rank, int* size) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  char host[64] = "";
  gethostname(host, sizeof host);
  printf("rank %d of %d on %s\n", *rank, *size, host);
  fflush(stdout);
}
