#include "cli/mpi_session.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

#ifdef RNICSIM_HAVE_MPI
#include <boost/mpi/environment.hpp>

#include "sim/mpi_ranks.hpp"
#endif

namespace rnicsim::cli {
namespace {

// The job's size as Open MPI's launcher gives it (absent: not under mpirun).
int job_size() {
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  return size == nullptr ? 1 : std::atoi(size);
}

#ifdef RNICSIM_HAVE_MPI
class MpiSession final : public RankSession {
public:
  MpiSession() : env_(boost::mpi::threading::serialized) {
    if (env_.thread_level() < boost::mpi::threading::serialized)
      throw std::runtime_error("this MPI library does not let threads take turns calling it (MPI_THREAD_SERIALIZED)");
  }
  sim::RankLink& ranks() override { return ranks_; }

private:
  boost::mpi::environment env_;  // first in, last out: MPI_Init and MPI_Finalize
  sim::MpiRanks ranks_;
};
#endif

}  // namespace

std::unique_ptr<RankSession> join_mpirun_job() {
  if (job_size() <= 1) return nullptr;
#ifdef RNICSIM_HAVE_MPI
  return std::make_unique<MpiSession>();
#else
  throw std::runtime_error("started by mpirun with " + std::to_string(job_size()) +
                           " ranks, but this rnicsim was built without MPI (install libopenmpi-dev and "
                           "libboost-mpi-dev, then build again)");
#endif
}

}  // namespace rnicsim::cli
