// The ranks over MPI, run under mpirun (ctest: sim_mpi_ranks, 3 ranks; and 2).
// Every rank runs every test in the same order, and no test leaves a
// collective early (EXPECT, not ASSERT, before one), so a failure fails the
// job, never hangs it. With --abort-on-rank R, rank R ends the run while the
// others wait in an exchange; with --throw-on-rank R, an event of rank R's
// partition throws in a windowed run (ctest: sim_mpi_rank_failure).
#include <gtest/gtest.h>

#include <boost/mpi/environment.hpp>

#include <cstdlib>
#include <cstring>

#include "../sim/ring_world.hpp"
#include "sim/mpi_ranks.hpp"
#include "sim/partitions.hpp"

namespace rnicsim::sim {
namespace {

// What rank `from` sends rank `to` in round `round`: a length and bytes that
// name all three, some parts empty.
std::vector<std::byte> part(int from, int to, int round) {
  const size_t length = static_cast<size_t>((from * 7 + to * 3 + round) % 5) * 1000;
  std::vector<std::byte> bytes(length);
  for (size_t i = 0; i < length; ++i) bytes[i] = std::byte(static_cast<uint8_t>(from * 31 + to * 7 + round + i));
  return bytes;
}

std::vector<std::vector<std::byte>> exchange_round(RankLink& ranks, int round) {
  std::vector<std::vector<std::byte>> out;
  for (int r = 0; r < ranks.ranks(); ++r) out.push_back(part(ranks.rank(), r, round));
  const std::vector<std::span<const std::byte>> views(out.begin(), out.end());
  return ranks.exchange(views);
}

TEST(MpiRanks, EachRankGetsWhatEveryRankSentIt) {
  MpiRanks ranks;
  EXPECT_GE(ranks.ranks(), 2) << "run under mpirun -np 2 or more";
  for (int round = 0; round < 50; ++round) {
    const auto got = exchange_round(ranks, round);
    EXPECT_EQ(got.size(), static_cast<size_t>(ranks.ranks()));
    for (int r = 0; r < ranks.ranks() && r < static_cast<int>(got.size()); ++r)
      EXPECT_EQ(got[r], part(r, ranks.rank(), round)) << "from rank " << r << " in round " << round;
  }
}

TEST(MpiRanks, ALargePartArrivesWhole) {
  MpiRanks ranks;
  std::vector<std::vector<std::byte>> out(ranks.ranks());
  const int next = (ranks.rank() + 1) % ranks.ranks();
  out[next].resize(3 << 20);
  for (size_t i = 0; i < out[next].size(); ++i) out[next][i] = std::byte(static_cast<uint8_t>(i * 13 + ranks.rank()));
  const std::vector<std::span<const std::byte>> views(out.begin(), out.end());
  const auto got = ranks.exchange(views);
  const int previous = (ranks.rank() + ranks.ranks() - 1) % ranks.ranks();
  EXPECT_EQ(got[previous].size(), size_t{3} << 20);
  bool same = got[previous].size() == (size_t{3} << 20);
  for (size_t i = 0; same && i < got[previous].size(); ++i)
    same = got[previous][i] == std::byte(static_cast<uint8_t>(i * 13 + previous));
  EXPECT_TRUE(same) << "the bytes from rank " << previous;
}

TEST(MpiRanks, EveryRankAgreesOnTheLeastAndTheGreatest) {
  MpiRanks ranks;
  const int64_t mine = 1000 - 10 * ranks.rank();
  EXPECT_EQ(ranks.min(mine), 1000 - 10 * (ranks.ranks() - 1));
  EXPECT_EQ(ranks.max(mine), 1000);
  EXPECT_EQ(ranks.min(INT64_MAX), INT64_MAX) << "nothing pending anywhere";
}

TEST(MpiRanks, AnExchangeTakesOnePartForEachRank) {
  MpiRanks ranks;
  const std::span<const std::byte> one[1] = {};
  EXPECT_THROW(ranks.exchange(one), std::invalid_argument);  // before any message: no rank waits
}

// The windowed engine across ranks: each rank's actors see what they see when
// one scheduler runs the whole ring, for any partition and thread count (a
// rank may hold no partition), with the outside and with stages.
TEST(MpiPartitions, EveryRankSeesWhatOneSchedulerGives) {
  MpiRanks ranks;
  const Time end = Time::zero() + Duration::ns(600);
  for (const bool outside : {false, true})
    for (const bool stages : {false, true}) {
      const Ring::Options o{.outside = outside, .stages = stages};
      const auto one = Ring(1, 1, o).run(end);
      for (const uint32_t partitions : {1u, 2u, 3u, 5u})
        for (const unsigned threads : {1u, 2u}) {
          Ring ring(partitions, threads, o, &ranks);
          const auto logs = ring.run(end);
          for (uint32_t a = 1; a <= Ring::kActors; ++a) {
            const bool mine = ring.held(a % partitions);
            EXPECT_EQ(logs[a], mine ? one[a] : std::vector<std::string>{})
                << "actor " << a << ", " << partitions << " partitions on " << threads << " threads, outside " << outside
                << ", stages " << stages;
            EXPECT_EQ(ranks.max(mine), 1) << "actor " << a << " held by no rank";
          }
          EXPECT_EQ(ring.engine().ended(), stages);
        }
    }
}

// A run taken up again across ranks is the run in one go.
TEST(MpiPartitions, ARunTakenUpAgainIsTheRunInOneGo) {
  MpiRanks ranks;
  const auto whole = Ring(1, 1).run(Time::zero() + Duration::ns(600));
  Ring ring(4, 2, {}, &ranks);
  ring.run(Time::zero() + Duration::ns(237));
  const auto logs = ring.run(Time::zero() + Duration::ns(600));
  for (uint32_t a = 1; a <= Ring::kActors; ++a)
    if (ring.held(a % 4)) {
      EXPECT_EQ(logs[a], whole[a]) << "actor " << a;
    }
}

// --throw-on-rank R: an event of rank R's partition throws mid-run; every
// rank is in the windowed run.
int throw_on_rank(int rank) {
  MpiRanks ranks;
  Scheduler mine;
  int ticks = 0;
  Event tick([&] {
    if (++ticks < 1000000) mine.schedule_in(tick, Duration::us(1));
  });
  Event bad([] { throw std::runtime_error("broken model"); });
  mine.schedule(tick, Time::zero());
  if (ranks.rank() == rank) mine.schedule(bad, Time::zero() + Duration::us(10));
  Partitions engine(Duration::us(1), 1);
  engine.set_ranks(ranks, static_cast<size_t>(ranks.ranks()));
  auto none = [](size_t) { return std::span<const std::byte>(); };
  engine.add({&mine, [] {}, [] {}}, {none, [](size_t, std::span<const std::byte>) {}, [] { return Time::max(); }});
  engine.run_until(Time::max());
  return 0;  // not reached: the throw ends every rank
}

// --abort-on-rank R: rank R ends the run; the others wait in an exchange.
int abort_on_rank(int rank) {
  MpiRanks ranks;
  if (ranks.rank() == rank) ranks.abort("asked to fail");
  std::vector<std::vector<std::byte>> out(ranks.ranks());
  const std::vector<std::span<const std::byte>> views(out.begin(), out.end());
  ranks.exchange(views);
  return 0;  // not reached: rank R never joins the exchange
}

}  // namespace
}  // namespace rnicsim::sim

int main(int argc, char** argv) {
  // The windowed engine calls MPI from whichever of its threads ends a phase,
  // one at a time.
  boost::mpi::environment env(argc, argv, boost::mpi::threading::serialized);
  if (argc == 3 && std::strcmp(argv[1], "--abort-on-rank") == 0) return rnicsim::sim::abort_on_rank(std::atoi(argv[2]));
  if (argc == 3 && std::strcmp(argv[1], "--throw-on-rank") == 0) return rnicsim::sim::throw_on_rank(std::atoi(argv[2]));
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
