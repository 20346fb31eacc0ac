// Scenario layer: unit parsing, scenario validation with exact error positions,
// and whole runs of a tiny scenario.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>

#include "scenario/expect.hpp"
#include "scenario/keys.hpp"
#include "scenario/nic_keys.hpp"
#include "scenario/params.hpp"
#include "scenario/partition_map.hpp"
#include "quiet.hpp"
#include "scenario/runner.hpp"
#include "scenario/scenario.hpp"
#include "scenario/sweep.hpp"
#include "scenario/units.hpp"
#include "scenario/workload_keys.hpp"
#include "scenario/world.hpp"

using namespace rnicsim;
using namespace rnicsim::scenario;

namespace {

TEST(Units, Size) {
  EXPECT_EQ(parse_size("4KiB"), 4096u);
  EXPECT_EQ(parse_size("9MB"), 9'000'000u);
  EXPECT_EQ(parse_size("1.5KiB"), 1536u);
  EXPECT_EQ(parse_size("64"), 64u);
  EXPECT_EQ(parse_size("64B"), 64u);
  EXPECT_EQ(parse_size("1GiB"), 1ull << 30);
  EXPECT_EQ(parse_size("2MiB"), 2u << 20);
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("-1"));
  EXPECT_FALSE(parse_size("4XB"));
  EXPECT_FALSE(parse_size("1.5")) << "a fraction of a byte";
  EXPECT_FALSE(parse_size("1.3KiB")) << "1331.2 bytes";
  EXPECT_FALSE(parse_size("KiB"));
  EXPECT_FALSE(parse_size("4kib")) << "units are case-sensitive";
}

