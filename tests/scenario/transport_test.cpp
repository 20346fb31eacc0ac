// perftest's -c: the workloads' QPs as RC, UC or UD. UC writes and sends with
// no ACKs; UD sends datagrams of one packet into receive buffers that start
// with the 40-byte GRH. The data arrives whole either way; the loader refuses
// what a transport cannot carry.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "quiet.hpp"
#include "scenario/runner.hpp"
#include "scenario/scenario.hpp"

namespace rnicsim::scenario {
namespace {

const std::string kPair =
    "seed: 3\nhosts: [{name: a}, {name: b}]\nlinks: [{between: [a, b], rate: 100Gbps, delay: 1us}]\n"
    "nic: {preset: cx5_100g_roce}\n";

Summary run_workload(const std::string& workload, const std::string& dir = "") {
  RunOptions o = quiet();
  o.out_dir = dir;
  return run_text(kPair + "workloads:\n  - " + workload + "\n", "t.yaml", o);
}

TEST(Transport, UdSendsDatagramsThatArriveWholeAfterTheirGrh) {
  for (const char* pattern : {"lat", "bw"}) {
    const Summary s = run_workload(std::string("{name: w, op: send, pattern: ") + pattern +
                                   ", from: a, to: b, size: 1KiB, connection: UD, iterations: 300}");
    const WorkloadSummary& w = s.workloads.at(0);
    ASSERT_TRUE(w.completed) << pattern << ": " << w.failure;
    EXPECT_TRUE(w.data_verified) << pattern << ": the payload follows the 40-byte GRH";
    EXPECT_EQ(w.connection, "UD");
    EXPECT_EQ(s.retransmissions, 0u);
    EXPECT_EQ(w.counts.receives_completed, w.counts.receives_expected) << pattern;
  }
}

// A UD message is one packet: a larger size becomes the path MTU, as perftest does.
TEST(Transport, UdMessagesAreCutToThePathMtu) {
  const Summary s = run_workload("{name: w, op: send, pattern: bw, from: a, to: b, connection: UD, iterations: 100}");
  const WorkloadSummary& w = s.workloads.at(0);
  ASSERT_TRUE(w.completed) << w.failure;
  EXPECT_EQ(w.size, 4096u) << "64 KiB by default, the preset's 4 KiB path MTU for UD";
  EXPECT_EQ(s.data_packets, 100u) << "one packet a message";
}

// UC: WRITEs and SENDs with no ACK coming back; the data arrives whole.
TEST(Transport, UcWritesAndSendsWithoutAcks) {
  const std::string dir = (std::filesystem::temp_directory_path() / ("rnicsim_uc_" + std::to_string(::getpid()))).string();
  for (const char* op : {"write", "send"}) {
    const Summary s = run_workload(std::string("{name: w, op: ") + op +
                                       ", pattern: bw, from: a, to: b, size: 16KiB, connection: UC, iterations: 200}",
                                   dir);
    const WorkloadSummary& w = s.workloads.at(0);
    ASSERT_TRUE(w.completed) << op << ": " << w.failure;
    EXPECT_TRUE(w.data_verified) << op;
    EXPECT_EQ(w.connection, "UC");
    EXPECT_EQ(s.data_packets, 200u * 4) << op << ": 16 KiB in 4 KiB packets";
    std::ifstream in(dir + "/stats.json");
    const auto counters = nlohmann::json::parse(in)["counters"];
    EXPECT_EQ(counters["a.nic.tx_packets"], 800) << op;
    EXPECT_EQ(counters["b.nic.tx_packets"], 0) << op << ": nothing comes back";
  }
  std::filesystem::remove_all(dir);
}

TEST(Transport, ALoaderRefusesWhatATransportCannotCarry) {
  const std::string head = kPair + "workloads:\n  - {name: w, pattern: bw, from: a, to: b, ";
  for (const std::string bad : {"op: read, connection: UC}", "op: fetch_add, connection: UC}",
                                "op: write, connection: UD}", "op: send, connection: XRC}",
                                "op: send, connect: rdma_cm, connection: UD}"}) {
    EXPECT_THROW(parse_scenario(head + bad + "\n", "t.yaml"), ScenarioError) << bad;
  }
  EXPECT_NO_THROW(parse_scenario(head + "op: write_imm, connection: UC}\n", "t.yaml"));
  EXPECT_NO_THROW(parse_scenario(head + "op: send_imm, connection: UD}\n", "t.yaml"));
}

}  // namespace
}  // namespace rnicsim::scenario
