// The ranks of a run started by mpirun (rank_link.hpp) over MPI: what a rank
// sends each other rank in one exchange goes as one message (in pieces of at
// most kPieceBytes: MPI counts in int), after an all-to-all of the sizes
// (which carries each rank's `least` too), so a rank posts every receive
// before it waits; the minimum and maximum are MPI_Allreduce. Every window
// makes an exchange: it keeps its buffers and requests from one to the next,
// and is written on the MPI C API: 3-10 % faster than on Boost.MPI's
// requests where bytes cross, the same where none do (bench/mpi_exchange),
// the bytes being most of the round's cost. The environment, the
// communicator and the reductions are Boost.MPI's. Built only where MPI and
// Boost.MPI are installed (RNICSIM_HAVE_MPI). The program holds a
// boost::mpi::environment (MPI_Init) for as long as it uses an MpiRanks, at
// threading::serialized or above where partitions run on threads: the engine
// calls MPI from whichever of its threads ends a phase, one at a time.
#pragma once

#include <mpi.h>

#include <boost/mpi/communicator.hpp>

#include <vector>

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

  // The all-to-all an exchange starts with: to each rank the size of its
  // part and this rank's `least` (`width` values to each), from each the same.
  struct Heads {
    std::vector<int64_t> out, in;
    int width = 1;
    // Fills `out` as rank `me` sends it, and sizes `in`.
    void fill(std::span<const std::span<const std::byte>> to, std::span<const int64_t> least, size_t me);
    // Once exchanged: the size of rank r's part for this one; folds r's least into `least`.
    size_t take(size_t r, std::span<int64_t> least) const;
  };

private:
  // Posts the receive (into `recv_into`) or the send (from `send_from`) of
  // `size` bytes with `peer`, in pieces.
  void post(std::byte* recv_into, const std::byte* send_from, size_t size, int peer);
  boost::mpi::communicator world_;
  Heads heads_;  // the exchange's, kept between windows
  std::vector<MPI_Request> requests_;
};

}  // namespace rnicsim::sim
