// Loss recovery end to end, as Guo et al. (SIGCOMM 2016) describe it: with
// every 256th packet of a stream of 4 MiB WRITEs dropped, go-back-N keeps more
// than half of the line rate, while go-back-0 (each loss sends the whole
// message again from its first packet) can never bring a message of 1024
// packets through and livelocks. And the QP's timeout and retry count come
// from the workload.
#include <gtest/gtest.h>

#include <string>

#include "scenario/runner.hpp"

namespace rnicsim::scenario {
namespace {

RunOptions quiet() {
  RunOptions o;
  o.quiet = true;
  return o;
}

std::string periodic_drops(bool go_back_0) {
  return std::string("seed: 5\n"
                     "duration: 10ms\n"
                     "hosts: [{name: a}, {name: b}]\n"
                     "links: [{between: [a, b], rate: 100Gbps, delay: 1us}]\n"
                     "nic: {preset: cx5_100g_roce, loss_recovery: ") +
         (go_back_0 ? "go_back_0" : "go_back_n") +
         "}\n"
         "faults: [{host: a, direction: tx, action: drop, every: 256}]\n"
         "workloads:\n"
         "  - {name: w, op: write, pattern: bw, from: a, to: b, size: 4MiB, count: 16, tx_depth: 4}\n";
}

TEST(LossRecovery, GoBackNKeepsMoreThanHalfTheLineRateWithEvery256thPacketDropped) {
  const Summary s = run_text(periodic_drops(false), "gbn.yaml", quiet());
  ASSERT_EQ(s.workloads.size(), 1u);
  const WorkloadSummary& w = s.workloads[0];
  EXPECT_TRUE(w.completed) << w.failure;
  EXPECT_EQ(w.messages, 16u);
  EXPECT_TRUE(w.data_verified);
  EXPECT_GT(w.gbps, 50.0);
}

TEST(LossRecovery, GoBackZeroLivelocksWithEvery256thPacketDropped) {
  const Summary s = run_text(periodic_drops(true), "gb0.yaml", quiet());
  ASSERT_EQ(s.workloads.size(), 1u);
  const WorkloadSummary& w = s.workloads[0];
  EXPECT_FALSE(w.completed);
  EXPECT_EQ(w.messages, 0u) << "no 4 MiB message gets through in 10 ms";
  EXPECT_LT(w.gbps, 1.0);
}

// A lost tail waits for the local ACK timeout: 4.096 us x 2^timeout. With
// timeout 10 (4.2 ms) the one lost packet costs the run about 4 ms; with the
// default 14 (67 ms) about 67 ms; with retry_cnt 0 the QP fails at once.
std::string lost_tail(const std::string& keys) {
  return "seed: 5\n"
         "hosts: [{name: a}, {name: b}]\n"
         "links: [{between: [a, b], rate: 100Gbps, delay: 1us}]\n"
         "nic: {preset: cx5_100g_roce}\n"
         "faults: [{host: a, direction: tx, action: drop, opcode: RC_RDMA_WRITE_ONLY, nth: 1}]\n"
         "workloads:\n"
         "  - {name: w, op: write, pattern: bw, from: a, to: b, size: 4KiB, count: 1, tx_depth: 1" +
         keys + "}\n";
}

TEST(LossRecovery, TheWorkloadsTimeoutSetsHowLongALostTailWaits) {
  const Summary fast = run_text(lost_tail(", timeout: 10"), "t10.yaml", quiet());
  const Summary slow = run_text(lost_tail(""), "t14.yaml", quiet());
  ASSERT_TRUE(fast.workloads.at(0).completed) << fast.workloads.at(0).failure;
  ASSERT_TRUE(slow.workloads.at(0).completed) << slow.workloads.at(0).failure;
  const double t10 = 4.096e-6 * (1 << 10), t14 = 4.096e-6 * (1 << 14);
  EXPECT_NEAR(fast.sim_seconds, t10, 0.1 * t10);
  EXPECT_NEAR(slow.sim_seconds, t14, 0.1 * t14);
}

TEST(LossRecovery, RetryCountZeroFailsTheQpOnTheFirstTimeout) {
  const Summary s = run_text(lost_tail(", timeout: 8, retry_cnt: 0"), "r0.yaml", quiet());
  const WorkloadSummary& w = s.workloads.at(0);
  EXPECT_FALSE(w.completed);
  EXPECT_NE(w.failure.find("transport retry counter exceeded"), std::string::npos) << w.failure;
}

}  // namespace
}  // namespace rnicsim::scenario
