// Loss recovery end to end, as Guo et al. (SIGCOMM 2016) describe it: with
// every 256th packet of a stream of 4 MiB WRITEs dropped, go-back-N keeps more
// than half of the line rate, while go-back-0 (each loss sends the whole
// message again from its first packet) can never bring a message of 1024
// packets through and livelocks; selective repeat, which resends only what was
// lost, beats go-back-N. The QP's timeout and retry count come from the
// workload. A lost NAK, or a lost resend, is NAKed again within microseconds.
#include <gtest/gtest.h>

#include <string>

#include "quiet.hpp"
#include "scenario/runner.hpp"

namespace rnicsim::scenario {
namespace {

std::string periodic_drops(const std::string& mode) {
  return std::string("seed: 5\n"
                     "duration: 10ms\n"
                     "hosts: [{name: a}, {name: b}]\n"
                     "links: [{between: [a, b], rate: 100Gbps, delay: 1us}]\n"
                     "nic: {preset: cx5_100g_roce, loss_recovery: ") +
         mode +
         "}\n"
         "faults: [{host: a, direction: tx, action: drop, every: 256}]\n"
         "workloads:\n"
         "  - {name: w, op: write, pattern: bw, from: a, to: b, size: 4MiB, count: 16, tx_depth: 4}\n";
}

TEST(LossRecovery, GoBackNKeepsMoreThanHalfTheLineRateWithEvery256thPacketDropped) {
  const Summary s = run_text(periodic_drops("go_back_n"), "gbn.yaml", quiet());
  ASSERT_EQ(s.workloads.size(), 1u);
  const WorkloadSummary& w = s.workloads[0];
  EXPECT_TRUE(w.completed) << w.failure;
  EXPECT_EQ(w.messages, 16u);
  EXPECT_TRUE(w.data_verified);
  EXPECT_GT(w.gbps, 50.0);
}

TEST(LossRecovery, GoBackZeroLivelocksWithEvery256thPacketDropped) {
  const Summary s = run_text(periodic_drops("go_back_0"), "gb0.yaml", quiet());
  ASSERT_EQ(s.workloads.size(), 1u);
  const WorkloadSummary& w = s.workloads[0];
  EXPECT_FALSE(w.completed);
  EXPECT_EQ(w.messages, 0u) << "no 4 MiB message gets through in 10 ms";
  EXPECT_LT(w.gbps, 1.0);
}

// Selective repeat keeps the packets behind a gap and asks for the lost one
// alone, so each loss costs one packet, not a round trip of them.
TEST(LossRecovery, SelectiveRepeatBeatsGoBackNWithEvery256thPacketDropped) {
  const Summary gbn = run_text(periodic_drops("go_back_n"), "gbn.yaml", quiet());
  const Summary sr = run_text(periodic_drops("selective_repeat"), "sr.yaml", quiet());
  const WorkloadSummary& w = sr.workloads.at(0);
  EXPECT_TRUE(w.completed) << w.failure;
  EXPECT_EQ(w.messages, 16u);
  EXPECT_TRUE(w.data_verified);
  EXPECT_GT(w.gbps, gbn.workloads.at(0).gbps * 1.02);
  EXPECT_LE(sr.retransmissions, sr.drops + 1) << "one resend per loss";
  EXPECT_GT(gbn.retransmissions, 5 * sr.retransmissions);
}

// A stream of 1 MiB WRITEs with PSN 700 dropped, and then `more` (the NAK for
// it, or the resend of it) dropped as well.
std::string lost_recovery(const std::string& more, const std::string& nic_keys = "") {
  return "seed: 5\n"
         "hosts: [{name: a}, {name: b}]\n"
         "links: [{between: [a, b], rate: 100Gbps, delay: 1us}]\n"
         "nic: {preset: cx5_100g_roce" + nic_keys + "}\n"
         "faults:\n"
         "  - {host: a, direction: tx, action: drop, psn: 700" + more + "}\n"
         "workloads:\n"
         "  - {name: w, op: write, pattern: bw, from: a, to: b, size: 1MiB, count: 4, tx_depth: 4}\n";
}

// Without the loss the stream takes about 0.37 ms; each recovery costs a few
// microseconds. Before the NAK timer, a lost NAK waited for the local ACK
// timeout (67 ms), as it still does with the timer off.
TEST(LossRecovery, ALostNakIsNakedAgainWithinMicroseconds) {
  const Summary clean = run_text(lost_recovery(", nth: 2"), "clean.yaml", quiet());  // PSN 700 passes once only
  const std::string nak_lost = "}\n  - {host: b, direction: tx, action: drop, aeth: nak";
  const Summary lost = run_text(lost_recovery(nak_lost), "nak.yaml", quiet());
  ASSERT_TRUE(lost.workloads.at(0).completed) << lost.workloads.at(0).failure;
  EXPECT_TRUE(lost.workloads.at(0).data_verified);
  EXPECT_GT(lost.sim_seconds, clean.sim_seconds);
  EXPECT_LT(lost.sim_seconds, clean.sim_seconds + 50e-6) << "the NAK repeated after 32 us, not the timeout";
  const Summary off = run_text(lost_recovery(nak_lost, ", nak_repeat_interval: 0s"), "off.yaml", quiet());
  ASSERT_TRUE(off.workloads.at(0).completed) << off.workloads.at(0).failure;
  EXPECT_GT(off.sim_seconds, 0.067) << "without the timer the timeout recovers";
}

// The resend of the lost packet is lost too: the packets behind it show the
// responder that the requester went back, and it NAKs again at once.
TEST(LossRecovery, ALostResendIsNakedAgainWithinMicroseconds) {
  const Summary clean = run_text(lost_recovery(", nth: 2"), "clean.yaml", quiet());
  const Summary lost = run_text(lost_recovery(", count: 2"), "resend.yaml", quiet());
  ASSERT_TRUE(lost.workloads.at(0).completed) << lost.workloads.at(0).failure;
  EXPECT_TRUE(lost.workloads.at(0).data_verified);
  EXPECT_LT(lost.sim_seconds, clean.sim_seconds + 20e-6);
  EXPECT_GT(lost.retransmissions, 0u);
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

TEST(LossRecovery, ATimeoutGivenAsATimeIsWaitedExactly) {
  const Summary s = run_text(lost_tail(", timeout: 100us"), "t100.yaml", quiet());
  ASSERT_TRUE(s.workloads.at(0).completed) << s.workloads.at(0).failure;
  EXPECT_NEAR(s.sim_seconds, 100e-6, 10e-6);
}

TEST(LossRecovery, RetryCountZeroFailsTheQpOnTheFirstTimeout) {
  const Summary s = run_text(lost_tail(", timeout: 8, retry_cnt: 0"), "r0.yaml", quiet());
  const WorkloadSummary& w = s.workloads.at(0);
  EXPECT_FALSE(w.completed);
  EXPECT_NE(w.failure.find("transport retry counter exceeded"), std::string::npos) << w.failure;
}

}  // namespace
}  // namespace rnicsim::scenario
