// The ranks of one run: the processes that hold a world's partitions between
// them. The windowed engine (partitions.hpp) needs three things across ranks
// at a window's end: what each rank's partitions sent the partitions of the
// others (crossing records, plain bytes: fabric/crossing.hpp), the earliest
// pending time of all (where the next window starts) and agreement on a
// stage's end; and, when one rank fails, an end for all, never a hang. A run
// without MPI is one rank (SingleRank); mpi_ranks.hpp carries the same over MPI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace rnicsim::sim {

class RankLink {
public:
  virtual ~RankLink() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // Sends `to[r]` to rank r for every r (to.size() == ranks(); this rank's own
  // part comes back as it is) and puts what each rank sent this one in
  // `from`, by rank, reusing each part's storage (a run exchanges every
  // window); and, in the same round, replaces each of `least` with the
  // least of every rank's (every rank gives as many). Every rank calls it at
  // the same point of the run.
  virtual void exchange(std::span<const std::span<const std::byte>> to, std::vector<std::vector<std::byte>>& from,
                        std::span<int64_t> least) = 0;
  void exchange(std::span<const std::span<const std::byte>> to, std::vector<std::vector<std::byte>>& from) {
    exchange(to, from, {});
  }
  std::vector<std::vector<std::byte>> exchange(std::span<const std::span<const std::byte>> to) {
    std::vector<std::vector<std::byte>> from;
    exchange(to, from);
    return from;
  }
  // The least and the greatest of every rank's `value`.
  virtual int64_t min(int64_t value) = 0;
  virtual int64_t max(int64_t value) = 0;
  // Ends the run on every rank: `why`, with this rank's number, on stderr,
  // then every process exits non-zero. Never returns.
  [[noreturn]] virtual void abort(std::string_view why) = 0;
};

// The one rank of a run in one process.
class SingleRank final : public RankLink {
public:
  int rank() const override { return 0; }
  int ranks() const override { return 1; }
  using RankLink::exchange;
  void exchange(std::span<const std::span<const std::byte>> to, std::vector<std::vector<std::byte>>& from,
                std::span<int64_t>) override {
    if (to.size() != 1) throw std::invalid_argument("an exchange of one rank takes one part");
    from.resize(1);
    from[0].assign(to[0].begin(), to[0].end());
  }
  int64_t min(int64_t value) override { return value; }
  int64_t max(int64_t value) override { return value; }
  [[noreturn]] void abort(std::string_view why) override;
};

}  // namespace rnicsim::sim
