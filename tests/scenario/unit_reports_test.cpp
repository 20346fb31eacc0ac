// The units' reports that the outputs are made from: one for each host and
// switch in the scenario's order, and the same reports after a trip through
// bytes (how a rank's units reach rank 0).
#include "scenario/unit_reports.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include "scenario/scenario.hpp"
#include "scenario/world.hpp"

using namespace rnicsim;
using namespace rnicsim::scenario;

namespace {

UnitReports fat_tree_reports() {
  const Scenario s = parse_scenario("topology: {kind: fat_tree, k: 4}\nworkloads: []\n", "fat_tree_k4.yaml");
  std::ostringstream log;
  World w(s, 1, log);
  return reports(w);
}

}  // namespace

TEST(UnitReports, OneForEachHostAndSwitchInScenarioOrder) {
  const UnitReports r = fat_tree_reports();
  ASSERT_EQ(r.hosts.size(), 16u);
  ASSERT_EQ(r.switches.size(), 20u);
  EXPECT_EQ(r.host_names.front(), "h0");
  EXPECT_EQ(r.host_names.back(), "h15");
  for (const HostReport& h : r.hosts) EXPECT_TRUE(h.counters.has_port);
  for (const SwitchReport& s : r.switches) EXPECT_EQ(s.ports.size(), 4u);  // k ports each
}

TEST(UnitReports, ReportsReadBackFromBytesIntoTheUnitsTheyName) {
  UnitReports from = fat_tree_reports();
  HostReport& h = from.hosts[7];
  h.counters.nic.tx_packets = 1234;
  h.counters.responder.sequence_naks = 5;
  h.counters.completions[2] = 9;
  h.counters.port.counters.paused_time[3] = sim::Duration::ns(4321);
  h.counters.port.has_pfc = true;
  h.counters.port.pfc.xoff[3] = 17;
  h.qps.resize(2);
  h.qps[0].qpn = nic::Qpn(18);
  h.qps[0].state = nic::QpState::Rts;
  h.qps[0].tx_packets = 40;
  h.qps[1].qpn = nic::Qpn(19);
  h.qps[1].rx_packets = 41;
  h.qps[1].cc = {true, 25000000000, 3};
  SwitchReport& s = from.switches[2];
  s.counters.drops[1] = 77;
  s.buffer_peak = 65536;
  s.ports[3].counters.tx_frames = 99;

  UnitReports into = fat_tree_reports();
  const size_t hosts[] = {7}, switches[] = {2};
  read_reports(write_reports(from, hosts, switches), into);
  const HostReport& got = into.hosts[7];
  EXPECT_EQ(got.counters.nic.tx_packets, 1234u);
  EXPECT_EQ(got.counters.responder.sequence_naks, 5u);
  EXPECT_EQ(got.counters.completions[2], 9u);
  EXPECT_EQ(got.counters.port.counters.paused_time[3], sim::Duration::ns(4321));
  EXPECT_EQ(got.counters.port.pfc.xoff[3], 17u);
  ASSERT_EQ(got.qps.size(), 2u);
  EXPECT_EQ(got.qps[0].qpn, nic::Qpn(18));
  EXPECT_EQ(got.qps[0].state, nic::QpState::Rts);
  EXPECT_EQ(got.qps[0].tx_packets, 40u);
  EXPECT_EQ(got.qps[1].rx_packets, 41u);
  EXPECT_TRUE(got.qps[1].cc.limited);
  EXPECT_EQ(got.qps[1].cc.rate_cuts, 3u);
  EXPECT_EQ(into.switches[2].counters.drops[1], 77u);
  EXPECT_EQ(into.switches[2].buffer_peak, 65536u);
  EXPECT_EQ(into.switches[2].ports[3].counters.tx_frames, 99u);
  EXPECT_EQ(into.hosts[6].counters.nic.tx_packets, 0u);  // units not sent stay as they were
  EXPECT_TRUE(into.hosts[6].qps.empty());
}

TEST(UnitReports, BytesThatDoNotParseAreRefused) {
  const UnitReports from = fat_tree_reports();
  const size_t hosts[] = {3};
  const std::vector<std::byte> bytes = write_reports(from, hosts, {});
  UnitReports into = fat_tree_reports();
  EXPECT_THROW(read_reports(std::span(bytes).first(bytes.size() - 1), into), std::runtime_error);
  UnitReports smaller;  // a world without that host
  EXPECT_THROW(read_reports(bytes, smaller), std::runtime_error);
}