TEST(Units, Rate) {
  EXPECT_EQ(parse_rate("100Gbps"), 100'000'000'000u);
  EXPECT_EQ(parse_rate("25Gb/s"), 25'000'000'000u);
  EXPECT_EQ(parse_rate("400G"), 400'000'000'000u);
  EXPECT_EQ(parse_rate("1.5Mbps"), 1'500'000u);
  EXPECT_EQ(parse_rate("10bps"), 10u);
  EXPECT_FALSE(parse_rate("0Gbps")) << "a link needs a rate";
  EXPECT_FALSE(parse_rate(""));
  EXPECT_FALSE(parse_rate("100"));
  EXPECT_FALSE(parse_rate("100GBps"));
  EXPECT_FALSE(parse_rate("-1Gbps"));
}

TEST(Units, Duration) {
  EXPECT_EQ(parse_duration("1us"), sim::Duration::ps(1'000'000));
  EXPECT_EQ(parse_duration("250ns"), sim::Duration::ns(250));
  EXPECT_EQ(parse_duration("1.5us"), sim::Duration::ns(1500));
  EXPECT_EQ(parse_duration("10ms"), sim::Duration::ms(10));
  EXPECT_EQ(parse_duration("2s"), sim::Duration::s(2));
  EXPECT_EQ(parse_duration("100ps"), sim::Duration::ps(100));
  EXPECT_EQ(parse_duration("0ns"), sim::Duration::zero());
  EXPECT_FALSE(parse_duration(""));
  EXPECT_FALSE(parse_duration("1"));
  EXPECT_FALSE(parse_duration("1min"));
  EXPECT_FALSE(parse_duration("-1us"));
}

// Seconds that do not fit in a Duration's picoseconds are refused, never cast.
TEST(Units, DurationFromSeconds) {
  EXPECT_EQ(duration_from_seconds(1.5e-6), sim::Duration::ns(1500));
  EXPECT_EQ(duration_from_seconds(0), sim::Duration::zero());
  EXPECT_EQ(duration_from_seconds(9e6), sim::Duration::s(9'000'000));
  EXPECT_FALSE(duration_from_seconds(9.3e6));
  EXPECT_FALSE(duration_from_seconds(1e300));
  EXPECT_FALSE(duration_from_seconds(-1e300));
  EXPECT_FALSE(duration_from_seconds(std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(duration_from_seconds(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_FALSE(parse_duration("1e300s"));
  EXPECT_FALSE(parse_duration("10000000s"));
}

TEST(Units, Frequency) {
  EXPECT_EQ(parse_frequency("500MHz"), 500'000'000u);
  EXPECT_EQ(parse_frequency("1GHz"), 1'000'000'000u);
  EXPECT_EQ(parse_frequency("1.25GHz"), 1'250'000'000u);
  EXPECT_FALSE(parse_frequency("0MHz"));
  EXPECT_FALSE(parse_frequency("500"));
  EXPECT_FALSE(parse_frequency("500mhz"));
}

// Parses `text`, expecting a ScenarioError at (line, column) whose message contains `needle`.
void expect_error(const std::string& text, int line, int column, const std::string& needle) {
  try {
    parse_scenario(text, "t.yaml");
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.column(), column) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("t.yaml:" + std::to_string(line) + ":" + std::to_string(column) + ":", 0), 0u)
        << e.what();
  }
}

const std::string kHosts =
    "hosts:\n"
    "  - name: a\n"
    "  - name: b\n"
    "links:\n"
    "  - between: [a, b]\n";

// connect: how a perftest workload's QPs connect (perftest's -R: the RDMA CM).
TEST(ParseScenario, ConnectTakesExchangeOrRdmaCm) {
  const std::string w = "workloads:\n  - {op: write, from: a, to: b, connect: ";
  EXPECT_FALSE(parse_scenario(kHosts + w + "exchange}\n", "t.yaml").workloads[0].rdma_cm);
  EXPECT_TRUE(parse_scenario(kHosts + w + "rdma_cm}\n", "t.yaml").workloads[0].rdma_cm);
  EXPECT_FALSE(parse_scenario(kHosts + "workloads:\n  - {op: write, from: a, to: b}\n", "t.yaml").workloads[0].rdma_cm);
  expect_error(kHosts + w + "tcp}\n", 7, 42, "connect must be exchange or rdma_cm, not 'tcp'");
}

// loss_recovery: one of the ways kLossRecoveries names; any other name is an
// error at its value.
TEST(ParseScenario, LossRecoveryIsOneOfItsNames) {
  EXPECT_EQ(parse_scenario(kHosts, "t.yaml").nic.loss_recovery, nic::LossRecovery::GoBackN);
  for (const nic::LossRecoveryRow& row : nic::kLossRecoveries)
    EXPECT_EQ(parse_scenario("nic: {loss_recovery: " + std::string(row.name) + "}\n" + kHosts, "t.yaml").nic.loss_recovery,
              row.mode);
  expect_error("nic: {loss_recovery: go_back_1}\n" + kHosts, 1, 22,
               "must be one of go_back_n, go_back_0, selective_repeat, not 'go_back_1'");
  expect_error("nic: {selective_repeat: 1}\n" + kHosts, 1, 7, "unknown key 'selective_repeat'");
}

TEST(ParseScenario, ValidScenarioReadsEveryField) {
  const Scenario s = parse_scenario(
      "name: tiny\n"
      "seed: 42\n"
      "nic:\n"
      "  mtu: 1024\n"
      "  clock: 1GHz\n"
      "hosts:\n"
      "  - name: a\n"
      "    ip: 10.1.0.1\n"
      "  - name: b\n"
      "links:\n"
      "  - between: [a, b]\n"
      "    rate: 25Gbps\n"
      "    delay: 2us\n"
      "    loss: 0.001\n"
      "workloads:\n"
      "  - name: w\n"
      "    op: write_imm\n"
      "    pattern: lat\n"
      "    from: a\n"
      "    to: b\n"
      "    size: 4KiB\n"
      "    count: 10\n"
      "    start: 5us\n",
      "t.yaml");
  EXPECT_EQ(s.name, "tiny");
  EXPECT_EQ(s.seed, 42u);
  EXPECT_EQ(s.nic.mtu, 1024u);
  EXPECT_EQ(s.path_mtu, 1024u);
  EXPECT_EQ(s.nic.clock_hz, 1'000'000'000u);
  ASSERT_EQ(s.hosts.size(), 2u);
  EXPECT_EQ(s.hosts[0].ip, "10.1.0.1");
  ASSERT_EQ(s.links.size(), 1u);
  EXPECT_EQ(s.links[0].rate_bps, 25'000'000'000u);
  EXPECT_EQ(s.links[0].delay, sim::Duration::us(2));
  EXPECT_DOUBLE_EQ(s.links[0].loss, 0.001);
  ASSERT_EQ(s.workloads.size(), 1u);
  const WorkloadSpec& w = s.workloads[0];
  EXPECT_EQ(w.op, WorkloadOp::WriteImm);
  EXPECT_EQ(w.pattern, WorkloadPattern::Latency);
  EXPECT_EQ(w.size, 4096u);
  EXPECT_EQ(w.iterations, 10u);
  ASSERT_TRUE(w.start.has_value());
  EXPECT_EQ(*w.start, sim::Duration::us(5));
}

TEST(ParseScenario, UnknownKeys) {
  expect_error("name: x\nsedd: 3\n" + kHosts, 2, 1, "unknown key 'sedd'");
  expect_error(kHosts + "    rat: 10Gbps\n", 6, 5, "unknown key 'rat'");
  expect_error("hosts:\n  - name: a\n    addr: 1.2.3.4\n", 3, 5, "unknown key 'addr'");
  expect_error("nic:\n  mtu: 1024\n  speed: 3\n" + kHosts, 3, 3, "unknown key 'speed'");
}

TEST(ParseScenario, WrongTypesAndValues) {
  expect_error("seed: many\n" + kHosts, 1, 7, "whole number");
  expect_error("seed: [1, 2]\n" + kHosts, 1, 7, "single value");
  expect_error("hosts: a\n", 1, 8, "list");
  expect_error(kHosts + "    rate: fast\n", 6, 11, "link rate");
  expect_error(kHosts + "    delay: 1\n", 6, 12, "link delay");
  expect_error(kHosts + "    loss: 1.5\n", 6, 11, "probability");
  expect_error("nic:\n  mtu: 1500\n" + kHosts, 2, 8, "IB MTU");
  expect_error(kHosts + "workloads:\n  - op: reed\n    from: a\n    to: b\n", 7, 9, "op");
  expect_error(kHosts + "workloads:\n  - op: write\n    from: a\n    to: b\n    size: 1.5\n", 10, 11, "size");
  expect_error(kHosts + "workloads:\n  - op: write\n    from: a\n    to: b\n    count: 0\n", 10, 12, "count");
  expect_error(kHosts + "workloads:\n  - op: atomic\n    from: a\n    to: b\n    size: 16\n", 10, 11, "atomics are 8 bytes");
}

TEST(ParseScenario, BadReferences) {
  expect_error("hosts:\n  - name: a\n  - name: b\nlinks:\n  - between: [a, c]\n", 5, 18, "unknown host 'c'");
  expect_error(kHosts + "workloads:\n  - op: write\n    from: a\n    to: z\n", 9, 9, "unknown host 'z'");
  expect_error(kHosts + "workloads:\n  - op: write\n    from: a\n    to: a\n", 9, 9, "different hosts");
  expect_error("hosts:\n  - name: a\n  - name: a\n", 3, 11, "duplicate host name");
  expect_error(
      "hosts:\n  - name: a\n  - name: b\n  - name: c\nlinks:\n  - between: [a, b]\n"
      "workloads:\n  - op: send\n    from: a\n    to: c\n",
      10, 9, "no link joins");
  expect_error(
      kHosts + "workloads:\n  - name: w\n    op: send\n    from: a\n    to: b\n  - name: w\n    op: send\n"
               "    from: a\n    to: b\n",
      11, 11, "duplicate workload name");
}

TEST(ParseScenario, EmptyAndSyntaxErrors) {
  expect_error("", 1, 1, "empty scenario");
  expect_error("hosts: [a, b\n", 2, 1, "YAML syntax error");
  expect_error("name: x\n", 1, 1, "missing 'hosts'");
}

// Two hosts on a 100 Gb/s, 1 us link; a WRITE bandwidth and a SEND latency test.
std::string tiny_scenario(uint64_t seed) {
  return "name: tiny\n"
         "seed: " + std::to_string(seed) + "\n"
         "hosts:\n"
         "  - name: a\n"
         "  - name: b\n"
         "links:\n"
         "  - between: [a, b]\n"
         "    rate: 100Gbps\n"
         "    delay: 1us\n"
         "workloads:\n"
         "  - name: wbw\n"
         "    op: write\n"
         "    pattern: bw\n"
         "    from: a\n"
         "    to: b\n"
         "    size: 64KiB\n"
         "    count: 10\n"
         "    tx_depth: 4\n"
         "  - name: slat\n"
         "    op: send\n"
         "    pattern: lat\n"
         "    from: a\n"
         "    to: b\n"
         "    size: 64\n"
         "    count: 10\n";
}

TEST(Run, TinyScenarioCompletesWithPhysicalNumbers) {
  const Summary s = run_text(tiny_scenario(3), "tiny.yaml", quiet());
  EXPECT_TRUE(s.completed);
  EXPECT_EQ(s.seed, 3u);
  ASSERT_EQ(s.workloads.size(), 2u);
  const WorkloadSummary& bw = s.workloads[0];
  const WorkloadSummary& lat = s.workloads[1];
  for (const WorkloadSummary* w : {&bw, &lat}) {
    EXPECT_TRUE(w->completed) << w->name << ": " << w->failure;
    EXPECT_TRUE(w->data_verified) << w->name;
    EXPECT_EQ(w->messages, 10u) << w->name;
    EXPECT_TRUE(w->failure.empty()) << w->failure;
  }
  EXPECT_EQ(bw.bytes, 10u * 65536);
  EXPECT_EQ(bw.op, "write");
  EXPECT_EQ(bw.pattern, "bw");
  EXPECT_EQ(lat.op, "send");
  EXPECT_EQ(lat.pattern, "lat");
  // Goodput is positive and below the line rate (headers and a round trip of start-up).
  EXPECT_GT(bw.gbps, 1.0);
  EXPECT_LT(bw.gbps, 100.0);
  // 640 KiB cannot cross a 100 Gb/s link faster than the wire allows, plus one propagation delay.
  EXPECT_GE(bw.seconds, 10.0 * 65536 * 8 / 100e9 + 1e-6);
  // Half a round trip of a 64-byte SEND: at least the one-way propagation plus
  // the serialization of its frame (64 bytes of payload + headers + wire overhead),
  // and well under 10 us.
  const double min_half_rtt_ps = 1e6 + sim::serialization_time(64 + 58 + 24, 100'000'000'000).picoseconds();
  EXPECT_GT(static_cast<double>(lat.lat_p50_ps), min_half_rtt_ps);
  EXPECT_GE(lat.lat_min_ps, static_cast<uint64_t>(min_half_rtt_ps));
  EXPECT_LT(lat.lat_p50_ps, 10'000'000u);
  EXPECT_LE(lat.lat_min_ps, lat.lat_p50_ps);
  EXPECT_LE(lat.lat_p50_ps, lat.lat_p99_ps);
  EXPECT_LE(lat.lat_p99_ps, lat.lat_max_ps);
  // A bw WRITE's per-message latency includes a full round trip.
  EXPECT_GT(bw.lat_p50_ps, 2'000'000u);
  EXPECT_EQ(s.messages, 20u);
  EXPECT_EQ(s.retransmissions, 0u);
  EXPECT_EQ(s.drops, 0u);
  EXPECT_EQ(s.rx_errors, 0u);
  // 64 KiB at path MTU 4096 is 16 packets per message; the pings and pongs add 20.
  EXPECT_EQ(s.data_packets, 10u * 16 + 20);
  EXPECT_GT(s.packets, s.data_packets) << "ACKs are on the wire too";
  EXPECT_GT(s.sim_seconds, 0.0);
  EXPECT_GT(s.events, 0u);
}

void expect_same(const Summary& a, const Summary& b) {
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.messages, b.messages);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.packets, b.packets);
  EXPECT_EQ(a.data_packets, b.data_packets);
  EXPECT_EQ(a.retransmissions, b.retransmissions);
  EXPECT_EQ(a.drops, b.drops);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.sim_seconds, b.sim_seconds);
  EXPECT_EQ(a.completed, b.completed);
  ASSERT_EQ(a.workloads.size(), b.workloads.size());
  for (size_t i = 0; i < a.workloads.size(); ++i) {
    const WorkloadSummary& x = a.workloads[i];
    const WorkloadSummary& y = b.workloads[i];
    EXPECT_EQ(x.messages, y.messages);
    EXPECT_EQ(x.seconds, y.seconds);
    EXPECT_EQ(x.gbps, y.gbps);
    EXPECT_EQ(x.lat_p50_ps, y.lat_p50_ps);
    EXPECT_EQ(x.lat_p99_ps, y.lat_p99_ps);
    EXPECT_EQ(x.lat_min_ps, y.lat_min_ps);
    EXPECT_EQ(x.lat_max_ps, y.lat_max_ps);
    EXPECT_EQ(x.lat_mean_ps, y.lat_mean_ps);
    EXPECT_EQ(x.data_verified, y.data_verified);
  }
}

TEST(Run, SameSeedSameSummary) {
  const Summary a = run_text(tiny_scenario(9), "tiny.yaml", quiet());
  const Summary b = run_text(tiny_scenario(9), "tiny.yaml", quiet());
  expect_same(a, b);
}

TEST(Run, SameSeedSameSummaryWithLoss) {
  std::string text = tiny_scenario(4);
  text.replace(text.find("    delay: 1us\n"), 14, "    delay: 1us\n    loss: 0.02\n");
  const Summary a = run_text(text, "lossy.yaml", quiet());
  const Summary b = run_text(text, "lossy.yaml", quiet());
  expect_same(a, b);
  EXPECT_TRUE(a.completed) << (a.workloads.empty() ? "" : a.workloads[0].failure);
  EXPECT_GT(a.drops, 0u);
  EXPECT_GT(a.retransmissions, 0u);
  for (const auto& w : a.workloads) EXPECT_TRUE(w.data_verified) << w.name;
  // A different seed draws different losses.
  RunOptions other = quiet();
  other.seed = 5;
  const Summary c = run_text(text, "lossy.yaml", other);
  EXPECT_EQ(c.seed, 5u);
  EXPECT_NE(c.events, a.events);
}

// The second workload begins where the first finished, and the run ends
// where the second finished: no gap, nothing run past it.
TEST(Run, SequentialWorkloadsFollowEachOtherAndTheRunEndsWithTheLast) {
  const Summary s = run_text(tiny_scenario(2), "tiny.yaml", quiet());
  ASSERT_EQ(s.workloads.size(), 2u);
  ASSERT_TRUE(s.completed);
  const double ps = 1e-12;
  EXPECT_NEAR(s.sim_seconds, s.workloads[0].seconds + s.workloads[1].seconds, ps);
  EXPECT_GT(s.workloads[1].seconds, 0.0);
}

// A flows workload whose host meets an error fails with that host's error;
// its other hosts stop a control delay (the smallest link delay) later
// instead of running their flows to the end.
TEST(Run, AFlowsHostThatFailsStopsTheOthers) {
  std::string text =
      "name: failing\n"
      "duration: 100ms\n"
      "hosts: [{name: a}, {name: b}, {name: c}, {name: d}]\n"
      "links:\n"
      "  - {between: [a, b], rate: 100Gbps, delay: 1us, down: [{from: 5us, to: 1s}]}\n"
      "  - {between: [c, d], rate: 100Gbps, delay: 100ns}\n"
      "workloads:\n"
      "  - name: two\n"
      "    pattern: flows\n"
      "    timeout: 1\n"
      "    retry_cnt: 1\n"
      "    tx_depth: 1\n"
      "    flows:\n"
      "      - {from: a, to: b, op: write, size: 1MiB}\n";
  for (int i = 0; i < 100; ++i) text += "      - {from: c, to: d, op: write, size: 64KiB}\n";  // 5.3 us each
  const Summary s = run_text(text, "failing.yaml", quiet());
  ASSERT_EQ(s.workloads.size(), 1u);
  const WorkloadSummary& w = s.workloads[0];
  EXPECT_FALSE(w.completed);
  EXPECT_NE(w.failure.find("completion error on a (flow 0)"), std::string::npos) << w.failure;
  ASSERT_EQ(w.flows.size(), 101u);
  EXPECT_TRUE(w.flows[1].done);
  EXPECT_FALSE(w.flows[100].done);
  EXPECT_LT(s.sim_seconds, 100e-6) << "c stopped, not 530 us into its flows";
  EXPECT_GT(s.sim_seconds, 5e-6);
  // Hosts on two partitions: the word to stop crosses between them (World::tell).
  const Summary cut = run_text("partitions: 2\n" + text, "failing.yaml", quiet());
  EXPECT_EQ(cut.workloads[0].failure, w.failure);
  EXPECT_EQ(cut.sim_seconds, s.sim_seconds);
  EXPECT_EQ(cut.workloads[0].messages, w.messages);
  // A shorter link elsewhere shortens the control delay, and with it the run.
  std::string shorter = text;
  shorter.replace(shorter.find("{name: d}]"), 10, "{name: d}, {name: e}, {name: f}]");
  shorter.replace(shorter.find("workloads:"), 0, "  - {between: [e, f], rate: 100Gbps, delay: 50ns}\n");
  const Summary t = run_text(shorter, "failing.yaml", quiet());
  EXPECT_EQ(t.workloads[0].failure, w.failure);
  EXPECT_NEAR(s.sim_seconds - t.sim_seconds, 50e-9, 1e-12) << s.sim_seconds << " " << t.sim_seconds;
}

TEST(Run, RunOptionSeedOverridesTheScenarioSeed) {
  RunOptions o = quiet();
  o.seed = 77;
  const Summary s = run_text(tiny_scenario(1), "tiny.yaml", o);
  EXPECT_EQ(s.seed, 77u);
  EXPECT_TRUE(s.completed);
}

TEST(Run, DurationCutsARunShort) {
  std::string text = tiny_scenario(1);
  text.replace(text.find("hosts:"), 0, "duration: 5us\n");
  text.replace(text.find("count: 10\n    tx_depth"), 9, "count: 100000");
  const Summary s = run_text(text, "short.yaml", quiet());
  EXPECT_FALSE(s.completed);
  ASSERT_EQ(s.workloads.size(), 2u);
  EXPECT_FALSE(s.workloads[0].completed);
  EXPECT_LT(s.workloads[0].messages, 100000u);
  EXPECT_LE(s.sim_seconds, 5e-6 + 1e-12);
}

// A flows workload the duration cuts off reports the bytes its receiver placed by
// then and the rate over the time it ran, not 0 Gb/s.
TEST(Run, FlowsCutByDurationReportWhatTheyDelivered) {
  const std::string text =
      "name: cut\n"
      "duration: 200us\n"
      "hosts: [{name: a}, {name: b}]\n"
      "links: [{between: [a, b], rate: 100Gbps, delay: 1us}]\n"
      "workloads:\n"
      "  - name: big\n"
      "    pattern: flows\n"
      "    flows: [{from: a, to: b, op: write, size: 4MiB}, {from: a, to: b, op: write, size: 4MiB}]\n";
  const Summary s = run_text(text, "cut.yaml", quiet());
  EXPECT_FALSE(s.completed);
  ASSERT_EQ(s.workloads.size(), 1u);
  const WorkloadSummary& w = s.workloads[0];
  EXPECT_FALSE(w.completed);
  EXPECT_EQ(w.messages, 0u);  // no flow finished
  EXPECT_GT(w.bytes, 1'000'000u);
  EXPECT_LT(w.bytes, 4u << 20);
  EXPECT_NEAR(w.seconds, 200e-6, 1e-9);
  EXPECT_NEAR(w.gbps, static_cast<double>(w.bytes) * 8 / w.seconds / 1e9, 1e-9);
  EXPECT_GT(w.gbps, 40);
  EXPECT_LT(w.gbps, 100);
  EXPECT_EQ(w.failure.rfind("did not finish: " + std::to_string(w.bytes) + " bytes delivered in 200.000 us", 0), 0u)
      << w.failure;
  std::ostringstream table;
  print_summary(s, table);
  char gbps[32];
  std::snprintf(gbps, sizeof gbps, " %.2f ", w.gbps);
  EXPECT_NE(table.str().find(gbps), std::string::npos) << table.str();
}

// --- Default host addresses ---------------------------------------------------------

std::string text_of(const packet::Ipv6Addr& ip, bool v4) {
  char b[INET6_ADDRSTRLEN] = {};
  if (v4) inet_ntop(AF_INET, ip.data() + 12, b, sizeof b); else inet_ntop(AF_INET6, ip.data(), b, sizeof b);
  return b;
}

// The first 254 hosts keep the addresses they always had (captures stay the same);
// past them, every host still gets an address of its own.
TEST(World, DefaultAddressesStayDistinctPastOneSubnet) {
  for (const LinkLayer layer : {LinkLayer::RoceV2Ipv4, LinkLayer::RoceV2Ipv6}) {
    const bool v4 = layer == LinkLayer::RoceV2Ipv4;
    std::set<std::string> seen;
    for (size_t i = 0; i < 70'000; ++i) {
      const std::string t = text_of(default_host_ip(i, layer), v4);
      EXPECT_TRUE(seen.insert(t).second) << t;
      if (v4) {
        EXPECT_TRUE(!t.ends_with(".0") && !t.ends_with(".255")) << t;
      }
      if (i < 254 || (!v4 && i < 9999)) {
        EXPECT_EQ(t, (v4 ? "10.0.0." : "fd00::") + std::to_string(i + 1));
      }
    }
  }
  EXPECT_EQ(text_of(default_host_ip(254, LinkLayer::RoceV2Ipv4), true), "10.0.1.1");
  EXPECT_EQ(text_of(default_host_ip(1023, LinkLayer::RoceV2Ipv4), true), "10.0.4.8");
  EXPECT_EQ(text_of(default_host_ip(9999, LinkLayer::RoceV2Ipv6), false), "fd00::1:0:270f");
  EXPECT_THROW(default_host_ip(254 * 65536, LinkLayer::RoceV2Ipv4), std::invalid_argument);
}

// A fat-tree of k = 16: 1 024 hosts, each with its own IP and MAC.
TEST(World, FatTreeK16HostsHaveDistinctAddresses) {
  const Scenario s = parse_scenario(
      "topology: {kind: fat_tree, k: 16}\nworkloads: []\n", "fat_tree_k16.yaml");
  std::ostringstream log;
  World w(s, 1, log);
  ASSERT_EQ(w.hosts().size(), 1024u);
  std::set<packet::Ipv6Addr> ips;
  std::set<packet::MacAddr> macs;
  for (const auto& h : w.hosts()) {
    ips.insert(h->address.ip);
    macs.insert(h->address.mac);
  }
  EXPECT_EQ(ips.size(), 1024u);
  EXPECT_EQ(macs.size(), 1024u);
  EXPECT_EQ(text_of(w.host("h253").address.ip, true), "10.0.0.254");
  EXPECT_EQ(text_of(w.host("h1000").address.ip, true), "10.0.3.239");
}

// Every host and switch is a unit of its own (sim::Actor): hosts 1, 2, ... in
// scenario order, switches after them, each with its ports and NIC.
TEST(World, HostsAndSwitchesAreUnitsNumberedInScenarioOrder) {
  const Scenario s = parse_scenario("topology: {kind: fat_tree, k: 4}\nworkloads: []\n", "fat_tree_k4.yaml");
  std::ostringstream log;
  World w(s, 1, log);
  ASSERT_EQ(w.hosts().size(), 16u);
  ASSERT_EQ(w.switches().size(), 20u);
  for (size_t i = 0; i < w.hosts().size(); ++i) {
    const Host& h = *w.hosts()[i];
    EXPECT_EQ(h.actor(), sim::Actor(static_cast<uint32_t>(i + 1)));
    EXPECT_EQ(h.nic->config().actor, h.actor());
    EXPECT_EQ(h.port->actor(), h.actor());
  }
  for (size_t i = 0; i < w.switches().size(); ++i) {
    fabric::Switch& sw = *w.switches()[i];
    EXPECT_EQ(sw.actor(), sim::Actor(static_cast<uint32_t>(17 + i)));
    for (size_t p = 0; p < sw.port_count(); ++p) EXPECT_EQ(sw.port(p).actor(), sw.actor());
  }
}

// The default cut: a leaf with its hosts is one group, groups fill the
// partitions in order (balanced by hosts), spines are dealt out in turn, and a
// perftest run's two hosts stay together.
TEST(PartitionMap, LeavesGoWithTheirHostsAndPerftestPairsStayTogether) {
  const Scenario s = parse_scenario(
      "topology: {kind: leaf_spine, leaves: 4, spines: 2, hosts_per_leaf: 2}\n"
      "workloads: [{from: h0, to: h7, op: write, pattern: bw}]\n",
      "ls.yaml");
  const fabric::Topology& t = s.fabric.topology;
  auto at = [&](const PartitionMap& m, const char* name) { return m.of_node[static_cast<size_t>(t.find(name))]; };
  const PartitionMap one = partition_map(s, 1);
  for (uint32_t p : one.of_node) EXPECT_EQ(p, 0u);
  const PartitionMap three = partition_map(s, 3);
  EXPECT_EQ(at(three, "h0"), at(three, "leaf0"));
  EXPECT_EQ(at(three, "h1"), at(three, "leaf0"));
  EXPECT_EQ(at(three, "h7"), at(three, "h0")) << "the perftest pair";
  EXPECT_EQ(at(three, "h6"), at(three, "leaf3"));
  EXPECT_NE(at(three, "h2"), at(three, "h0"));
  EXPECT_NE(at(three, "spine0"), at(three, "spine1"));
  std::set<uint32_t> used(three.of_node.begin(), three.of_node.end());
  EXPECT_EQ(used.size(), 3u);
  EXPECT_THROW(partition_map(s, 0), std::invalid_argument);
}

// Unsaid, a world of 64 hosts or more takes one partition per thread; a
// smaller one, a single thread or too few groups, one.
TEST(PartitionMap, LargeWorldsTakeAPartitionPerThreadByDefault) {
  const Scenario big = parse_scenario("topology: {kind: fat_tree, k: 8}\nworkloads: []\n", "ft.yaml");
  EXPECT_EQ(default_partitions(big, 2), 2u);
  EXPECT_EQ(default_partitions(big, 1), 1u);
  EXPECT_EQ(default_partitions(big, 64), 1u) << "32 edge switches: fewer groups than threads";
  const Scenario small = parse_scenario("topology: {kind: fat_tree, k: 4}\nworkloads: []\n", "ft.yaml");
  EXPECT_EQ(default_partitions(small, 2), 1u);
  const Scenario said = parse_scenario("topology: {kind: fat_tree, k: 4}\npartitions: 3\nworkloads: []\n", "ft.yaml");
  EXPECT_EQ(said.partitions, std::optional<uint32_t>(3));
}

// A world cut in partitions: each unit on its partition's scheduler, the cut
// links wired across; a cut link shorter than the window is refused.
TEST(World, PartitionsHoldTheirUnitsAndCutLinksCross) {
  const std::string text =
      "topology: {kind: leaf_spine, leaves: 4, spines: 2, hosts_per_leaf: 2}\n"
      "workloads: [{pattern: flows, flows: [{from: h0, to: h7, op: write, size: 4KiB}]}]\n";
  const Scenario s = parse_scenario(text, "ls.yaml");
  std::ostringstream log;
  World w(s, 1, log, {}, Outside::Apart, 3);
  ASSERT_EQ(w.partitions(), 3u);
  std::set<uint32_t> used;
  for (const auto& h : w.hosts()) {
    used.insert(w.partition_of(*h));
    EXPECT_EQ(&h->nic->scheduler(), &w.sim(w.partition_of(*h)).scheduler());
  }
  EXPECT_EQ(used.size(), 3u);
  for (const auto& h : w.hosts()) EXPECT_TRUE(h->port->connected());
  size_t across = 0;
  for (const auto& sw : w.switches())
    for (size_t i = 0; i < sw->port_count(); ++i) across += sw->port(i).peer() == nullptr;
  EXPECT_GT(across, 0u) << "some leaf-spine links are cut";
  EXPECT_THROW(World(s, 1, log, {}, Outside::InModel, 3), std::invalid_argument);
  // The window: the smallest link delay, which no cut link undercuts.
  std::string shorter = text;
  shorter.replace(shorter.find("hosts_per_leaf: 2"), 17, "hosts_per_leaf: 2, fabric_delay: 300ns");
  EXPECT_EQ(World(parse_scenario(shorter, "ls.yaml"), 1, log, {}, Outside::Apart, 3).control_delay(),
            sim::Duration::ns(300));
}

// The engine's report: every partition's units and events, and what crossed
// each cut in how many windows; nothing crosses within a partition, and a
// run in one partition sends nothing anywhere.
TEST(Run, TheEngineReportCountsWindowsEventsAndCrossings) {
  const std::string text =
      "topology: {kind: leaf_spine, leaves: 4, spines: 2, hosts_per_leaf: 2}\n"
      "workloads: [{pattern: flows, flows: [{from: h0, to: h7, op: write, size: 64KiB},"
      " {from: h2, to: h5, op: write, size: 64KiB}]}]\n";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("engine_report_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  for (const uint32_t parts : {3u, 1u}) {
    RunOptions o = quiet();
    o.threads = 2;
    o.engine_report = (dir / ("engine" + std::to_string(parts) + ".json")).string();
    const Summary sum = run_text("partitions: " + std::to_string(parts) + "\n" + text, "ls.yaml", o);
    ASSERT_TRUE(sum.completed);
    const nlohmann::json j = nlohmann::json::parse(std::ifstream(o.engine_report));
    EXPECT_EQ(j["partitions"], parts);
    EXPECT_GT(j["windows"].get<uint64_t>(), 0u);
    // Each window's busiest partition fired no fewer than any one partition did in it.
    uint64_t most = 0;
    for (const auto& p : j["partition"]) most = std::max(most, p["events"].get<uint64_t>());
    EXPECT_LE(j["busiest_events"].get<uint64_t>(), sum.events);
    EXPECT_GE(j["busiest_events"].get<uint64_t>(), most);
    uint64_t hosts = 0, switches = 0, events = 0, crossed = 0;
    for (const auto& p : j["partition"]) {
      hosts += p["hosts"].get<uint64_t>();
      switches += p["switches"].get<uint64_t>();
      events += p["events"].get<uint64_t>();
    }
    EXPECT_EQ(hosts, 8u);
    EXPECT_EQ(switches, 6u);
    EXPECT_LE(events, sum.events) << "the outside's events are nobody's partition's";
    EXPECT_GT(events, sum.events * 9 / 10);
    for (const auto& c : j["crossings"]) {
      EXPECT_NE(c["from"], c["to"]);
      EXPECT_LE(c["windows"].get<uint64_t>(), j["windows"].get<uint64_t>());
      EXPECT_GE(c["bytes"].get<uint64_t>(), c["windows"].get<uint64_t>());
      crossed += c["bytes"].get<uint64_t>();
    }
    if (parts == 1) EXPECT_EQ(crossed, 0u);
    else EXPECT_GT(crossed, 2 * 65536u) << "both flows' payload crosses a cut";
  }
  std::filesystem::remove_all(dir);
}

// --- NIC settings and presets -------------------------------------------------------

TEST(NicKeys, EveryNicParamsFieldHasAKey) {
  // A new field in nic::NicParams or nic::PcieParams needs its key in
  // scenario/nic_keys.cpp (named as the field, with its unit).
  EXPECT_EQ(aggregate_field_count<nic::NicParams>(), nic_keys_covering_fields());
  EXPECT_EQ(aggregate_field_count<nic::PcieParams>(), pcie_keys_covering_fields());
  EXPECT_EQ(aggregate_field_count<nic::CongestionParams>(), congestion_keys_covering_fields());
}

TEST(NicKeys, EveryKeySetsItsFieldWithUnits) {
  const Scenario s = parse_scenario(
      "nic:\n"
      "  clock_hz: 1.25GHz\n"
      "  doorbell_cycles: 7\n"
      "  wqe_fetch_batch: 4\n"
      "  wqe_fetch_outstanding: 3\n"
      "  requester_cycles_per_packet: 11\n"
      "  responder_cycles_per_packet: 12\n"
      "  completer_cycles_per_packet: 13\n"
      "  rx_parse_cycles: 14\n"
      "  tx_pipeline_packets: 15\n"
      "  ack_coalesce_packets: 16\n"
      "  max_inflight_psns: 1000\n"
      "  mtu: 2048\n"
      "  pcie:\n"
      "    generation: 4\n"
      "    lanes: 8\n"
      "    latency: 180ns\n"
      "    host_memory_latency: 0.1us\n"
      "    max_payload_bytes: 512\n"
      "    max_read_request_bytes: 4KiB\n"
      "    tlp_overhead_bytes: 26\n" +
          kHosts,
      "t.yaml");
  const nic::NicParams& p = s.nic;
  EXPECT_EQ(p.clock_hz, 1'250'000'000u);
  EXPECT_EQ(p.doorbell_cycles, 7u);
  EXPECT_EQ(p.wqe_fetch_batch, 4u);
  EXPECT_EQ(p.wqe_fetch_outstanding, 3u);
  EXPECT_EQ(p.requester_cycles_per_packet, 11u);
  EXPECT_EQ(p.responder_cycles_per_packet, 12u);
  EXPECT_EQ(p.completer_cycles_per_packet, 13u);
  EXPECT_EQ(p.rx_parse_cycles, 14u);
  EXPECT_EQ(p.tx_pipeline_packets, 15u);
  EXPECT_EQ(p.ack_coalesce_packets, 16u);
  EXPECT_EQ(p.max_inflight_psns, 1000u);
  EXPECT_EQ(p.mtu, 2048u);
  EXPECT_EQ(s.path_mtu, 2048u);
  EXPECT_EQ(p.pcie.generation, 4u);
  EXPECT_EQ(p.pcie.lanes, 8u);
  EXPECT_EQ(p.pcie.latency, sim::Duration::ns(180));
  EXPECT_EQ(p.pcie.host_memory_latency, sim::Duration::ns(100));
  EXPECT_EQ(p.pcie.max_payload_bytes, 512u);
  EXPECT_EQ(p.pcie.max_read_request_bytes, 4096u);
  EXPECT_EQ(p.pcie.tlp_overhead_bytes, 26u);
}

TEST(NicKeys, OlderNamesStillWork) {
  const Scenario s =
      parse_scenario("nic: {clock: 1GHz, pcie_gen: 2, pcie_lanes: 4, pcie_latency: 300ns}\n" + kHosts, "t.yaml");
  EXPECT_EQ(s.nic.clock_hz, 1'000'000'000u);
  EXPECT_EQ(s.nic.pcie.generation, 2u);
  EXPECT_EQ(s.nic.pcie.lanes, 4u);
  EXPECT_EQ(s.nic.pcie.latency, sim::Duration::ns(300));
}

TEST(NicKeys, ErrorsNameTheKeyAndUnit) {
  expect_error("nic:\n  clock_hz: 500\n" + kHosts, 2, 13, "frequency");
  expect_error("nic:\n  doorbell_cycles: 2ns\n" + kHosts, 2, 20, "nic.doorbell_cycles (cycles)");
  expect_error("nic:\n  pcie:\n    latency: 3\n" + kHosts, 3, 14, "nic.pcie.latency (a time");
  expect_error("nic:\n  pcie:\n    lanes: 3\n" + kHosts, 3, 12, "1, 2, 4, 8, 16 or 32");
  expect_error("nic:\n  pcie:\n    max_payload_bytes: 300\n" + kHosts, 3, 24, "power of two");
  expect_error("nic:\n  pcie:\n    speed: 3\n" + kHosts, 3, 5, "unknown key 'speed' in pcie settings");
  expect_error("nic:\n  wqe_fetch_batch: 0\n" + kHosts, 2, 20, "between 1 and 256");
}

// A directory of presets for one test, removed afterwards.
class PresetDir : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rnicsim_presets_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "presets");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }
  std::string scenario_path() const { return (dir_ / "s.yaml").string(); }
  std::filesystem::path dir_;
};

TEST_F(PresetDir, PresetThenOverrides) {
  write("presets/fast.yaml",
        "description: a test NIC\n"
        "clock_hz: 1GHz\n"
        "requester_cycles_per_packet: 5\n"
        "mtu: 1024\n"
        "pcie: {lanes: 8, latency: 100ns}\n");
  const Scenario s = parse_scenario("nic: {preset: fast, requester_cycles_per_packet: 9, pcie: {lanes: 4}}\n" + kHosts,
                                    scenario_path());
  EXPECT_EQ(s.nic_preset, "fast");
  EXPECT_EQ(s.nic.clock_hz, 1'000'000'000u);
  EXPECT_EQ(s.nic.requester_cycles_per_packet, 9u) << "the scenario overrides the preset";
  EXPECT_EQ(s.nic.mtu, 1024u);
  EXPECT_EQ(s.path_mtu, 1024u) << "the preset's MTU is the QPs' path MTU";
  EXPECT_EQ(s.nic.pcie.lanes, 4u);
  EXPECT_EQ(s.nic.pcie.latency, sim::Duration::ns(100)) << "pcie keys merge, they do not replace the map";
}

TEST_F(PresetDir, PresetsStartFromPresetsAndFiles) {
  write("presets/base.yaml", "clock_hz: 800MHz\nrx_parse_cycles: 3\n");
  write("presets/derived.yaml", "preset: base\nrx_parse_cycles: 4\n");
  write("my/nic.yaml", "preset: derived\ndoorbell_cycles: 9\n");
  const Scenario a = parse_scenario("nic: {preset: derived}\n" + kHosts, scenario_path());
  EXPECT_EQ(a.nic.clock_hz, 800'000'000u);
  EXPECT_EQ(a.nic.rx_parse_cycles, 4u);
  const Scenario b = parse_scenario("nic: {preset: my/nic.yaml}\n" + kHosts, scenario_path());
  EXPECT_EQ(b.nic.clock_hz, 800'000'000u);
  EXPECT_EQ(b.nic.doorbell_cycles, 9u);
}

TEST_F(PresetDir, PresetsAreFoundAboveTheScenarioAndInRnicsimPresets) {
  write("presets/up.yaml", "doorbell_cycles: 21\n");
  const std::string deeper = (dir_ / "a" / "b" / "s.yaml").string();
  EXPECT_EQ(parse_scenario("nic: {preset: up}\n" + kHosts, deeper).nic.doorbell_cycles, 21u);
  write("elsewhere/env_only.yaml", "doorbell_cycles: 22\n");
  ::setenv("RNICSIM_PRESETS", ("/nonexistent:" + (dir_ / "elsewhere").string()).c_str(), 1);
  const Scenario s = parse_scenario("nic: {preset: env_only}\n" + kHosts, scenario_path());
  ::unsetenv("RNICSIM_PRESETS");
  EXPECT_EQ(s.nic.doorbell_cycles, 22u);
}

TEST_F(PresetDir, ErrorsPointIntoThePresetFile) {
  write("presets/bad.yaml", "clock_hz: 1GHz\nrx_parse_cycles: many\n");
  try {
    parse_scenario("nic: {preset: bad}\n" + kHosts, scenario_path());
    ADD_FAILURE() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 18);
    EXPECT_NE(std::string(e.what()).find("bad.yaml:2:18: expected rx_parse_cycles (cycles) (a whole number)"),
              std::string::npos)
        << e.what();
  }
  try {
    parse_scenario("nic: {preset: nowhere}\n" + kHosts, scenario_path());
    ADD_FAILURE() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_EQ(e.column(), 15);
    EXPECT_NE(std::string(e.what()).find("no NIC preset 'nowhere' (looked for nowhere.yaml in: " + (dir_ / "presets").string()),
              std::string::npos)
        << e.what();
  }
  write("presets/loop.yaml", "preset: loop\n");
  try {
    parse_scenario("nic: {preset: loop}\n" + kHosts, scenario_path());
    ADD_FAILURE() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("nest more than 8 deep"), std::string::npos) << e.what();
  }
}

// --- perftest keys --------------------------------------------------------------------

WorkloadSpec one_workload(const std::string& fields) {
  const Scenario s = parse_scenario(kHosts + "workloads:\n  - {from: a, to: b, " + fields + "}\n", "t.yaml");
  return s.workloads.at(0);
}

TEST(PerftestKeys, DefaultsArePerftests) {
  const WorkloadSpec bw = one_workload("op: write");
  EXPECT_EQ(bw.pattern, WorkloadPattern::Bandwidth);
  EXPECT_EQ(bw.size, 65536u);
  EXPECT_EQ(bw.sizes, std::vector<uint64_t>{65536});
  EXPECT_EQ(bw.iterations, 5000u);
  EXPECT_EQ(bw.tx_depth, 128u);
  EXPECT_EQ(bw.cq_mod, 1u) << "perftest signals every WQE above 8 KiB";
  EXPECT_EQ(bw.inline_size, 0u);
  EXPECT_EQ(bw.qps, 1u);
  EXPECT_EQ(bw.post_list, 1u);
  EXPECT_EQ(one_workload("op: write, size: 8KiB").cq_mod, 100u);
  EXPECT_EQ(one_workload("op: write, size: 8KiB, tx_depth: 64").cq_mod, 64u) << "cq_mod <= tx_depth";
  EXPECT_EQ(one_workload("op: write, size: 64KiB, cq_mod: 16").cq_mod, 16u);
  EXPECT_EQ(one_workload("op: write, size: 64, post_list: 8").cq_mod, 8u);
  EXPECT_EQ(one_workload("op: write, iterations: 50").tx_depth, 50u) << "tx_depth <= iterations";
  EXPECT_EQ(one_workload("op: send").rx_depth, 512u);
  EXPECT_EQ(one_workload("op: send, iterations: 100").rx_depth, 100u);

  const WorkloadSpec lat = one_workload("op: send, pattern: lat");
  EXPECT_EQ(lat.size, 2u);
  EXPECT_EQ(lat.iterations, 1000u);
  EXPECT_EQ(lat.tx_depth, 1u);
  EXPECT_EQ(lat.cq_mod, 1u);
  EXPECT_EQ(lat.inline_size, 64u) << "perftest inlines what the device takes; the model's WQE takes 64";
  EXPECT_EQ(one_workload("op: read, pattern: lat").inline_size, 0u);
  EXPECT_EQ(one_workload("op: read, pattern: lat, inline_size: 32").inline_size, 0u) << "READ never inlines";
  EXPECT_EQ(one_workload("op: write, inline_size: 32").inline_size, 32u);
}

TEST(PerftestKeys, OpsSizesAndAliases) {
  EXPECT_EQ(one_workload("op: atomic").op, WorkloadOp::FetchAdd);
  EXPECT_EQ(one_workload("op: atomic, atomic_type: CMP_AND_SWAP").op, WorkloadOp::CmpSwap);
  EXPECT_EQ(one_workload("op: cmp_swap").op, WorkloadOp::CmpSwap);
  EXPECT_EQ(one_workload("op: atomic").sizes, std::vector<uint64_t>{8});
  EXPECT_EQ(one_workload("op: read").op, WorkloadOp::Read);
  EXPECT_EQ(one_workload("op: write, count: 7").iterations, 7u);
  const WorkloadSpec all = one_workload("op: write, all_sizes: true");
  ASSERT_EQ(all.sizes.size(), 23u);
  EXPECT_EQ(all.sizes.front(), 2u);
  EXPECT_EQ(all.sizes.back(), 8u << 20);
  EXPECT_EQ(all.size, 8u << 20);
  EXPECT_EQ(all.cq_mod, 100u) << "-a keeps cq_mod for every size, as perftest does";
  EXPECT_EQ(one_workload("op: atomic, all_sizes: true").sizes, std::vector<uint64_t>{8});
}

TEST(PerftestKeys, Errors) {
  const std::string w = kHosts + "workloads:\n  - {from: a, to: b, ";
  expect_error(w + "op: send, pattern: lat, qps: 2}\n", 7, 51, "latency tests use one QP");
  expect_error(w + "op: write, iterations: 10, post_list: 4}\n", 7, 45, "multiple of post_list");
  expect_error(w + "op: write, post_list: 4, cq_mod: 3}\n", 7, 55, "multiple of cq_mod");
  expect_error(w + "op: write, inline_size: 65}\n", 7, 46, "at most 64");
  expect_error(w + "op: write, size: 8, all_sizes: true}\n", 7, 39, "exclude each other");
  expect_error(w + "op: write, count: 3, iterations: 3}\n", 7, 40, "another name for iterations");
  expect_error(w + "op: write, rx_depth: 3}\n", 7, 43, "rx_depth applies to send, send_imm and write_imm");
  expect_error(w + "op: write, atomic_type: cmp_swap}\n", 7, 46, "goes with op: atomic");
  expect_error(w + "op: write, tx_dept: 3}\n", 7, 33, "unknown key 'tx_dept'");
}

// --- perftest runs ----------------------------------------------------------------------

std::string two_hosts(const std::string& workloads, const std::string& extra = "") {
  return "hosts: [{name: a}, {name: b}]\n"
         "links: [{between: [a, b], rate: 100Gbps, delay: 200ns}]\n" +
         extra + "workloads:\n" + workloads;
}

TEST(Perftest, EveryOpAndPatternCompletesWithItsMemoryChecked) {
  const char* ops[] = {"write", "write_imm", "send", "read", "fetch_add", "cmp_swap"};
  std::string w;
  for (const char* op : ops)
    for (const char* pat : {"bw", "lat"})
      w += std::string("  - {name: ") + op + "_" + pat + ", op: " + op + ", pattern: " + pat +
           ", from: a, to: b, iterations: 50" + (std::string(pat) == "bw" ? ", qps: 2" : "") +
           (std::string(pat) == "bw" && std::string(op).find('_') == std::string::npos ? ", size: 3000" : "") + "}\n";
  const Summary s = run_text(two_hosts(w), "ops.yaml", quiet());
  ASSERT_EQ(s.workloads.size(), 12u);
  EXPECT_TRUE(s.completed);
  for (const WorkloadSummary& r : s.workloads) {
    EXPECT_TRUE(r.completed) << r.name << ": " << r.failure;
    EXPECT_TRUE(r.data_verified) << r.name;
    ASSERT_EQ(r.rows.size(), 1u) << r.name;
    const PerftestRow& row = r.rows[0];
    if (r.pattern == "bw") {
      EXPECT_EQ(row.iterations, 100u) << "perftest reports iterations x qps";
      EXPECT_EQ(r.messages, 100u);
      EXPECT_GT(row.bw_avg_gbps, 0.0) << r.name;
      EXPECT_GE(row.bw_peak_gbps, row.bw_avg_gbps * 0.999) << r.name;
      EXPECT_LE(row.bw_peak_gbps, 100.0) << r.name;
    } else {
      EXPECT_EQ(row.iterations, 50u);
      EXPECT_GT(row.t_min_us, 0.4) << r.name << ": at least two 200 ns wire crossings for a round trip";
      EXPECT_LE(row.t_min_us, row.t_typical_us);
      EXPECT_LE(row.t_typical_us, row.t_max_us);
      EXPECT_LE(row.t_p99_us, row.t_p999_us);
    }
  }
}

// Simulated memory writes a received payload when somebody looks
// (RunOptions::defer_writes). Over a lossy link, with every operation and
// messages of several packets, a run that defers and one that writes at once
// must agree on everything anyone can see: the capture byte for byte, every
// workload's data check, completion and counts.
TEST(Run, DeferredWritesChangeNothingAnyoneSees) {
  std::string w;
  for (const char* op : {"write", "write_imm", "send", "read"})
    for (const char* pat : {"bw", "lat"})
      w += std::string("  - {name: ") + op + "_" + pat + ", op: " + op + ", pattern: " + pat +
           ", from: a, to: b, iterations: 40, size: 10000" + (std::string(pat) == "bw" ? ", qps: 2" : "") + "}\n";
  // A bounded run (this one needs about 0.6 s of simulated time, the loss
  // costing ACK timeouts): a payload that never lands leaves a write-latency
  // test spinning.
  const std::string text = "seed: 5\nduration: 2s\nhosts: [{name: a}, {name: b}]\n"
                           "links: [{between: [a, b], rate: 100Gbps, delay: 200ns, loss: 0.01}]\n"
                           "nic: {mtu: 4096}\nworkloads:\n" + w;
  const auto dir = std::filesystem::temp_directory_path() / ("rnicsim_defer_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto run = [&](bool defer) {
    RunOptions o = quiet();
    o.defer_writes = defer;
    o.pcap_path = (dir / (defer ? "deferred.pcap" : "at_once.pcap")).string();
    return run_text(text, "defer.yaml", o);
  };
  const Summary deferred = run(true), at_once = run(false);
  auto bytes_of = [&](const char* name) {
    std::ifstream in(dir / name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string capture = bytes_of("deferred.pcap"), capture_at_once = bytes_of("at_once.pcap");
  std::filesystem::remove_all(dir);
  EXPECT_GT(capture.size(), 100000u);
  EXPECT_TRUE(capture == capture_at_once) << "the captures differ";
  ASSERT_TRUE(deferred.completed);
  ASSERT_TRUE(at_once.completed);
  EXPECT_GT(deferred.retransmissions, 0u) << "the loss should have made the NICs resend";
  EXPECT_GT(deferred.payload_writes_dropped, 0u) << "nothing was deferred and written over";
  EXPECT_EQ(at_once.payload_writes_dropped, 0u);
  expect_same(deferred, at_once);
  EXPECT_EQ(deferred.completions, at_once.completions);
  for (const WorkloadSummary& d : deferred.workloads) EXPECT_TRUE(d.data_verified) << d.name;
}

TEST(Perftest, ReadAndAtomicLatencyIsTheWholeRoundTripPingPongsHalf) {
  const Summary s = run_text(two_hosts("  - {name: r, op: read, pattern: lat, from: a, to: b, size: 8}\n"
                                       "  - {name: s, op: send, pattern: lat, from: a, to: b, size: 8}\n"),
                             "lat.yaml", quiet());
  ASSERT_TRUE(s.completed);
  // A READ is one round trip per iteration (and the responder reads host memory);
  // a SEND ping-pong reports half of one.
  EXPECT_GT(s.workloads[0].rows[0].t_typical_us, s.workloads[1].rows[0].t_typical_us * 1.5);
  EXPECT_LT(s.workloads[0].rows[0].t_typical_us, s.workloads[1].rows[0].t_typical_us * 3.0);
}

TEST(Perftest, WriteLatencySpinsOnTheLastByte) {
  auto typical = [](const std::string& interval) {
    const Summary s = run_text(two_hosts("  - {name: w, op: write, pattern: lat, from: a, to: b, size: 8}\n",
                                         "host: {mem_poll_interval: " + interval + "}\n"),
                               "wlat.yaml", quiet());
    EXPECT_TRUE(s.completed);
    EXPECT_TRUE(s.workloads[0].data_verified);
    return s.workloads[0].rows[0].t_typical_us;
  };
  const double fine = typical("10ns");
  const double coarse = typical("500ns");
  // A coarser spin sees the byte later (by up to one interval on each side).
  EXPECT_GT(coarse, fine);
  EXPECT_LT(coarse, fine + 0.5 + 0.01);
}

TEST(Perftest, CqModSignalsEveryNthWqe) {
  const std::string dir = (std::filesystem::temp_directory_path() / ("rnicsim_cqmod_" + std::to_string(::getpid()))).string();
  RunOptions o = quiet();
  o.out_dir = dir;
  const Summary s = run_text(two_hosts("  - {name: w, op: write, pattern: bw, from: a, to: b, size: 64, iterations: 1000, cq_mod: 100}\n"
                                       "  - {name: x, op: write, pattern: bw, from: a, to: b, size: 64KiB, iterations: 30}\n"
                                       "  - {name: l, op: write, pattern: bw, from: a, to: b, size: 64, iterations: 64, post_list: 16}\n"),
                             "cqmod.yaml", o);
  ASSERT_TRUE(s.completed);
  std::ifstream in(dir + "/stats.json");
  const auto stats = nlohmann::json::parse(in)["histograms"];
  std::filesystem::remove_all(dir);
  // The bw latency histogram holds one sample per signaled WQE.
  EXPECT_EQ(stats["workload.w.latency_ps"]["count"], 10) << stats;
  EXPECT_EQ(stats["workload.x.latency_ps"]["count"], 30) << "over 8 KiB every WQE";
  EXPECT_EQ(stats["workload.l.latency_ps"]["count"], 4) << "one per post list";
}

TEST(Perftest, AllSizesRunsEverySizeInOrder) {
  const Summary s = run_text(
      two_hosts("  - {name: a, op: write, pattern: bw, from: a, to: b, all_sizes: true, iterations: 8, tx_depth: 8}\n"),
      "all.yaml", quiet());
  ASSERT_TRUE(s.completed);
  const auto& rows = s.workloads[0].rows;
  ASSERT_EQ(rows.size(), 23u);
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].bytes, uint64_t{2} << i);
  EXPECT_GT(rows.back().bw_avg_gbps, rows.front().bw_avg_gbps * 100);
  EXPECT_TRUE(s.workloads[0].data_verified);
}

TEST(Perftest, SameSeedSameReport) {
  const std::string text =
      two_hosts("  - {name: b, op: send, pattern: bw, from: a, to: b, size: 5000, iterations: 200, qps: 3}\n"
                "  - {name: l, op: write, pattern: lat, from: a, to: b, size: 100, iterations: 100}\n");
  const Summary x = run_text(text, "d.yaml", quiet());
  const Summary y = run_text(text, "d.yaml", quiet());
  ASSERT_EQ(x.workloads.size(), y.workloads.size());
  for (size_t i = 0; i < x.workloads.size(); ++i) {
    EXPECT_EQ(x.workloads[i].rows[0].bw_peak_gbps, y.workloads[i].rows[0].bw_peak_gbps);
    EXPECT_EQ(x.workloads[i].rows[0].bw_avg_gbps, y.workloads[i].rows[0].bw_avg_gbps);
    EXPECT_EQ(x.workloads[i].rows[0].t_typical_us, y.workloads[i].rows[0].t_typical_us);
    EXPECT_EQ(x.workloads[i].rows[0].t_stdev_us, y.workloads[i].rows[0].t_stdev_us);
  }
}

// --- flows ------------------------------------------------------------------------------

TEST(Flows, CompletionTimesAndSlowdowns) {
  const Summary s = run_text(two_hosts("  - name: f\n"
                                       "    pattern: flows\n"
                                       "    base_rtt: 1us\n"
                                       "    flows:\n"
                                       "      - {from: a, to: b, op: write, size: 1MiB}\n"
                                       "      - {from: a, to: b, op: write, size: 1KiB, start: 5us}\n"
                                       "      - {from: b, to: a, op: send, size: 64KiB, start: 1us}\n"
                                       "      - {from: a, to: b, op: read, size: 8KiB, start: 2us}\n"),
                             "flows.yaml", quiet());
  ASSERT_TRUE(s.completed) << s.workloads[0].failure;
  const auto& flows = s.workloads[0].flows;
  ASSERT_EQ(flows.size(), 4u);
  for (const FlowResult& f : flows) {
    EXPECT_TRUE(f.done);
    EXPECT_GE(f.fct_us, f.ideal_us) << f.spec.size;
    EXPECT_GE(f.slowdown, 1.0);
  }
  EXPECT_NEAR(flows[0].ideal_us, 1048576 * 8 / 100e3 + 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(flows[1].start.since_start().microseconds(), 5.0);
  // The small WRITE shares the QP with the 1 MiB one: it waits behind it.
  EXPECT_GT(flows[1].end, flows[0].end);
  EXPECT_GT(flows[1].slowdown, 10.0);
  EXPECT_TRUE(s.workloads[0].data_verified);
  EXPECT_EQ(s.workloads[0].messages, 4u);
}

TEST(Flows, CsvErrorsNameTheLineAndColumn) {
  const auto dir = std::filesystem::temp_directory_path() / ("rnicsim_flows_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto scenario = [&](const std::string& csv) {
    std::ofstream(dir / "f.csv") << csv;
    return two_hosts("  - {name: f, pattern: flows, flows: f.csv}\n");
  };
  auto error_of = [&](const std::string& csv) -> std::string {
    try {
      parse_scenario(scenario(csv), (dir / "s.yaml").string());
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string f = (dir / "f.csv").string();
  EXPECT_EQ(error_of("from,to,op,size\na,b,write,1KiB\na,c,write,1KiB\n").rfind(f + ":3:3: to names unknown host 'c'", 0), 0u)
      << error_of("from,to,op,size\na,b,write,1KiB\na,c,write,1KiB\n");
  EXPECT_EQ(error_of("from,to,op,size\na,b,wrte,1KiB\n").rfind(f + ":2:5: expected op", 0), 0u);
  EXPECT_EQ(error_of("from,to,op,size,start\na, b, write, 1KiB, soon\n").rfind(f + ":2:20: expected start", 0), 0u)
      << error_of("from,to,op,size,start\na, b, write, 1KiB, soon\n");
  EXPECT_EQ(error_of("from,to,op\n").rfind(f + ":1:1: the header needs a 'size' column", 0), 0u);
  // The columns are the keys of a flow in a list.
  EXPECT_EQ(error_of("from,to,op,sz\n").rfind(f + ":1:12: unknown column 'sz' (expected a header of: from, to, op, size, "
                                                "start, priority)", 0), 0u)
      << error_of("from,to,op,sz\n");
  EXPECT_EQ(error_of("from,to,op,size\na,b,write\n").rfind(f + ":2:1: expected 4 fields, got 3", 0), 0u);
  const Scenario ok = parse_scenario(scenario("# flows\nsize,op,to,from\n4KiB,send,b,a\n"), (dir / "s.yaml").string());
  ASSERT_EQ(ok.workloads[0].flows.size(), 1u);
  EXPECT_EQ(ok.workloads[0].flows[0].op, WorkloadOp::Send);
  EXPECT_EQ(ok.workloads[0].flows[0].size, 4096u);
  std::filesystem::remove_all(dir);
}

}  // namespace

// Overrides: map keys, list indices, list elements by name, new keys, errors.
TEST(Overrides, PathsByKeyIndexAndName) {
  YAML::Node root = YAML::Load(
      "nic: {mtu: 4096}\nlinks: [{between: [a, b], loss: 0}]\nworkloads: [{name: w1, size: 1}, {name: w2, size: 2}]\n");
  apply_override(root, "nic.mtu=1024");
  apply_override(root, "links.0.loss=0.01");
  apply_override(root, "workloads.w2.size=4KiB");
  apply_override(root, "nic.pcie={lanes: 8}");
  apply_override(root, "seed=9");
  EXPECT_EQ(root["nic"]["mtu"].as<int>(), 1024);
  EXPECT_EQ(root["links"][0]["loss"].as<double>(), 0.01);
  EXPECT_EQ(root["workloads"][1]["size"].as<std::string>(), "4KiB");
  EXPECT_EQ(root["workloads"][0]["size"].as<int>(), 1);
  EXPECT_EQ(root["nic"]["pcie"]["lanes"].as<int>(), 8);
  EXPECT_EQ(root["seed"].as<int>(), 9);
  EXPECT_THROW(apply_override(root, "workloads.w9.size=1"), std::invalid_argument);
  EXPECT_THROW(apply_override(root, "links.3.loss=1"), std::invalid_argument);
  EXPECT_THROW(apply_override(root, "nic..mtu=1"), std::invalid_argument);
  EXPECT_THROW(apply_override(root, "no_equals_sign"), std::invalid_argument);
}

// The shell completion's --set paths (override_paths) name keys the loader
// takes: each, set to a value of the wrong kind, is refused for its value and
// never as an unknown key (keys only some shapes of a map take, `when`, aside).
TEST(Overrides, EveryCompletedPathIsAKeyTheLoaderKnows) {
  const std::string text = kHosts + "workloads: [{name: w, op: write, from: a, to: b}]\n";
  const auto unknown_key = [&](const std::string& path) {
    YAML::Node root = YAML::Load(text);
    apply_override(root, path + "=[wrong, kind]");
    try {
      parse_scenario(root, "t.yaml");
    } catch (const ScenarioError& e) {
      return std::string(e.what()).find("unknown key") != std::string::npos;
    }
    return false;
  };
  const auto paths = override_paths(YAML::Load(text));
  EXPECT_GE(paths.size(), 150u);
  for (const char* want : {"workloads.w.size", "links.0.loss", "hosts.a.ip", "nic.pcie.lanes", "pfc.priorities"})
    EXPECT_TRUE(std::any_of(paths.begin(), paths.end(), [&](const OverridePath& p) { return p.path == want; })) << want;
  for (const OverridePath& p : paths) {
    if (!p.when.empty()) continue;
    EXPECT_FALSE(unknown_key(p.path)) << p.path;
  }
  EXPECT_TRUE(unknown_key("nic.bogus"));  // the check can fail
  EXPECT_TRUE(unknown_key("links.0.bogus"));
}

TEST(Expect, ParsedAndChecked) {
  const Scenario s = parse_scenario(
      "hosts: [{name: a}, {name: b}]\nlinks: [{between: [a, b]}]\n"
      "workloads: [{name: w, op: write, pattern: bw, from: a, to: b}]\n"
      "expect: ['w.throughput >= 90Gbps', 'w.latency_p99 < 2us', 'drops == 0', 'completions.REM_ACCESS_ERR != 3']\n",
      "t.yaml");
  ASSERT_EQ(s.expect.size(), 4u);
  EXPECT_EQ(s.expect[0].op, ExpectOp::GreaterEqual);
  EXPECT_DOUBLE_EQ(s.expect[0].value, 90e9);
  EXPECT_DOUBLE_EQ(s.expect[1].value, 2e-6);
  Summary sum;
  WorkloadSummary w;
  w.name = "w";
  w.gbps = 95;
  w.lat_p99_ps = 2'500'000;
  sum.workloads.push_back(w);
  sum.drops = 0;
  sum.completions[10] = 3;
  const auto r = check_expectations(s.expect, sum);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_TRUE(r[0].ok);
  EXPECT_FALSE(r[1].ok);
  EXPECT_EQ(r[1].measured_text, "2.500 us");
  EXPECT_TRUE(r[2].ok);
  EXPECT_FALSE(r[3].ok);
}

// `rnicsim params` lists every NIC key with a default, a unit and a description.
TEST(Params, EveryNicKeyListedWithDefaultUnitAndDescription) {
  const auto params = nic_parameters();
  auto listed = [&](const std::string& path) {
    return std::any_of(params.begin(), params.end(), [&](const ParamInfo& p) { return p.path == path; });
  };
  for (const auto k : nic_keys()) {
    if (k != "pcie" && k != "congestion_control") {
      EXPECT_TRUE(listed("nic." + std::string(k))) << k;
    }
  }
  for (const auto k : pcie_keys()) EXPECT_TRUE(listed("nic.pcie." + std::string(k))) << k;
  for (const auto k : congestion_keys()) EXPECT_TRUE(listed("nic.congestion_control." + std::string(k))) << k;
  for (const ParamInfo& p : params) {
    EXPECT_FALSE(p.default_value.empty()) << p.path;
    EXPECT_FALSE(p.unit.empty()) << p.path;
    EXPECT_FALSE(p.description.empty()) << p.path;
  }
  const ParamInfo* mtu = nullptr;
  for (const ParamInfo& p : params)
    if (p.path == "nic.mtu") mtu = &p;
  ASSERT_NE(mtu, nullptr);
  EXPECT_EQ(mtu->default_value, "4096");
}

// Every key of every section table has a unit and a description, once.
TEST(Params, EverySectionKeyHasUnitAndDescriptionAndIsDeclaredOnce) {
  const auto sections = all_key_sections();
  EXPECT_GE(sections.size(), 25u);
  size_t keys = 0;
  for (const KeySection& s : sections) {
    EXPECT_FALSE(s.keys.empty()) << s.path;
    for (const KeyInfo& k : s.keys) {
      ++keys;
      EXPECT_FALSE(k.name.empty()) << s.path;
      EXPECT_FALSE(k.unit.empty()) << s.path << "." << k.name;
      EXPECT_FALSE(k.description.empty()) << s.path << "." << k.name;
      EXPECT_EQ(std::count_if(s.keys.begin(), s.keys.end(), [&](const KeyInfo& x) { return x.name == k.name; }), 1)
          << s.path << "." << k.name;
    }
  }
  EXPECT_GE(keys, 120u);
}

// `rnicsim params` prints every key of every table, by its full path, and nothing else.
TEST(Params, PrintsEveryKeyOfEveryTable) {
  std::ostringstream out;
  print_params(out);
  const std::string text = out.str();
  size_t rows = nic_parameters().size();
  for (const KeySection& s : all_key_sections()) {
    for (const ParamInfo& p : section_parameters(s)) {
      ++rows;
      EXPECT_NE(text.find("\n" + p.path + "  "), std::string::npos) << p.path;
      EXPECT_NE(text.find(p.description), std::string::npos) << p.path;
    }
  }
  for (const ParamInfo& p : nic_parameters()) EXPECT_NE(text.find("\n" + p.path + "  "), std::string::npos) << p.path;
  // The key rows: every line before the metrics that is not blank or a heading.
  std::istringstream in(text.substr(0, text.find("# expect: metrics")));
  size_t printed = 0;
  for (std::string line; std::getline(in, line);) printed += !line.empty() && line[0] != '#';
  EXPECT_EQ(printed, rows);
  for (const char* path : {"pfc.xoff", "topology.spines", "workloads[].flows.generate", "links[].down[].from",
                           "switch.ecn.kmin", "captures[].snaplen", "faults[].nth", "host.blueflame", "nic.preset",
                           "nic.congestion_control.rpg_ai_rate", "workloads[].cq_mod", "ib_credits.vl_buffer"})
    EXPECT_NE(text.find(std::string("\n") + path + "  "), std::string::npos) << path;
  EXPECT_NE(text.find("\n# topology (kind: leaf_spine)\n"), std::string::npos);
}

namespace {

// Scenario text for the key table tests: two hosts, linked; a flows workload's
// `flows:` follows kFlowsAt.
const std::string kTwo = "hosts: [{name: a}, {name: b}]\n";
const std::string kTwoLinked = kTwo + "links: [{between: [a, b]}]\n";
const std::string kFlowsAt = kTwoLinked + "workloads: [{pattern: flows, flows: ";
constexpr std::string_view kFlowList = "a list; also the columns of a CSV flow file";

// The message of the ScenarioError `text` gets ("" if none).
std::string error_message(const std::string& text) {
  try {
    parse_scenario(text, "t.yaml");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// The loader checks each map against its table: an unknown key's message lists
// exactly the table's keys (after those of the table every map of its kind
// takes, `common`), each once.
TEST(Params, LoaderAcceptsExactlyTheKeysOfItsTables) {
  const auto sections = all_key_sections();
  auto names = [&](std::string_view path, std::string_view common, std::string_view when) {
    std::vector<std::string_view> v;
    auto add = [&](std::string_view w) {
      for (const KeySection& s : sections)
        if (s.path == path && s.when == w)
          for (const KeyInfo& k : s.keys) v.push_back(k.name);
    };
    add(common);
    if (when != common) add(when);
    std::string list;
    for (std::string_view n : v) {
      EXPECT_EQ(std::count(v.begin(), v.end(), n), 1) << path << " " << when << ": " << n;
      list += (list.empty() ? "" : ", ") + std::string(n);
    }
    return list;
  };
  const std::string &h = kTwo, &hl = kTwoLinked, &flows = kFlowsAt;
  const std::string_view flow_list = kFlowList, gen = "a generator";
  struct Case {
    std::string_view path, common, when;
    std::string text;
  };
  const Case cases[] = {
      {"", "", "", "zz: 1\n" + hl},
      {"hosts[]", "", "", "hosts: [{name: a, zz: 1}]\n"},
      {"host", "", "", hl + "host: {zz: 1}\n"},
      {"links[]", "", "", h + "links: [{between: [a, b], zz: 1}]\n"},
      {"links[].gilbert_elliott", "", "", h + "links: [{between: [a, b], gilbert_elliott: {p_good_bad: 0.1, zz: 1}}]\n"},
      {"links[].down[]", "", "", h + "links: [{between: [a, b], down: [{from: 1us, to: 2us, zz: 1}]}]\n"},
      {"switches[]", "", "", h + "switches: [{name: s, zz: 1}]\n"},
      {"topology", "", "kind: single_switch", h + "topology: {kind: single_switch, zz: 1}\n"},
      {"topology", "", "kind: leaf_spine", "topology: {kind: leaf_spine, zz: 1}\n"},
      {"topology", "", "kind: fat_tree", "topology: {kind: fat_tree, zz: 1}\n"},
      {"switch", "", "", hl + "switch: {zz: 1}\n"},
      {"switch.ecn", "", "", hl + "switch: {ecn: {zz: 1}}\n"},
      {"pfc", "", "", hl + "pfc: {zz: 1}\n"},
      {"ib_credits", "", "", "link_layer: ib\n" + hl + "ib_credits: {zz: 1}\n"},
      {"captures[]", "", "", hl + "captures: [{host: a, file: a.pcap, zz: 1}]\n"},
      {"faults[]", "", "", hl + "faults: [{host: a, action: drop, zz: 1}]\n"},
      {"workloads[]", "", "pattern: bw | lat", hl + "workloads: [{op: write, from: a, to: b, zz: 1}]\n"},
      {"workloads[]", "", "pattern: flows", flows + "[{from: a, to: b, size: 1}], zz: 1}]\n"},
      {"workloads[].flows[]", flow_list, flow_list, flows + "[{from: a, to: b, size: 1, zz: 1}]}]\n"},
      {"workloads[].flows", "a flow file", "a flow file", flows + "{file: f.csv, zz: 1}}]\n"},
      {"workloads[].flows", gen, "generate: all_to_all | permutation", flows + "{generate: permutation, zz: 1}}]\n"},
      {"workloads[].flows", gen, "generate: incast", flows + "{generate: incast, zz: 1}}]\n"},
      {"workloads[].flows", gen, "generate: poisson", flows + "{generate: poisson, zz: 1}}]\n"},
  };
  for (const Case& c : cases) {
    const std::string expected = names(c.path, c.common, c.when);
    const std::string got = error_message(c.text);
    EXPECT_NE(got.find("unknown key 'zz'"), std::string::npos) << c.path << " " << c.when << ": " << got;
    EXPECT_NE(got.find("(expected one of: " + expected + ")"), std::string::npos)
        << c.path << " " << c.when << ": " << got << "\nexpected: " << expected;
  }
}

// A key whose value is one of some words lists them as its unit: the same words
// the loader accepts, in its order.
TEST(Params, ChoiceUnitsAreTheValuesTheLoaderAccepts) {
  const auto sections = all_key_sections();
  auto unit_of = [&](std::string_view path, std::string_view when, std::string_view key) {
    for (const KeySection& s : sections)
      if (s.path == path && s.when == when)
        for (const KeyInfo& k : s.keys)
          if (k.name == key) return std::string(k.unit);
    return std::string("no key ") + std::string(path) + "." + std::string(key);
  };
  const std::string &hl = kTwoLinked, &flows = kFlowsAt;
  const std::string w = hl + "workloads: [{from: a, to: b, ";
  struct Case {
    std::string_view path, when, key;
    std::string text;
  };
  const Case cases[] = {
      {"", "", "link_layer", "link_layer: x\n" + hl},
      {"", "", "ib_grh", "link_layer: ib\nib_grh: x\n" + hl},
      {"", "", "ib_capture", "link_layer: ib\nib_capture: x\n" + hl},
      {"topology", "", "kind", "topology: {kind: x}\n"},
      {"switch", "", "scheduling", hl + "switch: {scheduling: x}\n"},
      {"switch", "", "trust", hl + "switch: {trust: x}\n"},
      {"workloads[]", "", "pattern", w + "op: write, pattern: x}]\n"},
      {"workloads[]", "pattern: bw | lat", "op", w + "op: x}]\n"},
      {"workloads[]", "pattern: bw | lat", "atomic_type", w + "op: atomic, atomic_type: x}]\n"},
      {"workloads[].flows[]", kFlowList, "op", flows + "[{from: a, to: b, size: 1, op: x}]}]\n"},
      {"workloads[].flows", "a flow file", "format", flows + "{file: f.csv, format: x}}]\n"},
      {"workloads[].flows", "a generator", "generate", flows + "{generate: x}}]\n"},
      {"workloads[].flows", "a generator", "op", flows + "{generate: permutation, size: 1, op: x}}]\n"},
  };
  for (const Case& c : cases) {
    std::string words = unit_of(c.path, c.when, c.key);
    for (size_t at; (at = words.find(" | ")) != std::string::npos;) words.replace(at, 3, ", ");
    const std::string got = error_message(c.text);
    EXPECT_NE(got.find("(one of: " + words + "), got 'x'"), std::string::npos)
        << c.path << "." << c.key << ": " << got << "\nunit: " << words;
  }
}

// The defaults `rnicsim params` lists are the values the loader applies when
// a key is left out.
TEST(Params, ListedDefaultsAreTheLoadersDefaults) {
  const auto sections = all_key_sections();
  auto def = [&](std::string_view path, std::string_view key, std::string_view when = "") {
    for (const KeySection& s : sections)
      if (s.path == path && s.when == when)
        for (const KeyInfo& k : s.keys)
          if (k.name == key) return std::string(k.default_value);
    ADD_FAILURE() << "no key " << path << "." << key;
    return std::string();
  };
  auto size = [](const std::string& v) { return parse_size(v).value_or(~0ull); };
  auto time = [](const std::string& v) { return parse_duration(v).value_or(sim::Duration::max()); };
  auto real = [](const std::string& v) { return std::strtod(v.c_str(), nullptr); };
  auto count = [](const std::string& v) { return std::strtoull(v.c_str(), nullptr, 10); };

  const Scenario s = parse_scenario(kTwoLinked +
                                        "switch: {ecn: {}}\npfc: {}\nhost: {}\n"
                                        "captures: [{host: a, file: a.pcap}]\nfaults: [{host: a, action: drop}]\n"
                                        "workloads: [{op: read, from: a, to: b}, {pattern: flows, flows: "
                                        "[{from: a, to: b, size: 1}]}]\n",
                                    "t.yaml");
  EXPECT_EQ(count(def("", "seed")), s.seed);
  EXPECT_EQ(def("", "link_layer"), "roce_v2");
  EXPECT_EQ(s.link_layer, LinkLayer::RoceV2Ipv4);
  EXPECT_EQ(def("", "ib_capture"), fabric::ib_capture_name(s.ib_capture));
  EXPECT_EQ(time(def("host", "poll_delay")), s.host.poll_delay);
  EXPECT_EQ(time(def("host", "mem_poll_interval")), s.host.mem_poll_interval);
  EXPECT_EQ(def("host", "blueflame") == "true", s.host.blueflame);
  EXPECT_EQ(parse_rate(def("links[]", "rate")), s.links[0].rate_bps);
  EXPECT_EQ(time(def("links[]", "delay")), s.links[0].delay);
  EXPECT_EQ(real(def("links[]", "loss")), s.links[0].loss);
  const fabric::SwitchParams& sw = s.fabric.switch_params;
  EXPECT_EQ(size(def("switch", "buffer")), sw.buffer.size_bytes);
  EXPECT_EQ(real(def("switch", "alpha")), sw.buffer.alpha);
  EXPECT_EQ(time(def("switch", "forwarding_latency")), sw.forwarding_latency);
  EXPECT_EQ(size(def("switch.ecn", "kmin")), sw.ecn.kmin_bytes);
  EXPECT_EQ(size(def("switch.ecn", "kmax")), sw.ecn.kmax_bytes);
  EXPECT_EQ(real(def("switch.ecn", "pmax")), sw.ecn.pmax);
  EXPECT_EQ(def("switch.ecn", "mark_on") == "dequeue", sw.ecn.on_dequeue);
  EXPECT_EQ(def("pfc", "priorities"), "[3]");
  EXPECT_EQ(sw.pfc.priorities, 1u << 3);
  EXPECT_EQ(def("pfc", "xoff"), "dynamic");
  EXPECT_EQ(sw.pfc.xoff_bytes, 0u);
  EXPECT_EQ(real(def("pfc", "alpha")), sw.pfc.alpha);
  EXPECT_EQ(size(def("pfc", "xon_offset")), sw.pfc.xon_offset_bytes);
  EXPECT_EQ(count(def("pfc", "quanta")), sw.pfc.quanta);
  EXPECT_EQ(real(def("pfc", "refresh")), sw.pfc.refresh);
  EXPECT_EQ(size(def("pfc", "nic_rx_buffer")), s.fabric.nic_rx_buffer_bytes);
  EXPECT_EQ(s.fabric.pfc_watchdog, sim::Duration::zero());
  EXPECT_EQ(time(def("pfc", "response_delay")), s.fabric.pfc_response_delay);
  EXPECT_EQ(s.fabric.pfc_response_delay, fabric::PortParams{}.pfc_response_delay);
  EXPECT_EQ(count(def("captures[]", "snaplen")), s.captures[0].snaplen);
  EXPECT_EQ(def("faults[]", "direction"), "both");
  EXPECT_TRUE(s.faults[0].tx && s.faults[0].rx);
  EXPECT_EQ(count(def("faults[]", "nth")), s.faults[0].rule.nth);
  EXPECT_EQ(count(def("faults[]", "count")), s.faults[0].rule.count);
  const WorkloadSpec& bw = s.workloads[0];
  EXPECT_EQ(def("workloads[]", "pattern"), "bw");
  EXPECT_EQ(bw.pattern, WorkloadPattern::Bandwidth);
  EXPECT_EQ(bw.name, "workload0");
  EXPECT_EQ(count(def("workloads[]", "priority")), bw.priority);
  EXPECT_EQ(count(def("workloads[]", "qps", "pattern: bw | lat")), bw.qps);
  EXPECT_EQ(count(def("workloads[]", "outs", "pattern: bw | lat")), bw.outs);
  EXPECT_EQ(count(def("workloads[]", "post_list", "pattern: bw | lat")), bw.post_list);
  EXPECT_EQ(bw.size, 65536u);
  EXPECT_EQ(bw.iterations, 5000u);
  EXPECT_EQ(count(def("workloads[]", "tx_depth", "pattern: flows")), s.workloads[1].tx_depth);
  EXPECT_EQ(def("workloads[]", "qp_per_flow", "pattern: flows") == "true", s.workloads[1].qp_per_flow);
  EXPECT_EQ(def("workloads[].flows[]", "op", kFlowList), "write");
  EXPECT_EQ(s.workloads[1].flows[0].op, WorkloadOp::Write);

  const Scenario ib = parse_scenario("link_layer: ib\n" + kTwoLinked + "ib_credits: {}\n", "t.yaml");
  EXPECT_EQ(size(def("ib_credits", "vl_buffer")), ib.fabric.ib_vl_buffer_bytes);
  EXPECT_EQ(ib.ib_capture, fabric::IbCapture::Erf);
  const Scenario native = parse_scenario("link_layer: ib\nib_capture: infiniband\n" + kTwoLinked, "t.yaml");
  EXPECT_EQ(native.ib_capture, fabric::IbCapture::LinktypeInfiniband);
  const Scenario one = parse_scenario(kTwo + "topology: {kind: single_switch}\n", "t.yaml");
  EXPECT_EQ(parse_rate(def("topology", "rate", "kind: single_switch")), one.fabric.topology.links[0].rate_bps);
  EXPECT_EQ(time(def("topology", "delay", "kind: single_switch")), one.fabric.topology.links[0].delay);
}

TEST(FabricKeys, TopologiesBuildHostsSwitchesAndLinks) {
  Scenario s = parse_scenario(
      "topology: {kind: leaf_spine, leaves: 4, spines: 2, hosts_per_leaf: 8, host_rate: 100Gbps, "
      "oversubscription: 2}\n",
      "t.yaml");
  EXPECT_EQ(s.hosts.size(), 32u);
  EXPECT_EQ(s.hosts[9].name, "h9");
  EXPECT_EQ(s.fabric.kind, "leaf_spine");
  EXPECT_EQ(s.fabric.topology.links.size(), 32u + 8u);
  // 8 x 100 Gb/s down, 2 uplinks at 2:1: 200 Gb/s each.
  EXPECT_EQ(s.fabric.topology.links.back().rate_bps, 200'000'000'000u);

  s = parse_scenario("hosts: [{name: a}, {name: b}, {name: c}]\ntopology: {kind: single_switch, delay: 500ns}\n"
                     "switch: {buffer: 2MiB, alpha: 0.5, scheduling: dwrr, dwrr_weights: [1, 2, 0, 0, 0, 0, 0, 4]}\n"
                     "pfc: {priorities: [3, 4], xoff: 64KiB, xon: 32KiB, quanta: 1000, watchdog: 10ms}\n"
                     "workloads: [{op: write, from: a, to: c, priority: 3}]\n",
                     "t.yaml");
  EXPECT_EQ(s.fabric.topology.nodes.size(), 4u);
  EXPECT_EQ(s.fabric.switch_params.buffer.size_bytes, 2u << 20);
  EXPECT_EQ(s.fabric.switch_params.pfc.priorities, (1u << 3) | (1u << 4));
  EXPECT_EQ(s.fabric.switch_params.pfc.xoff_bytes, 64u * 1024);
  EXPECT_EQ(s.fabric.switch_params.pfc.quanta, 1000u);
  EXPECT_EQ(s.fabric.switch_params.dwrr_quantum[1], 2 * s.fabric.switch_params.dwrr_quantum[0]);
  EXPECT_EQ(s.fabric.switch_params.dwrr_quantum[2], 0u);
  EXPECT_EQ(s.fabric.pfc_watchdog, sim::Duration::ms(10));
  EXPECT_EQ(s.workloads[0].priority, 3);
  EXPECT_FALSE(s.fabric.switch_params.ecn.enabled);
  s = parse_scenario(kHosts + "switch: {ecn: {kmin: 5KiB, kmax: 200KiB, pmax: 0.1, priorities: [3]}}\n", "t.yaml");
  EXPECT_TRUE(s.fabric.switch_params.ecn.enabled);
  EXPECT_EQ(s.fabric.switch_params.ecn.kmin_bytes, 5u * 1024);
  EXPECT_EQ(s.fabric.switch_params.ecn.kmax_bytes, 200u * 1024);
  EXPECT_DOUBLE_EQ(s.fabric.switch_params.ecn.pmax, 0.1);
  EXPECT_EQ(s.fabric.switch_params.ecn.priorities, 1u << 3);
  s = parse_scenario("hosts: [{name: a}, {name: b}]\nlinks:\n  - between: [a, b]\n"
                     "    down: [{from: 10us, to: 20us}, {from: 1ms, to: 2ms}]\n"
                     "    gilbert_elliott: {p_good_bad: 0.01, p_bad_good: 0.25, loss_bad: 0.5}\n",
                     "t.yaml");
  ASSERT_EQ(s.fabric.topology.links.size(), 1u);
  const auto& l = s.fabric.topology.links[0];
  ASSERT_EQ(l.down.size(), 2u);
  EXPECT_EQ(l.down[1].first, sim::Duration::ms(1));
  EXPECT_DOUBLE_EQ(l.gilbert_elliott.p_bad_good, 0.25);
  EXPECT_DOUBLE_EQ(l.gilbert_elliott.loss_bad, 0.5);
  s = parse_scenario("hosts: [{name: a}, {name: b}]\ntopology: {kind: single_switch}\n"
                     "captures: [{switch: sw0, port: 1, file: sw.pcap, snaplen: 96}, {host: a, file: a.pcap}]\n",
                     "t.yaml");
  ASSERT_EQ(s.captures.size(), 2u);
  EXPECT_EQ(s.captures[0].node, "sw0");
  EXPECT_EQ(s.captures[0].port, 1u);
  EXPECT_EQ(s.captures[0].snaplen, 96u);
  EXPECT_EQ(s.captures[1].file, "a.pcap");
  EXPECT_EQ(s.captures[1].priorities, 0xFFu);
  s = parse_scenario("hosts: [{name: a}, {name: b}]\nlinks: [{between: [a, b]}]\n"
                     "captures: [{host: b, file: b.pcap, priorities: [3, 5]}]\n",
                     "t.yaml");
  EXPECT_EQ(s.captures[0].priorities, (1u << 3) | (1u << 5));

  s = parse_scenario("topology: {kind: fat_tree, k: 4}\nworkloads: [{pattern: flows, flows: {generate: all_to_all, size: 4KiB}}]\n",
                     "t.yaml");
  EXPECT_EQ(s.hosts.size(), 16u);
  EXPECT_EQ(s.workloads[0].flows.size(), 16u * 15);
}

TEST(FabricKeys, ErrorsNameFileLineAndColumn) {
  expect_error("topology: {kind: ring}\n", 1, 18, "single_switch, leaf_spine, fat_tree");
  expect_error("topology: {kind: leaf_spine, spines: 2, hosts_per_leaf: 4}\n", 1, 11, "missing topology.leaves");
  expect_error("topology: {kind: fat_tree, k: 5}\n", 1, 31, "must be even");
  expect_error("topology: {kind: fat_tree, k: 4, leaves: 2}\n", 1, 34, "unknown key 'leaves'");
  expect_error("topology:\n  kind: leaf_spine\n  leaves: 2\n  spines: 2\n  hosts_per_leaf: 2\n  fabric_rate: 100Gbps\n"
               "  oversubscription: 2\n",
               7, 21, "not both");
  expect_error(kHosts + "switch: {buffer: 1KiB}\n", 6, 18, "at least 16KiB");
  expect_error(kHosts + "switch: {dwrr_weights: [1, 1]}\n", 6, 24, "needs scheduling: dwrr");
  expect_error(kHosts + "switch: {scheduling: dwrr, dwrr_weights: [1, 1]}\n", 6, 42, "8 weights");
  expect_error(kHosts + "pfc: {priorities: [8]}\n", 6, 20, "between 0 and 7");
  expect_error(kHosts + "pfc: {xon: 10KiB}\n", 6, 12, "static pfc.xoff");
  expect_error(kHosts + "pfc: {xoff: lots}\n", 6, 13, "expected pfc.xoff ('dynamic' or bytes, like 64KiB), got 'lots'");
  expect_error(kHosts + "pfc: {refresh: 2}\n", 6, 16, "pfc.refresh");
  expect_error(kHosts + "switch: {ecn: {kmin: 100KiB, kmax: 50KiB}}\n", 6, 36, "kmax must be above kmin");
  expect_error(kHosts + "switch: {ecn: {pmax: 2}}\n", 6, 22, "switch.ecn.pmax");
  const std::string kAb = "hosts: [{name: a}, {name: b}]\nlinks:\n  - between: [a, b]\n";
  expect_error(kAb + "    down: [{from: 20us, to: 10us}]\n", 4, 29, "after down.from");
  expect_error(kAb + "    down: [{from: 20us, to: 30us}, {from: 25us, to: 40us}]\n", 4, 43, "not overlap");
  expect_error(kAb + "    gilbert_elliott: {p_good_bad: 0.1, p_bad_good: 0}\n", 4, 52, "never recovers");
  expect_error(kAb + "    gilbert_elliott: {p_bad_good: 0.5}\n", 4, 22, "needs p_good_bad");
  expect_error(kHosts + "ib_credits: {vl_buffer: 64KiB}\n", 6, 13, "needs link_layer: ib");
  expect_error("link_layer: ib\n" + kHosts + "ib_credits: {vl_buffer: 1KiB}\n", 7, 25, "at least one packet");
  const std::string kStar = "hosts: [{name: a}, {name: b}]\ntopology: {kind: single_switch}\n";
  expect_error(kStar + "captures: [{switch: sw0, port: 2, file: x.pcap}]\n", 3, 32, "between 0 and 1");
  expect_error(kStar + "captures: [{switch: sw0, file: x.pcap}]\n", 3, 12, "needs 'port' (0 to 1)");
  expect_error(kStar + "captures: [{host: sw0, file: x.pcap}]\n", 3, 19, "unknown host 'sw0'");
  expect_error(kStar + "captures: [{host: a, port: 0, file: x.pcap}]\n", 3, 28, "'port' goes with 'switch'");
  expect_error(kStar + "captures: [{host: a, file: x.pcap}, {host: b, file: x.pcap}]\n", 3, 53, "two captures");
  expect_error("hosts: [{name: a}, {name: b}]\nswitches: [{name: a}]\n", 2, 19, "taken already");
  expect_error("hosts: [{name: a}, {name: b}]\nswitches: [{name: s}]\nlinks:\n  - between: [a, s]\n"
               "workloads: [{op: write, from: a, to: b}]\n",
               5, 38, "no path joins 'a' and 'b'");
  expect_error("hosts: [{name: a}]\nlinks: [{between: [a, a]}]\ntopology: {kind: single_switch}\n", 2, 8,
               "do not go together");
  expect_error("link_layer: ib\nhosts: [{name: a}]\npfc: {}\n", 3, 6, "InfiniBand has credits");
  expect_error(kHosts + "workloads: [{op: write, from: a, to: b, priority: 9}]\n", 6, 51, "priority");
}

TEST(NicKeys, EthernetMtuCapsTheRoceMtuAndIsRoceOnly) {
  // As the driver's active MTU: 1500 carries 1024, 4200 and 9000 carry 4096.
  EXPECT_EQ(parse_scenario(kTwoLinked + "nic: {eth_mtu: 1500}\n", "t.yaml").path_mtu, 1024u);
  EXPECT_EQ(parse_scenario(kTwoLinked + "nic: {eth_mtu: 4200}\n", "t.yaml").path_mtu, 4096u);
  EXPECT_EQ(parse_scenario(kTwoLinked + "nic: {eth_mtu: 9000, mtu: 2048}\n", "t.yaml").path_mtu, 2048u);
  EXPECT_EQ(nic::ethernet_mtu(parse_scenario(kTwoLinked, "t.yaml").nic), 4200u);
  EXPECT_EQ(nic::ethernet_mtu(parse_scenario(kTwoLinked + "nic: {mtu: 1024}\n", "t.yaml").nic), 1500u);
  expect_error(kTwoLinked + "nic: {eth_mtu: 300}\n", 3, 16, "carry a 256-byte IB MTU");
  expect_error("link_layer: ib\n" + kTwoLinked + "nic: {eth_mtu: 1500}\n", 4, 16, "RoCE's");
}

TEST(Run, StatsShowThePfcHeadroomMlx5WouldReserve) {
  const std::string dir = (std::filesystem::temp_directory_path() / ("rnicsim_headroom_" + std::to_string(::getpid()))).string();
  RunOptions o = quiet();
  o.out_dir = dir;
  const Summary sum = run_text(
      "hosts: [{name: a}, {name: b}]\ntopology: {kind: single_switch, rate: 100Gbps, delay: 35ns}\n"
      "nic: {eth_mtu: 1500}\npfc: {}\n"
      "workloads: [{op: write, from: a, to: b, size: 64KiB, iterations: 10}]\n",
      "t.yaml", o);
  ASSERT_TRUE(sum.completed);
  std::ifstream in(dir + "/stats.json");
  const auto counters = nlohmann::json::parse(in)["counters"];
  std::filesystem::remove_all(dir);
  int ports = 0;
  for (const auto& [name, value] : counters.items())
    if (name.ends_with(".pfc_headroom_bytes")) {
      EXPECT_EQ(value, 35680) << name;  // 100 Gb/s, 7 m, MTU 1500: mlx5's xoff
      ++ports;
    }
  EXPECT_EQ(ports, 4) << counters;  // both NICs and both switch ports
}

// Two ports at 100 Gb/s with 7 m of cable keep 2 x 35 680 bytes for one
// lossless priority at MTU 1500: a 64 KiB buffer cannot hold them.
TEST(ScenarioParse, ASwitchBufferSmallerThanItsPfcHeadroomIsAnError) {
  const std::string two = "hosts: [{name: a}, {name: b}]\ntopology: {kind: single_switch, rate: 100Gbps, delay: 35ns}\n"
                          "nic: {eth_mtu: 1500}\npfc: {priorities: [3]}\n";
  expect_error(two + "switch: {buffer: 64KiB}\n", 5, 18, "71360 bytes");
  EXPECT_NO_THROW(parse_scenario(two + "switch: {buffer: 72KiB}\n", "t.yaml"));
  EXPECT_NO_THROW(parse_scenario(two, "t.yaml")) << "the default 16 MiB holds it";
}

// A host's own NIC: the scenario's settings with the host's over them (a key,
// or a preset); the other hosts keep the scenario's. The MTU stays the
// scenario's, which the QPs' path MTU and the switches are made from.
const std::string kTwoHosts = "links: [{between: [a, b], rate: 100Gbps, delay: 110ns}]\nnic: {preset: cx5_100g_roce}\n";

TEST(ScenarioParse, AHostsOwnNicIsTheScenariosWithItsKeysOver) {
  const Scenario s = parse_scenario(
      "hosts: [{name: a}, {name: b, nic: {pcie: {host_memory_latency: 300ns}}}, {name: c, nic: {preset: cx6_200g}}]\n"
      "topology: {kind: single_switch}\nnic: {preset: cx5_100g_roce, mtu: 1024}\n",
      "t.yaml");
  ASSERT_EQ(s.hosts.size(), 3u);
  EXPECT_FALSE(s.hosts[0].nic) << "the scenario's";
  ASSERT_TRUE(s.hosts[1].nic);
  EXPECT_EQ(s.hosts[1].nic->pcie.host_memory_latency, sim::Duration::ns(300));
  EXPECT_EQ(s.hosts[1].nic->pcie.latency, s.nic.pcie.latency) << "the rest is the scenario's";
  EXPECT_EQ(s.hosts[1].nic->requester_units, s.nic.requester_units);
  ASSERT_TRUE(s.hosts[2].nic);
  EXPECT_EQ(s.hosts[2].nic->pcie.generation, 4u) << "its own preset";
  EXPECT_EQ(s.hosts[2].nic->mtu, 1024u) << "the scenario's MTU, not the preset's";
}

TEST(ScenarioParse, AHostsNicCannotSetTheMtuOrUnknownKeys) {
  expect_error("hosts: [{name: a}, {name: b, nic: {mtu: 1024}}]\n" + kTwoHosts, 1, 41, "is the scenario's");
  expect_error("hosts: [{name: a}, {name: b, nic: {eth_mtu: 9000}}]\n" + kTwoHosts, 1, 45, "is the scenario's");
  expect_error("hosts: [{name: a}, {name: b, nic: {pcie: {lanes: 7}}}]\n" + kTwoHosts, 1, 50, "lanes");
  expect_error("hosts: [{name: a}, {name: b, nic: {preset: nosuch}}]\n" + kTwoHosts, 1, 44, "no NIC preset 'nosuch'");
}

// b's memory a DRAM read of 300 ns: a READ of b's memory waits for it at b's
// NIC, a READ of a's memory does not; as the scenario's, the host's settings
// change nothing.
TEST(Run, AHostsOwnNicTimesWhatItDoes) {
  const std::string reads = "workloads:\n  - {name: ab, op: read, pattern: lat, from: a, to: b, size: 8, iterations: 50}\n"
                            "  - {name: ba, op: read, pattern: lat, from: b, to: a, size: 8, iterations: 50}\n";
  auto run = [&](const std::string& b_nic) {
    const Summary sum = run_text("seed: 1\nhosts: [{name: a}, {name: b" + b_nic + "}]\n" + kTwoHosts + reads, "t.yaml", quiet());
    EXPECT_TRUE(sum.completed);
    return std::pair(sum.workloads.at(0).lat_p50_ps, sum.workloads.at(1).lat_p50_ps);
  };
  const auto same = run("");
  const auto slow_b = run(", nic: {pcie: {host_memory_latency: 300ns}}");
  EXPECT_EQ(run(", nic: {pcie: {host_memory_latency: 80ns}}"), same) << "the preset's own value";
  EXPECT_EQ(same.first, same.second) << "the two hosts alike";
  EXPECT_GE(slow_b.first, same.first + 200'000) << "b's memory 220 ns slower to read";
  EXPECT_LT(slow_b.second, slow_b.first);
}

TEST(Run, HeadroomOverflowIsReportedLoudly) {
  RunOptions opts;
  opts.quiet = true;
  const Summary sum = run_text(
      "hosts: [{name: a}, {name: b}, {name: c}]\ntopology: {kind: single_switch}\nswitch: {buffer: 512KiB}\n"
      "pfc: {priorities: [3], headroom: 4KiB}\n"
      "workloads: [{pattern: flows, priority: 3, flows: {generate: incast, to: c, size: 1MiB}}]\n",
      "t.yaml", opts);
  EXPECT_TRUE(sum.completed);  // go-back-N recovers what the lossless priority lost
  EXPECT_GT(sum.fabric.switch_drops[static_cast<size_t>(fabric::DropCause::HeadroomOverflow)], 0u);
  EXPECT_GT(sum.retransmissions, 0u);
  std::ostringstream out;
  print_summary(sum, out);
  EXPECT_NE(out.str().find("WARNING: PFC HEADROOM OVERFLOW"), std::string::npos) << out.str();
}
