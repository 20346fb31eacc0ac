// perftest's --out_json document of a workload: which keys each kind of test
// has, as perftest writes them, and its units.
#include <gtest/gtest.h>

#include "scenario/outputs.hpp"

namespace rnicsim::scenario {
namespace {

WorkloadSummary workload(std::string op, std::string pattern) {
  WorkloadSummary w;
  w.name = "w";
  w.op = std::move(op);
  w.pattern = std::move(pattern);
  w.device = "mlx5_0";
  w.link_type = "Ethernet";
  w.tx_depth = 128;
  w.cq_mod = 100;
  w.mtu = 1024;
  w.outs = 16;
  PerftestRow r;
  r.bytes = 65536;
  r.iterations = 1000;
  r.bw_peak_gbps = r.bw_avg_gbps = 8 * 1.048576;  // 2^20 * 1000 bytes a second: 1000 MB/sec
  r.msg_rate_mpps = 0.016;
  r.t_min_us = 1.5;
  r.t_p999_us = 9.25;
  w.rows = {PerftestRow{}, r};
  return w;
}

std::vector<std::string> keys(const sim::Json& j) {
  std::vector<std::string> k;
  for (const auto& [key, value] : j.items()) k.push_back(key);
  return k;
}

TEST(PerftestJson, WriteBandwidthHasPerftestsKeysInItsOrder) {
  const sim::Json j = perftest_out_json(workload("write", "bw"));
  EXPECT_EQ(keys(j), (std::vector<std::string>{"test_info", "results"}));
  EXPECT_EQ(keys(j["test_info"]),
            (std::vector<std::string>{"test", "Dual_port", "Device", "Number_of_qps", "Transport_type",
                                      "Connection_type", "Using_SRQ", "PCIe_relax_order", "ibv_wr_API", "TX_depth",
                                      "CQ_Moderation", "Mtu", "Link_type", "GID_index", "Max_inline_data",
                                      "rdma_cm_QPs", "Data_ex_method"}));
  EXPECT_EQ(j["test_info"]["test"], "RDMA_Write_BW_Test");
  EXPECT_EQ(j["test_info"]["Device"], "mlx5_0");
  EXPECT_EQ(j["test_info"]["Mtu"], 1024);
  // The last size's row, BW in MB/sec of 2^20 bytes.
  EXPECT_EQ(keys(j["results"]), (std::vector<std::string>{"MsgSize", "n_iterations", "BW_peak", "BW_average", "MsgRate"}));
  EXPECT_EQ(j["results"]["MsgSize"], 65536);
  EXPECT_DOUBLE_EQ(j["results"]["BW_average"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(j["results"]["MsgRate"].get<double>(), 0.016);
}

TEST(PerftestJson, LatencyReadsInfinibandAndTheCmChangeTheirLines) {
  WorkloadSummary w = workload("read", "lat");
  w.link_type = "IB";
  w.rdma_cm = true;
  w.post_list = 1;
  const sim::Json j = perftest_out_json(w);
  const sim::Json& info = j["test_info"];
  EXPECT_EQ(info["test"], "RDMA_Read_Latency_Test");
  EXPECT_FALSE(info.contains("CQ_Moderation"));  // bandwidth tests only
  EXPECT_FALSE(info.contains("GID_index"));      // RoCE only
  EXPECT_FALSE(info.contains("Max_inline_data"));
  EXPECT_EQ(info["Outstand_reads"], 16);  // reads and atomics
  EXPECT_EQ(info["rdma_cm_QPs"], "ON");
  EXPECT_EQ(info["Data_ex_method"], "rdma_cm");
  EXPECT_EQ(keys(j["results"]), (std::vector<std::string>{"MsgSize", "n_iterations", "t_min", "t_max", "t_typical",
                                                          "t_avg", "t_stdev", "percentile_99", "percentile_99.9"}));
  EXPECT_EQ(j["results"]["t_min"], 1.5);  // usec
  EXPECT_EQ(j["results"]["percentile_99.9"], 9.25);
}

TEST(PerftestJson, PostListAndWriteLatencyAsPerftestSaysThem) {
  WorkloadSummary bw = workload("write", "bw");
  bw.post_list = 4;
  const sim::Json info = perftest_out_json(bw)["test_info"];
  EXPECT_EQ(info["test"], "RDMA_Write_Post_List_BW_Test");
  EXPECT_EQ(info["Post_List"], 4);
  EXPECT_EQ(keys(info)[10], "Post_List");  // after TX_depth
  EXPECT_EQ(info["PCIe_relax_order"], "ON");
  // ib_write_lat polls the data it receives: no relaxed ordering.
  EXPECT_EQ(perftest_out_json(workload("write", "lat"))["test_info"]["PCIe_relax_order"], "OFF");
  EXPECT_EQ(perftest_out_json(workload("fetch_add", "bw"))["test_info"]["test"], "Atomic_FETCH_AND_ADD_BW_Test");
}

TEST(PerftestJson, FlowsAndUnfinishedWorkloadsHaveNone) {
  WorkloadSummary flows = workload("mixed", "flows");
  flows.rows.clear();
  EXPECT_TRUE(perftest_out_json(flows).is_null());
}

}  // namespace
}  // namespace rnicsim::scenario
