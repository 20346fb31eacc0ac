// The host side of posting (scenario/host_cores.hpp): a core's time per WQE
// and per MMIO line bounds the rate of a core, more processes (cores) lift it,
// a post list saves MMIO time per WQE, and a lone WQE's latency grows by what
// its post costs. With no costs nothing changes.
#include <gtest/gtest.h>

#include <string>

#include "quiet.hpp"
#include "scenario/runner.hpp"

namespace rnicsim::scenario {
namespace {

std::string scenario(const std::string& host, const std::string& workload) {
  return "seed: 3\n"
         "hosts: [{name: a}, {name: b}]\n"
         "links: [{between: [a, b], rate: 100Gbps, delay: 110ns}]\n"
         "nic: {preset: cx5_100g_roce}\n" +
         (host.empty() ? std::string() : "host: " + host + "\n") + "workloads:\n  - " + workload + "\n";
}

WorkloadSummary run(const std::string& host, const std::string& workload) {
  const Summary s = run_text(scenario(host, workload), "t.yaml", quiet());
  EXPECT_EQ(s.workloads.size(), 1u);
  const WorkloadSummary& w = s.workloads.at(0);
  EXPECT_TRUE(w.completed) << w.failure;
  EXPECT_TRUE(w.data_verified);
  return w;
}

const std::string kSmallWrites = "{name: w, op: write, pattern: bw, from: a, to: b, size: 64, iterations: 4000";

const std::string kFree = "{post_cost: 0ns, mmio_cost: 0ns}";

TEST(HostCores, FreePostingLeavesTheNicAlone) {
  const WorkloadSummary w = run(kFree, kSmallWrites + "}");
  EXPECT_GT(w.mmsg_per_s, 17.0) << "one QP at its processing unit's rate";
  EXPECT_EQ(w.post_cpu_busy, 0.0);
}

TEST(HostCores, OneCoreBoundsTheRateAndSaysSo) {
  // 80 ns per WQE and 10 ns per line; a lone 64-byte WQE goes by BlueFlame in
  // two lines: 100 ns a WQE, 10 M/s at most, below what the NIC does (18 M/s).
  const WorkloadSummary w = run("{post_cost: 80ns, mmio_cost: 10ns}", kSmallWrites + "}");
  EXPECT_LT(w.mmsg_per_s, 10.01);
  EXPECT_GT(w.mmsg_per_s, 9.5);
  EXPECT_GT(w.post_cpu_busy, 0.95) << "the core posted all the time";
}

// As mlx5 writes it, a 64-byte WRITE's WQE is one line (16 + 16 + 16 bytes):
// 80 + 10 ns a WQE, where its two-line ring slot costs 100.
TEST(HostCores, ABlueflameOfTheWqesOwnSizeIsOneLineForASmallWrite) {
  const WorkloadSummary slot = run("{post_cost: 80ns, mmio_cost: 10ns}", kSmallWrites + "}");
  const WorkloadSummary own = run("{post_cost: 80ns, mmio_cost: 10ns, blueflame_size: wqe}", kSmallWrites + "}");
  EXPECT_LT(slot.mmsg_per_s, 10.01);
  EXPECT_LT(own.mmsg_per_s, 1e3 / 90 + 0.01);
  EXPECT_GT(own.mmsg_per_s, 1e3 / 90 - 0.5);
  EXPECT_GT(own.post_cpu_busy, 0.95);
}

TEST(HostCores, TheDefaultsCost85nsForALoneSmallWrite) {
  const WorkloadSummary w = run("", kSmallWrites + "}");
  EXPECT_NEAR(w.mmsg_per_s, 1e3 / 85, 0.3);
  EXPECT_GT(w.post_cpu_busy, 0.95);
}

TEST(HostCores, ProcessesOnMoreCoresLiftTheRate) {
  const std::string costs = "{post_cost: 80ns, mmio_cost: 10ns}";
  const WorkloadSummary one = run(costs, kSmallWrites + ", qps: 4}");
  const WorkloadSummary four = run(costs, kSmallWrites + ", qps: 4, processes: 4}");
  EXPECT_LT(one.mmsg_per_s, 10.01);
  EXPECT_GT(four.mmsg_per_s, 3.5 * one.mmsg_per_s);
  EXPECT_GT(one.post_cpu_busy, 0.95);
  EXPECT_GT(four.post_cpu_busy, 0.9) << "each core still posts all the time, at four times the rate";
}

TEST(HostCores, APostListSavesTheMmioOfEachWqe) {
  // 10 ns to build a WQE, 60 ns a line: a lone WQE costs 130 ns (two lines by
  // BlueFlame), one of a list of 16 costs 10 + 60 / 16 ns (one doorbell).
  const std::string costs = "{post_cost: 10ns, mmio_cost: 60ns}";
  const WorkloadSummary alone = run(costs, kSmallWrites + "}");
  const WorkloadSummary listed = run(costs, kSmallWrites + ", post_list: 16}");
  EXPECT_LT(alone.mmsg_per_s, 1e3 / 130 + 0.01);
  EXPECT_GT(listed.mmsg_per_s, 1.5 * alone.mmsg_per_s);
  EXPECT_LT(listed.post_cpu_busy, 0.5) << "the NIC, not the core, bounds the list";
}

TEST(HostCores, ALoneWqesLatencyGrowsByItsPost) {
  // An 8-byte inline WRITE: its WQE is two lines by BlueFlame, so each side's
  // post takes 40 + 2 x 10 ns before its doorbell leaves.
  const std::string lat = "{name: l, op: write, pattern: lat, from: a, to: b, size: 8, iterations: 200}";
  const WorkloadSummary free = run(kFree, lat);
  const WorkloadSummary costly = run("{post_cost: 40ns, mmio_cost: 10ns}", lat);
  ASSERT_EQ(free.rows.size(), 1u);
  ASSERT_EQ(costly.rows.size(), 1u);
  EXPECT_NEAR(costly.rows[0].t_typical_us - free.rows[0].t_typical_us, 0.060, 0.0015);
}

TEST(HostCores, ProcessesAreCheckedAgainstTheQps) {
  EXPECT_THROW(run_text(scenario("", kSmallWrites + ", qps: 2, processes: 3}"), "t.yaml", quiet()), std::exception);
}

}  // namespace
}  // namespace rnicsim::scenario
