#include "sim/mpi_ranks.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/operations.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace rnicsim::sim {
namespace {
constexpr int kExchangeTag = 7;
}  // namespace

// Pieces of one tag between one pair arrive in the order they were sent
// (MPI's non-overtaking).
void MpiRanks::post(std::byte* recv_into, const std::byte* send_from, size_t size, int peer) {
  for (size_t at = 0; at < size; at += kPieceBytes) {
    const auto n = static_cast<int>(std::min(kPieceBytes, size - at));
    requests_.emplace_back();
    if (recv_into != nullptr)
      MPI_Irecv(recv_into + at, n, MPI_BYTE, peer, kExchangeTag, world_, &requests_.back());
    else
      MPI_Isend(send_from + at, n, MPI_BYTE, peer, kExchangeTag, world_, &requests_.back());
  }
}

void MpiRanks::Heads::fill(std::span<const std::span<const std::byte>> to, std::span<const int64_t> least,
                           size_t me) {
  const size_t n = to.size();
  width = static_cast<int>(1 + least.size());
  out.assign(n * static_cast<size_t>(width), 0);
  in.assign(out.size(), 0);
  for (size_t r = 0; r < n; ++r) {
    auto at = out.begin() + static_cast<ptrdiff_t>(r) * width;
    *at = r == me ? 0 : static_cast<int64_t>(to[r].size());
    std::copy(least.begin(), least.end(), at + 1);
  }
}

size_t MpiRanks::Heads::take(size_t r, std::span<int64_t> least) const {
  const auto at = in.begin() + static_cast<ptrdiff_t>(r) * width;
  for (size_t k = 0; k < least.size(); ++k) least[k] = std::min(least[k], at[static_cast<ptrdiff_t>(1 + k)]);
  return static_cast<size_t>(*at);
}

void MpiRanks::exchange(std::span<const std::span<const std::byte>> to, std::vector<std::vector<std::byte>>& in,
                        std::span<int64_t> least) {
  const auto n = static_cast<size_t>(world_.size());
  const auto me = static_cast<size_t>(world_.rank());
  if (to.size() != n) throw std::invalid_argument("an exchange takes one part for each rank");
  heads_.fill(to, least, me);
  MPI_Alltoall(heads_.out.data(), heads_.width, MPI_INT64_T, heads_.in.data(), heads_.width, MPI_INT64_T, world_);
  in.resize(n);
  requests_.clear();
  for (size_t r = 0; r < n; ++r) {
    const size_t size = heads_.take(r, least);
    if (r == me) continue;
    in[r].resize(size);
    post(in[r].data(), nullptr, in[r].size(), static_cast<int>(r));
    post(nullptr, to[r].data(), to[r].size(), static_cast<int>(r));
  }
  MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  in[me].assign(to[me].begin(), to[me].end());
}

int64_t MpiRanks::min(int64_t value) { return boost::mpi::all_reduce(world_, value, boost::mpi::minimum<int64_t>()); }

int64_t MpiRanks::max(int64_t value) { return boost::mpi::all_reduce(world_, value, boost::mpi::maximum<int64_t>()); }

void MpiRanks::abort(std::string_view why) {
  std::fprintf(stderr, "rnicsim: rank %d of %d: %.*s\n", world_.rank(), world_.size(), static_cast<int>(why.size()),
               why.data());
  std::fflush(stderr);
  world_.abort(1);
  std::_Exit(1);  // MPI_Abort does not return; should it, the rank still ends
}

}  // namespace rnicsim::sim
