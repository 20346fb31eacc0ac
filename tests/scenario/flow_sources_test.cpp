// Flow sources of a flows workload: ns-3 flow files, Poisson arrivals with sizes
// from a CDF file, and random permutations.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "scenario/flow_sources.hpp"
#include "scenario/scenario.hpp"

using namespace rnicsim;
using namespace rnicsim::scenario;

namespace {

class FlowSources : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rnicsim_flow_sources_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  Scenario parse(const std::string& yaml) { return parse_scenario(yaml, (dir_ / "s.yaml").string()); }
  std::string error_of(const std::string& yaml) {
    try {
      parse(yaml);
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "no error";
  }
  std::filesystem::path dir_;
};

std::string hosts(int n) {
  std::string h = "hosts: [";
  for (int i = 0; i < n; ++i) h += (i ? ", {name: h" : "{name: h") + std::to_string(i) + "}";
  return h + "]\ntopology: {kind: single_switch, rate: 100Gbps}\n";
}
const std::string kFourHosts = hosts(4);

TEST_F(FlowSources, Ns3FlowFileLoadsWithPriorities) {
  write("flow.txt", "3\n0 1 3 100 4096 2.0\n2 3 0 100 1000000 2.000001\n  3 0 5 200 1 0\n");
  for (const std::string flows : {"flow.txt", "{file: flow.txt, format: ns3}", "{file: flow.txt}"}) {
    const Scenario s = parse(kFourHosts + "workloads: [{pattern: flows, flows: " + flows + "}]\n");
    const auto& f = s.workloads[0].flows;
    ASSERT_EQ(f.size(), 3u) << flows;
    EXPECT_EQ(f[0].from, "h0");
    EXPECT_EQ(f[0].to, "h1");
    EXPECT_EQ(f[0].priority, 3);
    EXPECT_EQ(f[0].size, 4096u);
    EXPECT_EQ(f[0].op, WorkloadOp::Write);
    EXPECT_EQ(f[0].start, sim::Duration::s(2));
    EXPECT_EQ(f[1].start, sim::Duration::s(2) + sim::Duration::us(1));
    EXPECT_EQ(f[2].from, "h3");
    EXPECT_EQ(f[2].priority, 5);
  }
}

TEST_F(FlowSources, Ns3FlowFileErrorsNameTheLineAndColumn) {
  const std::string f = (dir_ / "flow.txt").string();
  auto err = [&](const std::string& text) {
    write("flow.txt", text);
    return error_of(kFourHosts + "workloads: [{pattern: flows, flows: {file: flow.txt, format: ns3}}]\n");
  };
  EXPECT_EQ(err("2\n0 1 3 100 10 0\n0 4 3 100 10 0\n").rfind(f + ":3:3: dst (a host index) must be between 0 and 3", 0), 0u)
      << err("2\n0 1 3 100 10 0\n0 4 3 100 10 0\n");
  EXPECT_EQ(err("1\n0 1 8 100 10 0\n").rfind(f + ":2:5: priority must be between 0 and 7", 0), 0u);
  EXPECT_EQ(err("1\n0 1 3 100 10 soon\n").rfind(f + ":2:14: expected start_time", 0), 0u);
  EXPECT_EQ(err("1\n0 1 3 100 10\n").rfind(f + ":2:1: expected 6 fields", 0), 0u);
  EXPECT_EQ(err("3\n0 1 3 100 10 0\n").rfind(f + ":3:1: the first line announces 3 flows, the file has 1", 0), 0u)
      << err("3\n0 1 3 100 10 0\n");
  EXPECT_EQ(err("1\n0 1 3 100 10 0\n1 0 3 100 10 0\n").rfind(f + ":3:1: more flows than the 1", 0), 0u);
  EXPECT_EQ(err("1\n1 1 3 100 10 0\n").rfind(f + ":2:3: src and dst must be different", 0), 0u);
  EXPECT_EQ(err("1\n0 1 3 100 0 0\n").rfind(f + ":2:11: size (bytes) must be between 1", 0), 0u);
}

TEST_F(FlowSources, CsvAndInlineFlowsTakeAPriority) {
  write("f.csv", "from,to,op,size,priority\nh0,h1,write,4KiB,3\nh1,h0,send,1KiB,0\n");
  const Scenario s = parse(kFourHosts + "workloads: [{pattern: flows, priority: 5, flows: f.csv}, {pattern: flows, "
                                        "flows: [{from: h0, to: h2, size: 1, priority: 6}, {from: h0, to: h3, size: 1}]}]\n");
  EXPECT_EQ(s.workloads[0].flows[0].priority, 3);
  EXPECT_EQ(s.workloads[0].flows[1].priority, 0);
  EXPECT_EQ(s.workloads[1].flows[0].priority, 6);
  EXPECT_FALSE(s.workloads[1].flows[1].priority) << "the workload's";
  write("f.csv", "from,to,op,size,priority\nh0,h1,write,4KiB,9\n");
  EXPECT_EQ(error_of(kFourHosts + "workloads: [{pattern: flows, flows: f.csv}]\n")
                .rfind((dir_ / "f.csv").string() + ":2:18: priority must be between 0 and 7", 0),
            0u)
      << error_of(kFourHosts + "workloads: [{pattern: flows, flows: f.csv}]\n");
}

TEST_F(FlowSources, CdfPercentOrFractionInterpolatesAndErrs) {
  const SizeCdf pct = SizeCdf::read(write("p.txt", "# size cdf\n100 0\n1100 50\n2100 100\n"));
  const SizeCdf frac = SizeCdf::read(write("f.txt", "100 0\n1100 0.5\n2100 1\n"));
  EXPECT_DOUBLE_EQ(pct.mean(), 0.5 * 600 + 0.5 * 1600);
  EXPECT_DOUBLE_EQ(frac.mean(), pct.mean());
  // A point mass at the first size.
  EXPECT_DOUBLE_EQ(SizeCdf::read(write("m.txt", "10 50\n30 100\n")).mean(), 0.5 * 10 + 0.5 * 20);
  auto err = [&](const std::string& text) -> std::string {
    const std::string p = write("bad.txt", text);
    try {
      SizeCdf::read(p);
    } catch (const ScenarioError& e) {
      return std::string(e.what()).substr(p.size());
    }
    return "no error";
  };
  EXPECT_EQ(err("10 0\n5 50\n20 100\n").rfind(":2:1: sizes must not decrease", 0), 0u);
  EXPECT_EQ(err("10 0\n20 50\n30 40\n40 100\n").rfind(":3:4: cumulative probabilities must not decrease", 0), 0u);
  EXPECT_EQ(err("10 0\n20 90\n").rfind(":2:4: the last cumulative probability must be 100", 0), 0u);
  EXPECT_EQ(err("10 0 1\n").rfind(":1:6: expected 'size cumulative_probability'", 0), 0u);
  EXPECT_EQ(err("# nothing\n").rfind(":1:1: the CDF file lists no points", 0), 0u);
}

TEST_F(FlowSources, PoissonSizesFollowTheCdfAndArrivalsTheLoad) {
  const std::string cdf = write("sizes.txt", "100 0\n10000 40\n100000 80\n1000000 100\n");
  const double cdf_mean = SizeCdf::read(cdf).mean();
  const std::string w = "workloads: [{name: p, pattern: flows, flows: {generate: poisson, load: 0.5, cdf: sizes.txt, "
                        "hosts: all, count: 20000}}]\n";
  const Scenario s = parse(kFourHosts + w);
  const auto& f = s.workloads[0].flows;
  ASSERT_EQ(f.size(), 20000u);
  double bytes = 0;
  std::set<std::string> sources;
  for (const FlowSpec& x : f) {
    bytes += static_cast<double>(x.size);
    EXPECT_NE(x.from, x.to);
    sources.insert(x.from);
  }
  EXPECT_EQ(sources.size(), 4u);
  EXPECT_NEAR(bytes / f.size() / cdf_mean, 1.0, 0.03);
  // Offered load: bytes over the span of arrivals / (4 hosts x 100 Gb/s).
  const double span_s = (f.back().start - f.front().start).microseconds() / 1e6;
  EXPECT_NEAR(bytes * 8 / span_s / (4 * 100e9), 0.5, 0.03);
  // Same seed, same flows; another seed, others.
  const Scenario again = parse(kFourHosts + w);
  for (size_t i = 0; i < f.size(); ++i) {
    ASSERT_EQ(again.workloads[0].flows[i].size, f[i].size);
    ASSERT_EQ(again.workloads[0].flows[i].start, f[i].start);
    ASSERT_EQ(again.workloads[0].flows[i].to, f[i].to);
  }
  const Scenario other = parse("seed: 2\n" + kFourHosts + w);
  size_t same = 0;
  for (size_t i = 0; i < f.size(); ++i) same += other.workloads[0].flows[i].size == f[i].size;
  EXPECT_LT(same, f.size() / 2);
  // duration: arrivals stop there.
  const Scenario d = parse(kFourHosts + "workloads: [{pattern: flows, flows: {generate: poisson, load: 0.3, "
                                        "cdf: sizes.txt, hosts: [h0, h1], duration: 1ms}}]\n");
  ASSERT_GT(d.workloads[0].flows.size(), 10u);
  for (const FlowSpec& x : d.workloads[0].flows) EXPECT_LT(x.start, sim::Duration::ms(1));
  EXPECT_NE(error_of(kFourHosts + "workloads: [{pattern: flows, flows: {generate: poisson, load: 0.5, cdf: sizes.txt}}]\n")
                .find("one of 'count' or 'duration'"),
            std::string::npos);
  EXPECT_NE(error_of(kFourHosts + "workloads: [{pattern: flows, flows: {generate: poisson, load: 1.5, cdf: sizes.txt, "
                                  "count: 1}}]\n")
                .find("s.yaml:3:63: expected load"),
            std::string::npos)
      << error_of(kFourHosts + "workloads: [{pattern: flows, flows: {generate: poisson, load: 1.5, cdf: sizes.txt, count: 1}}]\n");
}

TEST_F(FlowSources, PermutationIsADerangement) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Scenario s = parse("seed: " + std::to_string(seed) + "\n" + hosts(9) +
                             "workloads: [{pattern: flows, flows: {generate: permutation, size: 64KiB}}]\n");
    const auto& f = s.workloads[0].flows;
    ASSERT_EQ(f.size(), 9u);
    std::set<std::string> from, to;
    for (const FlowSpec& x : f) {
      EXPECT_NE(x.from, x.to);
      from.insert(x.from);
      to.insert(x.to);
      EXPECT_EQ(x.size, 65536u);
    }
    EXPECT_EQ(from.size(), 9u) << "every host sends once";
    EXPECT_EQ(to.size(), 9u) << "every host receives once";
  }
  sim::RandomStream r(7, "t");
  std::set<std::vector<size_t>> seen;
  for (int i = 0; i < 400; ++i) seen.insert(random_derangement(3, r));
  EXPECT_EQ(seen.size(), 2u) << "both derangements of 3";
  EXPECT_NE(error_of(kFourHosts + "workloads: [{pattern: flows, flows: {generate: permutation, size: 1KiB, hosts: [h0]}}]\n")
                .find("at least two hosts"),
            std::string::npos);
}

}  // namespace
