// The ranks of a run started by mpirun (rank_link.hpp) over MPI, through
// Boost.MPI: what a rank sends each other rank in one exchange goes as one
// message (in pieces of at most kPieceBytes: MPI counts in int), after an
// all-to-all of the sizes (which carries each rank's `least` too), so a rank
// posts every receive before it waits; the
// minimum and maximum are MPI_Allreduce. Built only where MPI and Boost.MPI are
// installed (RNICSIM_HAVE_MPI). The program holds a boost::mpi::environment
// (MPI_Init) for as long as it uses an MpiRanks, at threading::serialized or
// above where partitions run on threads: the engine calls MPI from whichever
// of its threads ends a phase, one at a time.
#pragma once

#include <boost/mpi/communicator.hpp>

#include "sim/rank_link.hpp"

namespace rnicsim::sim {

class MpiRanks final : public RankLink {
public:
  static constexpr size_t kPieceBytes = size_t{1} << 30;
  MpiRanks() = default;  // MPI_COMM_WORLD
  int rank() const override { return world_.rank(); }
  int ranks() const override { return world_.size(); }
  using RankLink::exchange;
  void exchange(std::span<const std::span<const std::byte>> to, std::vector<std::vector<std::byte>>& from,
                std::span<int64_t> least) override;
  int64_t min(int64_t value) override;
  int64_t max(int64_t value) override;
  [[noreturn]] void abort(std::string_view why) override;

private:
  boost::mpi::communicator world_;
};

}  // namespace rnicsim::sim
