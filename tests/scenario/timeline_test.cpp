// The WQE timeline: exact microsecond text, the trace-event writer's JSON, the
// filters' parsing, and a small run's work requests with their stages in order.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scenario/runner.hpp"
#include "scenario/timeline.hpp"
#include "sim/output.hpp"
#include "sim/trace_events.hpp"

namespace rnicsim::scenario {
namespace {

using sim::Duration;
using sim::Time;

TEST(TraceEvents, MicrosecondsAreExactDecimals) {
  EXPECT_EQ(sim::microseconds_text(Time::zero()), "0");
  EXPECT_EQ(sim::microseconds_text(Time::from_ps(1)), "0.000001");
  EXPECT_EQ(sim::microseconds_text(Time::from_ps(1'500'000)), "1.5");
  EXPECT_EQ(sim::microseconds_text(Time::from_ps(10'000'000)), "10");
  EXPECT_EQ(sim::microseconds_text(Time::from_ps(123'456'789'012)), "123456.789012");
}

TEST(TraceEvents, WriterStreamsAValidDocument) {
  std::ostringstream out;
  {
    sim::TraceEventWriter w(out);
    w.process_name(1, "alice \"NIC\"", 1);
    w.thread_name(1, 2, "QP 0x000011", 17 * 64);
    w.complete(1, 2, "RDMA WRITE", "wr", Time::from_ps(1'000'000), Time::from_ps(3'500'001),
               sim::TraceArgs().add_hex("wr_id", 0x1f).add("psn", 7));
    w.instant(1, 2, "retransmit", "qp", Time::from_ps(2'000'000), sim::TraceArgs().add("psn", 7));
    EXPECT_EQ(w.events(), 6u);
  }  // the destructor finishes the document
  const auto doc = sim::Json::parse(out.str());
  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  const auto& ev = doc["traceEvents"];
  ASSERT_EQ(ev.size(), 6u);
  EXPECT_EQ(ev[0]["ph"], "M");
  EXPECT_EQ(ev[0]["args"]["name"], "alice \"NIC\"");
  EXPECT_EQ(ev[1]["name"], "process_sort_index");
  EXPECT_EQ(ev[3]["args"]["sort_index"], 17 * 64);
  EXPECT_EQ(ev[4]["ph"], "X");
  EXPECT_DOUBLE_EQ(ev[4]["ts"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(ev[4]["dur"].get<double>(), 2.500001);
  EXPECT_EQ(ev[4]["args"]["wr_id"], "0x1f");
  EXPECT_EQ(ev[5]["ph"], "i");
  EXPECT_EQ(ev[5]["s"], "t");
  EXPECT_EQ(ev[5]["pid"], 1);
  EXPECT_EQ(ev[5]["tid"], 2);
}

TEST(TimelineFilter, QpListsTakeDecimalHexAndHosts) {
  const auto qps = parse_timeline_qps("17,0x12,bob:0X13");
  ASSERT_TRUE(qps);
  ASSERT_EQ(qps->size(), 3u);
  EXPECT_EQ((*qps)[0].qpn, nic::Qpn(17));
  EXPECT_EQ((*qps)[1].qpn, nic::Qpn(0x12));
  EXPECT_EQ((*qps)[2].host, "bob");
  EXPECT_EQ((*qps)[2].qpn, nic::Qpn(0x13));
  for (const char* bad : {"", "x", "17,", ",17", ":17", "bob:", "0x1000000", "-1", "1.5"})
    EXPECT_FALSE(parse_timeline_qps(bad)) << bad;
  TimelineFilter f;
  f.qps = *qps;
  EXPECT_TRUE(f.keeps_qp("alice", nic::Qpn(17)));
  EXPECT_TRUE(f.keeps_qp("bob", nic::Qpn(0x13)));
  EXPECT_FALSE(f.keeps_qp("alice", nic::Qpn(0x13)));
  EXPECT_TRUE(TimelineFilter().keeps_qp("anyone", nic::Qpn(5)));
}

TEST(TimelineFilter, WindowsTakeTimesWithUnits) {
  const auto w = parse_timeline_window("10us:2ms");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->start, Time::zero() + Duration::us(10));
  EXPECT_EQ(w->end, Time::zero() + Duration::ms(2));
  EXPECT_TRUE(w->keeps(Time::zero() + Duration::us(10), Time::zero() + Duration::us(11)));
  EXPECT_FALSE(w->keeps(Time::zero() + Duration::us(9), Time::zero() + Duration::us(11)));
  EXPECT_EQ(parse_timeline_window(":5us")->start, Time::zero());
  EXPECT_EQ(parse_timeline_window("5us:")->end, Time::max());
  for (const char* bad : {"", "10us", "2ms:10us", "5us:5us", "abc:1us", "1us:x"})
    EXPECT_FALSE(parse_timeline_window(bad)) << bad;
}

// Two signaled WRITEs on one QP, their WQEs fetched (no BlueFlame): each a
// span on a WR track with its stages in order, inside it.
TEST(Timeline, AWorkRequestsStagesNestInItsSpan) {
  const std::string yaml =
      "name: t\nseed: 1\nhosts: [{name: a}, {name: b}]\nhost: {blueflame: false}\n"
      "links: [{between: [a, b], rate: 100Gbps, delay: 1us}]\n"
      "workloads: [{name: w, op: write, pattern: bw, from: a, to: b, size: 8KiB, count: 2, tx_depth: 1}]\n";
  const auto path = std::filesystem::temp_directory_path() / ("timeline_test_" + std::to_string(getpid()) + ".json");
  RunOptions o;
  o.quiet = true;
  o.timeline.path = path.string();
  ASSERT_TRUE(run_text(yaml, "t.yaml", o).completed);
  std::ifstream in(path);
  const auto doc = sim::Json::parse(in);
  std::filesystem::remove(path);
  std::vector<sim::Json> wrs, stages;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("cat", "") == "wr") wrs.push_back(e);
    if (e.value("cat", "") == "stage") stages.push_back(e);
  }
  ASSERT_GE(wrs.size(), 2u);
  const auto& wr = wrs.front();
  EXPECT_EQ(wr["name"], "RDMA WRITE");
  EXPECT_EQ(wr["args"]["status"], "success");
  std::vector<std::string> names;
  double cursor = wr["ts"].get<double>();
  const double end = cursor + wr["dur"].get<double>();
  for (const auto& s : stages) {
    if (s["tid"] != wr["tid"] || s["ts"].get<double>() > end) continue;
    if (s["name"] == "payload DMA read") continue;  // nested in transmit
    names.push_back(s["name"]);
    EXPECT_GE(s["ts"].get<double>() + 1e-9, cursor) << s.dump();
    cursor = s["ts"].get<double>() + s["dur"].get<double>();
    EXPECT_LE(cursor, end + 1e-9) << s.dump();
  }
  const std::vector<std::string> expected = {"doorbell", "WQE fetch", "transmit", "ACK wait", "CQE write"};
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + std::min<size_t>(5, names.size())), expected);
}

}  // namespace
}  // namespace rnicsim::scenario
