// The window's exchange between ranks on the MPI C API (sim::MpiRanks, what
// rnicsim runs) against the same exchange on Boost.MPI's calls, in one run:
// which of the two the engine should use. Run under mpirun:
//
//   mpirun -np 2 build/bench/mpi_exchange [--rounds N] [--smoke]
//
// One exchange is what a window costs the ranks (sim/mpi_ranks.cpp): an
// all-to-all of a header per rank (the part's size and three int64 values to
// reduce), then one message each way between every pair with bytes to send.
// Sizes per pair from none to a busy window's; the two kinds alternate in
// blocks, and each reports the least mean of its blocks. Rank 0 prints one
// row per size: microseconds per exchange each way and C API over Boost.MPI.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/mpi/nonblocking.hpp>

#include "sim/mpi_ranks.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kTag = 7;

// The same exchange on Boost.MPI's calls: the same messages in the same
// order, the same buffers kept between exchanges; only the calls differ.
class BoostExchange {
public:
  void exchange(std::span<const std::span<const std::byte>> to, std::vector<std::vector<std::byte>>& in,
                std::span<int64_t> least) {
    const auto n = static_cast<size_t>(world_.size()), me = static_cast<size_t>(world_.rank());
    heads_.fill(to, least, me);
    boost::mpi::all_to_all(world_, heads_.out.data(), heads_.width, heads_.in.data());
    in.resize(n);
    requests_.clear();
    for (size_t r = 0; r < n; ++r) {
      const size_t size = heads_.take(r, least);
      if (r == me) continue;
      in[r].resize(size);
      const int peer = static_cast<int>(r);
      if (!in[r].empty())
        requests_.push_back(world_.irecv(peer, kTag, reinterpret_cast<char*>(in[r].data()), static_cast<int>(in[r].size())));
      if (!to[r].empty())
        requests_.push_back(
            world_.isend(peer, kTag, reinterpret_cast<const char*>(to[r].data()), static_cast<int>(to[r].size())));
    }
    boost::mpi::wait_all(requests_.begin(), requests_.end());
    in[me].assign(to[me].begin(), to[me].end());
  }
  int rank() const { return world_.rank(); }
  int ranks() const { return world_.size(); }

private:
  boost::mpi::communicator world_;
  rnicsim::sim::MpiRanks::Heads heads_;
  std::vector<boost::mpi::request> requests_;
};

struct Options {
  int rounds = 20000;
  int blocks = 10;
};

// Mean microseconds per exchange over `rounds` exchanges of `bytes` to every other rank.
template <class Exchange>
double time_block(Exchange& x, size_t bytes, int rounds, int ranks) {
  std::vector<std::byte> payload(bytes, std::byte{0x5a});
  std::vector<std::span<const std::byte>> to(static_cast<size_t>(ranks), std::span<const std::byte>(payload));
  std::vector<std::vector<std::byte>> in;
  std::array<int64_t, 3> least{};
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = Clock::now();
  for (int i = 0; i < rounds; ++i) {
    least = {i, -i, 1};
    x.exchange(to, in, least);
  }
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / rounds;
  double slowest = 0;  // a round ends for all when the slowest rank's ends
  MPI_Allreduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

// Whether every rank got every other's bytes and the least of the values.
template <class Exchange>
bool check(Exchange& x, int rank, int ranks) {
  std::vector<std::vector<std::byte>> parts(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) parts[static_cast<size_t>(r)].assign(static_cast<size_t>(100 + r), std::byte(rank));
  std::vector<std::span<const std::byte>> to(parts.begin(), parts.end());
  std::vector<std::vector<std::byte>> in;
  std::array<int64_t, 3> least{rank, 10 - rank, 7};
  x.exchange(to, in, least);
  bool ok = least[0] == 0 && least[1] == 10 - (ranks - 1) && least[2] == 7;
  for (int r = 0; r < ranks; ++r)
    ok = ok && in[static_cast<size_t>(r)] == std::vector<std::byte>(static_cast<size_t>(100 + rank), std::byte(r));
  int all = ok ? 1 : 0, every = 0;
  MPI_Allreduce(&all, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return every == 1;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--smoke") {
      o.rounds = 200;
      o.blocks = 2;
    } else if (a == "--rounds" && i + 1 < argc) {
      o.rounds = std::max(1, std::stoi(argv[++i]));
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  boost::mpi::environment env(argc, argv, boost::mpi::threading::serialized);
  const Options o = parse(argc, argv);
  BoostExchange boost_side;
  rnicsim::sim::MpiRanks c_side;  // rnicsim's
  const int rank = boost_side.rank(), ranks = boost_side.ranks();
  if (!check(boost_side, rank, ranks) || !check(c_side, rank, ranks)) {
    if (rank == 0) std::fprintf(stderr, "mpi_exchange: an exchange lost or changed bytes\n");
    return 1;
  }
  if (rank == 0) {
    std::printf("ranks %d, %d exchanges a block, %d blocks each, alternating; least block mean\n", ranks, o.rounds,
                o.blocks);
    std::printf("%-16s %14s %14s %12s\n", "bytes per pair", "Boost.MPI us", "C API us", "C / Boost");
  }
  for (const size_t bytes : {size_t{0}, size_t{256}, size_t{4096}, size_t{65536}}) {
    double boost_us = 1e300, c_us = 1e300;
    for (int b = 0; b < o.blocks; ++b) {
      boost_us = std::min(boost_us, time_block(boost_side, bytes, o.rounds, ranks));
      c_us = std::min(c_us, time_block(c_side, bytes, o.rounds, ranks));
    }
    if (rank == 0) std::printf("%-16zu %14.3f %14.3f %11.2fx\n", bytes, boost_us, c_us, c_us / boost_us);
  }
  return 0;
}
