#include "sim/mpi_ranks.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/nonblocking.hpp>
#include <boost/mpi/operations.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace rnicsim::sim {
namespace {
constexpr int kExchangeTag = 7;

// Posts the pieces of `bytes` to or from `peer` (isend or irecv): pieces of one
// tag between one pair arrive in the order they were sent (MPI's non-overtaking).
template <class Byte, class Post>
void post_pieces(Byte* bytes, size_t size, std::vector<boost::mpi::request>& requests, Post post) {
  for (size_t at = 0; at < size; at += MpiRanks::kPieceBytes) {
    const auto n = static_cast<int>(std::min(MpiRanks::kPieceBytes, size - at));
    requests.push_back(post(bytes + at, n));
  }
}
}  // namespace

void MpiRanks::exchange(std::span<const std::span<const std::byte>> to, std::vector<std::vector<std::byte>>& in,
                        std::span<int64_t> least) {
  const auto n = static_cast<size_t>(world_.size());
  const auto me = static_cast<size_t>(world_.rank());
  if (to.size() != n) throw std::invalid_argument("an exchange takes one part for each rank");
  // To each rank: the size of its part, then this rank's `least`.
  const size_t head = 1 + least.size();
  std::vector<int64_t> heads_out(head * n), heads_in(head * n);
  for (size_t r = 0; r < n; ++r) {
    heads_out[head * r] = r == me ? 0 : static_cast<int64_t>(to[r].size());
    std::copy(least.begin(), least.end(), heads_out.begin() + static_cast<ptrdiff_t>(head * r + 1));
  }
  boost::mpi::all_to_all(world_, heads_out.data(), static_cast<int>(head), heads_in.data());
  std::vector<uint64_t> sizes_in(n);
  for (size_t r = 0; r < n; ++r) {
    sizes_in[r] = static_cast<uint64_t>(heads_in[head * r]);
    for (size_t k = 0; k < least.size(); ++k) least[k] = std::min(least[k], heads_in[head * r + 1 + k]);
  }
  in.resize(n);
  std::vector<boost::mpi::request> requests;
  for (size_t r = 0; r < n; ++r) {
    if (r == me) continue;
    in[r].resize(sizes_in[r]);
    const int peer = static_cast<int>(r);
    post_pieces(reinterpret_cast<char*>(in[r].data()), in[r].size(), requests,
                [&](char* p, int count) { return world_.irecv(peer, kExchangeTag, p, count); });
    post_pieces(reinterpret_cast<const char*>(to[r].data()), to[r].size(), requests,
                [&](const char* p, int count) { return world_.isend(peer, kExchangeTag, p, count); });
  }
  boost::mpi::wait_all(requests.begin(), requests.end());
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
