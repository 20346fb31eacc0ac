// rnicsim started by mpirun: each process is one rank of a run across
// processes (sim/rank_link.hpp). Open MPI tells its processes so in the
// environment (OMPI_COMM_WORLD_SIZE); a process not started by it, or the
// only rank of a job, runs as one. A build without MPI refuses a job of
// several ranks with a clear message instead of running each rank alone.
#pragma once

#include <memory>

#include "sim/rank_link.hpp"

namespace rnicsim::cli {

class RankSession {
public:
  virtual ~RankSession() = default;
  virtual sim::RankLink& ranks() = 0;
};

// The ranks of this job (MPI initialised, at threading::serialized: the
// partitions' threads call MPI one at a time), or none outside a job of
// several ranks. Throws std::runtime_error where this build has no MPI.
std::unique_ptr<RankSession> join_mpirun_job();

}  // namespace rnicsim::cli
