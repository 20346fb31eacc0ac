// Scenario layer: unit parsing, scenario validation with exact error positions,
// and whole runs of a tiny scenario.
#include <gtest/gtest.h>

#include <string>

#include "scenario/runner.hpp"
#include "scenario/scenario.hpp"
#include "scenario/units.hpp"

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
  EXPECT_EQ(w.count, 10u);
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
  expect_error(kHosts + "workloads:\n  - op: read\n    from: a\n    to: b\n", 7, 9, "op");
  expect_error(kHosts + "workloads:\n  - op: write\n    from: a\n    to: b\n    size: 1.5\n", 10, 11, "size");
  expect_error(kHosts + "workloads:\n  - op: write\n    from: a\n    to: b\n    count: 0\n", 10, 12, "count");
  expect_error(kHosts + "workloads:\n  - op: write\n    pattern: lat\n    from: a\n    to: b\n", 7, 9, "pattern 'lat'");
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

RunOptions quiet() {
  RunOptions o;
  o.quiet = true;
  return o;
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

}  // namespace
