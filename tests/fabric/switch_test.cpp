// The switch: forwarding, ECMP, shared-buffer drops, PFC (pause frames, paused
// time, no loss on a lossless priority), DWRR, and the topology generators.
#include "fabric/switch.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "fabric/topology.hpp"
#include "packet/packet.hpp"
#include "packet/pfc.hpp"

using namespace rnicsim;
using namespace rnicsim::sim::literals;

namespace {

struct Counter : fabric::FrameSink {
  uint64_t frames = 0, bytes = 0;
  std::map<uint16_t, uint64_t> by_sport;  // UDP source port -> frames
  sim::Time last;
  sim::Simulator* sim = nullptr;
  void receive(fabric::Frame&& f) override {
    ++frames;
    bytes += f.size();
    auto p = packet::parse(f.bytes(), packet::LinkType::Ethernet);
    if (p) ++by_sport[p->fields.udp_src_port];
    if (sim) last = sim->now();
  }
};

packet::Ipv6Addr ip(uint8_t last) { return packet::ipv4_mapped(0x0A000000u | last); }

// A RoCEv2 WRITE ONLY packet of `payload` bytes from 10.0.0.src to 10.0.0.dst.
fabric::Frame roce(fabric::FramePool& pool, uint8_t src, uint8_t dst, uint16_t sport, uint8_t priority,
                   size_t payload = 1000, uint8_t ecn = 0b10) {
  packet::PacketFields f;
  f.ecn = ecn;  // ECT(0) unless told
  f.ip_src = ip(src);
  f.ip_dst = ip(dst);
  f.dscp = static_cast<uint8_t>(priority * 8);
  f.udp_src_port = sport;
  f.opcode = packet::Opcode::RcRdmaWriteOnly;
  f.reth = packet::RethFields{0x1000, packet::Rkey(1), static_cast<uint32_t>(payload)};
  f.payload_length = static_cast<uint32_t>(payload);
  packet::derive_fields(f);
  std::vector<std::byte> data(payload, std::byte{0x5A});
  fabric::Frame fr = pool.acquire(pool.buffer_size());
  auto n = packet::build(f, data, fr.buffer());
  EXPECT_TRUE(n);
  fr.resize(*n);
  fr.meta().priority = priority;
  return fr;
}

// Hosts 1..n, each on its own switch port i-1 (100 Gb/s, 1 us).
struct Star {
  sim::Simulator sim{7};
  fabric::FramePool pool;
  std::unique_ptr<fabric::Switch> sw;
  std::vector<std::unique_ptr<fabric::Port>> hosts;
  std::vector<Counter> rx;
  Star(size_t n, fabric::SwitchParams params, std::shared_ptr<fabric::Destinations> numbering = nullptr) : rx(n) {
    sw = std::make_unique<fabric::Switch>(sim, pool, "sw", params, packet::LinkType::Ethernet);
    if (numbering) sw->share_destinations(numbering);
    fabric::PortParams p;
    for (size_t i = 0; i < n; ++i) sw->add_port(p);
    sw->finish();
    for (size_t i = 0; i < n; ++i) {
      hosts.push_back(std::make_unique<fabric::Port>(sim, "h" + std::to_string(i + 1), p));
      fabric::Port::connect(*hosts[i], sw->port(i));
      rx[i].sim = &sim;
      hosts[i]->set_receiver(&rx[i]);
      sw->add_route(fabric::RouteKey::of_ip(ip(static_cast<uint8_t>(i + 1))), {static_cast<uint16_t>(i)});
    }
  }
  void run() { sim.scheduler().run_until(sim::Time::max()); }
};

fabric::SwitchParams pfc_params(uint64_t buffer) {
  fabric::SwitchParams sp;
  sp.buffer.size_bytes = buffer;
  sp.pfc.priorities = 1u << 3;
  return sp;
}

}  // namespace

TEST(Switch, ForwardsByDestinationIpAndDropsUnknownOnes) {
  Star s(3, {});
  s.hosts[0]->send(roce(s.pool, 1, 3, 0xC000, 0));
  s.hosts[0]->send(roce(s.pool, 1, 2, 0xC000, 0));
  s.hosts[1]->send(roce(s.pool, 2, 9, 0xC000, 0));  // nobody has 10.0.0.9
  s.run();
  EXPECT_EQ(s.rx[0].frames, 0u);
  EXPECT_EQ(s.rx[1].frames, 1u);
  EXPECT_EQ(s.rx[2].frames, 1u);
  EXPECT_EQ(s.sw->counters().drops[static_cast<size_t>(fabric::DropCause::NoRoute)], 1u);
  EXPECT_EQ(s.sw->buffer().shared_used(), 0u);
  EXPECT_EQ(s.pool.in_use(), 0u);
}

// A switch reads a frame's headers once per numbering of destinations: the
// frame carries what it read to the switches after it, until its bytes change.
TEST(Switch, AFrameCarriesItsDestinationNumberUntilItsBytesChange) {
  auto numbering = std::make_shared<fabric::Destinations>();
  Star s(2, {}, numbering);
  const uint32_t to_h1 = numbering->find(fabric::RouteKey::of_ip(ip(1)));
  ASSERT_NE(to_h1, fabric::Destinations::kNone);
  EXPECT_EQ(numbering->find(fabric::RouteKey::of_ip(ip(9))), fabric::Destinations::kNone);
  // A frame for h2 that says, in the numbering the switch uses, it is for h1: the
  // switch believes it (it reads no header), which shows the number is used.
  fabric::Frame told = roce(s.pool, 1, 2, 0xC000, 0);
  told.meta().route = {numbering.get(), to_h1, 0, 14, {}};
  s.hosts[1]->send(std::move(told));
  // The same, but the bytes were opened for writing since: read again, to h2.
  fabric::Frame changed = roce(s.pool, 1, 2, 0xC000, 0);
  changed.meta().route = {numbering.get(), to_h1, 0, 14, {}};
  (void)changed.bytes();
  s.hosts[0]->send(std::move(changed));
  // Another numbering's number means nothing here: read again, to h2.
  fabric::Destinations other;
  fabric::Frame stranger = roce(s.pool, 1, 2, 0xC000, 0);
  stranger.meta().route = {&other, to_h1, 0, 14, {}};
  s.hosts[0]->send(std::move(stranger));
  s.run();
  EXPECT_EQ(s.rx[0].frames, 1u);
  EXPECT_EQ(s.rx[1].frames, 2u);
}

TEST(Switch, LossyIncastOverflowsTheSharedBuffer) {
  fabric::SwitchParams sp;
  sp.buffer.size_bytes = 256 * 1024;
  Star s(3, sp);
  for (int i = 0; i < 1000; ++i) {
    s.hosts[0]->send(roce(s.pool, 1, 3, 0xC000, 0));
    s.hosts[1]->send(roce(s.pool, 2, 3, 0xC001, 0));
  }
  s.run();
  const auto& c = s.sw->counters();
  EXPECT_GT(c.drops_total(), 300u);  // two 100G senders into one 100G port: about half is lost
  EXPECT_EQ(c.drops[static_cast<size_t>(fabric::DropCause::HeadroomOverflow)], 0u);
  EXPECT_EQ(s.rx[2].frames + c.drops_total(), 2000u);
  // Dynamic threshold alpha = 1: one queue holds at most half of the buffer.
  EXPECT_LE(s.sw->buffer().peak_used(), 256u * 1024 / 2 + 1100);
}

TEST(Switch, PfcIncastIsLosslessAndPausesTheSenders) {
  Star s(3, pfc_params(1024 * 1024));
  for (int i = 0; i < 1000; ++i) {
    s.hosts[0]->send(roce(s.pool, 1, 3, 0xC000, 3));
    s.hosts[1]->send(roce(s.pool, 2, 3, 0xC001, 3));
  }
  s.run();
  EXPECT_EQ(s.sw->counters().drops_total(), 0u);
  EXPECT_EQ(s.rx[2].frames, 2000u);
  for (size_t i = 0; i < 2; ++i) {
    const fabric::PfcGenerator* g = s.sw->pfc(i);
    ASSERT_NE(g, nullptr);
    EXPECT_GT(g->counters().xoff[3], 0u);
    EXPECT_EQ(g->counters().xoff[3], g->counters().xon[3]);  // every pause ends with an XON
    const auto& hc = s.hosts[i]->counters();
    EXPECT_EQ(hc.pause_rx[3], g->counters().xoff[3] + g->counters().refresh[3]);
    EXPECT_EQ(hc.xon_rx[3], g->counters().xon[3]);
    EXPECT_GT(hc.paused_time[3], 1_us);
    // A pause lasts until its XON, never longer than its quanta.
    EXPECT_LE(hc.paused_time[3], s.hosts[i]->pause_quantum() * (0xFFFF * static_cast<int64_t>(hc.pause_rx[3])));
    EXPECT_EQ(hc.pause_rx[2], 0u);
  }
  // The receiver's port was kept busy: 2000 frames at line rate, give or take
  // the first frame's way there.
  const auto line = s.hosts[2]->wire_time(s.rx[2].bytes / 2000);
  EXPECT_LT(s.rx[2].last - sim::Time::zero(), line * 2000 + 3_us);
}

TEST(Switch, PauseStopsAPriorityForItsQuantaAfterTheResponseDelay) {
  sim::Simulator sim(1);
  fabric::FramePool pool;
  fabric::PortParams p;  // 100 Gb/s: a quantum is 5.12 ns
  ASSERT_EQ(p.pfc_response_delay, 2408_ns);
  fabric::Port a(sim, "a", p), b(sim, "b", p);
  fabric::Port::connect(a, b);
  Counter rx;
  rx.sim = &sim;
  a.set_receiver(&rx);
  EXPECT_EQ(b.pause_quantum(), 5120_ps);
  // b pauses priority 3 of a for 1000 quanta (5.12 us).
  packet::PfcFields pf;
  pf.enable = 1u << 3;
  pf.quanta[3] = 1000;
  fabric::Frame pause = pool.acquire(packet::kPfcFrameBytes);
  packet::write_pfc(pf, pause.bytes());
  b.send_control(std::move(pause));
  // It arrives after 1 us and takes effect 2.408 us later.
  sim.scheduler().run_until(sim::Time::zero() + 3_us);
  EXPECT_FALSE(a.paused(3));
  sim.scheduler().run_until(sim::Time::zero() + 4_us);
  EXPECT_TRUE(a.paused(3));
  // a sends one frame on priority 3 and one on priority 0 back to b.
  Counter at_b;
  at_b.sim = &sim;
  b.set_receiver(&at_b);
  fabric::Frame paused_one = roce(pool, 1, 2, 1, 3);
  const sim::Duration frame_time = a.wire_time(paused_one.size());
  a.send(std::move(paused_one));
  a.send(roce(pool, 1, 2, 2, 0));
  sim.scheduler().run_until(sim::Time::max());
  EXPECT_EQ(at_b.frames, 2u);
  EXPECT_EQ(at_b.by_sport[2], 1u);
  // The pause arrived after 64+24 bytes of wire time and 1 us, took effect after
  // the response delay and lasted 5.12 us.
  const sim::Time pause_start = sim::Time::zero() + a.wire_time(60) + 1_us + p.pfc_response_delay;
  EXPECT_EQ(a.counters().paused_time[3], 5120_ns);
  EXPECT_EQ(at_b.last, pause_start + 5120_ns + frame_time + 1_us);
  EXPECT_EQ(rx.frames, 0u);  // the MAC consumed the pause
  EXPECT_EQ(a.counters().pause_rx[3], 1u);
}

TEST(Switch, PfcFrameBytes) {
  packet::PfcFields f;
  f.src = {0x02, 0x53, 0, 0, 0, 1};
  f.enable = 0x88;
  f.quanta[3] = 0xFFFF;
  f.quanta[7] = 0;
  std::array<std::byte, packet::kPfcFrameBytes> b{};
  packet::write_pfc(f, b);
  const uint8_t expect[] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x02, 0x53, 0, 0, 0, 1, 0x88, 0x08,
                            0x01, 0x01, 0x00, 0x88, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < sizeof expect; ++i) EXPECT_EQ(static_cast<uint8_t>(b[i]), expect[i]) << i;
  auto back = packet::parse_pfc(b);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, f);
}

TEST(Switch, PfcWatchdogStopsHonouringAStorm) {
  sim::Simulator sim(1);
  fabric::FramePool pool;
  fabric::PortParams p;
  p.pfc_watchdog = 100_us;
  fabric::Port a(sim, "a", p), b(sim, "b", p);
  fabric::Port::connect(a, b);
  fabric::PfcParams pp;
  pp.priorities = 1u << 3;
  fabric::PfcGenerator g(sim, pool, b, {2, 0, 0, 0, 0, 2}, pp);
  g.set_congested(3, true);  // and never again uncongested: a storm
  Counter at_b;
  b.set_receiver(&at_b);
  a.send(roce(pool, 1, 2, 1, 3));
  sim.scheduler().run_until(sim::Time::zero() + 1_ms);
  EXPECT_GE(a.counters().watchdog_trips, 1u);
  EXPECT_EQ(at_b.frames, 1u);
  EXPECT_GT(a.counters().pause_ignored[3], 0u);
}

TEST(Switch, DwrrSharesByQuantum) {
  fabric::SwitchParams sp;
  sp.dwrr_quantum = {1000, 3000, 0, 0, 0, 0, 0, 0};
  Star s(3, sp);
  for (int i = 0; i < 400; ++i) {
    s.hosts[0]->send(roce(s.pool, 1, 3, 10, 0, 1000));
    s.hosts[1]->send(roce(s.pool, 2, 3, 11, 1, 1000));
  }
  // Stop while both queues are still backlogged at the switch.
  s.sim.scheduler().run_until(sim::Time::zero() + 30_us);
  const double ratio = static_cast<double>(s.rx[2].by_sport[11]) / static_cast<double>(s.rx[2].by_sport[10]);
  EXPECT_NEAR(ratio, 3.0, 0.3);
}

TEST(Switch, EcmpSpreadsFlowsAndKeepsEachOnOnePath) {
  sim::Simulator sim(3);
  fabric::FramePool pool;
  fabric::Switch sw(sim, pool, "leaf0", {}, packet::LinkType::Ethernet);
  for (int i = 0; i < 5; ++i) sw.add_port({});
  sw.finish();
  const auto dest = fabric::RouteKey::of_ip(ip(9));
  sw.add_route(dest, {1, 2, 3, 4});
  fabric::PriorityMap map;
  std::map<int, int> per_port;
  for (uint16_t sport = 0xC000; sport < 0xC000 + 400; ++sport) {
    fabric::Frame f = roce(pool, 1, 9, sport, 0, 64);
    const auto c = fabric::classify(f.bytes(), packet::LinkType::Ethernet, map);
    ASSERT_TRUE(c);
    const int port = sw.route_of(dest, c->flow_hash);
    EXPECT_EQ(port, sw.route_of(dest, c->flow_hash));
    ++per_port[port];
  }
  ASSERT_EQ(per_port.size(), 4u);
  for (const auto& [port, n] : per_port) EXPECT_NEAR(n, 100, 30) << "port " << port;
}

TEST(Topology, LeafSpineRoutesOverEverySpine) {
  const auto t = fabric::leaf_spine(4, 3, 2, {}, {}, {400'000'000'000, 500_ns});
  EXPECT_EQ(t.hosts().size(), 8u);
  EXPECT_EQ(t.links.size(), 8u + 12u);
  const auto routes = fabric::shortest_path_routes(t);
  ASSERT_EQ(routes.size(), 7u);
  // leaf0: its own hosts on one port each, the others over the 3 spines.
  const auto& leaf0 = routes[0];
  EXPECT_EQ(t.nodes[leaf0.node].name, "leaf0");
  for (const auto& [host, ports] : leaf0.to_host) {
    const bool local = t.nodes[host].name == "h0" || t.nodes[host].name == "h1";
    EXPECT_EQ(ports.size(), local ? 1u : 3u) << t.nodes[host].name;
  }
  EXPECT_EQ(t.path_delay(static_cast<uint32_t>(t.find("h0")), static_cast<uint32_t>(t.find("h7"))),
            1_us + 500_ns + 500_ns + 1_us);
}

TEST(Topology, FatTreeHasKCubedOverFourHostsAndFullBisection) {
  const auto t = fabric::fat_tree(4, {}, {});
  EXPECT_EQ(t.hosts().size(), 16u);
  EXPECT_EQ(t.nodes.size() - 16, 20u);  // 4 cores, 8 aggregation, 8 edge
  const auto routes = fabric::shortest_path_routes(t);
  // An edge switch reaches a host in another pod over both its aggregation switches.
  const int edge = t.find("edge0_0");
  for (const auto& r : routes) {
    if (r.node != static_cast<uint32_t>(edge)) continue;
    for (const auto& [host, ports] : r.to_host)
      if (t.nodes[host].name == "h15") {
        EXPECT_EQ(ports.size(), 2u);
      }
  }
  EXPECT_THROW(fabric::fat_tree(3, {}, {}), std::invalid_argument);
}

TEST(Switch, PfcInBothDirectionsOfAPortIsLossless) {
  // h1 and h2 congest h3's port; h3 sends back to h1 at the same time, so
  // port 0 sends data to h1 while it pauses and resumes h1.
  Star s(3, pfc_params(512 * 1024));
  for (int i = 0; i < 1000; ++i) {
    s.hosts[0]->send(roce(s.pool, 1, 3, 0xC000, 3));
    s.hosts[1]->send(roce(s.pool, 2, 3, 0xC001, 3));
    s.hosts[2]->send(roce(s.pool, 3, 1, 0xC002, 3, 4000));
  }
  s.run();
  EXPECT_EQ(s.sw->counters().drops_total(), 0u);
  EXPECT_EQ(s.rx[2].frames, 2000u);
  EXPECT_EQ(s.rx[0].frames, 1000u);
  EXPECT_GT(s.sw->pfc(0)->counters().xon[3], 0u);
}

TEST(Switch, EcnMarksByQueueLengthAndKeepsChecksumsRight) {
  fabric::SwitchParams sp;
  sp.buffer.size_bytes = 4 * 1024 * 1024;
  sp.ecn.enabled = true;
  sp.ecn.kmin_bytes = 20 * 1024;
  sp.ecn.kmax_bytes = 60 * 1024;
  sp.ecn.pmax = 0.5;
  Star s(3, sp);
  struct Check : fabric::FrameSink {
    uint64_t frames = 0, ce = 0, bad = 0, not_ect = 0;
    void receive(fabric::Frame&& f) override {
      ++frames;
      auto p = packet::parse(f.bytes(), packet::LinkType::Ethernet);
      if (!p || !packet::icrc_ok(f.bytes(), *p) || !packet::ipv4_checksum_ok(f.bytes(), *p)) ++bad;
      if (p && p->fields.ecn == 3) ++ce;
      if (p && p->fields.ecn == 0) ++not_ect;
    }
  } check;
  s.hosts[2]->set_receiver(&check);
  // Alone, h1's 100 frames never queue: nothing is marked. Then h1 and h2
  // together build a queue at h3's port: past kmin frames get marked.
  for (int i = 0; i < 100; ++i) s.hosts[0]->send(roce(s.pool, 1, 3, 0xC000, 0));
  s.run();
  EXPECT_EQ(check.frames, 100u);
  EXPECT_EQ(check.ce, 0u);
  for (int i = 0; i < 300; ++i) {
    // Every other frame of h2 is Not-ECT: never marked.
    s.hosts[0]->send(roce(s.pool, 1, 3, 0xC000, 0));
    s.hosts[1]->send(roce(s.pool, 2, 3, 0xC001, 0, 1000, i % 2 ? 0 : 0b10));
  }
  s.run();
  EXPECT_EQ(check.frames, 700u);
  EXPECT_GT(check.ce, 100u);
  EXPECT_LT(check.ce, 450u);
  EXPECT_EQ(check.ce, s.sw->counters().ecn_marked);
  EXPECT_EQ(check.bad, 0u);
  EXPECT_EQ(check.not_ect, 150u);  // left alone, queue or not
}

TEST(Switch, TooSmallHeadroomOverflowsAndIsCounted) {
  // 1 us cables at 100 Gb/s need about 28 KiB of headroom; give 4 KiB.
  fabric::SwitchParams sp = pfc_params(512 * 1024);
  sp.pfc.headroom_bytes = 4096;
  Star s(3, sp);
  for (int i = 0; i < 1000; ++i) {
    s.hosts[0]->send(roce(s.pool, 1, 3, 0xC000, 3));
    s.hosts[1]->send(roce(s.pool, 2, 3, 0xC001, 3));
  }
  s.run();
  const auto& c = s.sw->counters();
  const uint64_t overflow = c.drops[static_cast<size_t>(fabric::DropCause::HeadroomOverflow)];
  EXPECT_GT(overflow, 0u);
  EXPECT_EQ(overflow, c.drops_total());  // the lossless priority lost nothing else
  EXPECT_EQ(s.rx[2].frames + overflow, 2000u);
  // The default headroom for the same links holds everything (PfcIncastIsLosslessAndPausesTheSenders).
  EXPECT_GT(fabric::default_headroom(s.sw->port(0).params(), sp.eth_mtu), 25u * 1024);
}

TEST(Pfc, DefaultHeadroomIsWhatMlx5ReservesForTheLink) {
  fabric::PortParams link;
  link.delay = 35_ns;  // 7 m at 5 ns/m
  // The mlx5 driver's xoff for 100 Gb/s, 7 m, MTU 1500:
  // (301 + 216 x 7 / 100) x 100000 / 1000 + 272 x 1500 / 100 = 35 680 bytes.
  EXPECT_EQ(fabric::default_headroom(link, 1500), 35680u);
  EXPECT_EQ(fabric::default_headroom(link, 9000), 31600u + 24480u);
  link.rate_bps = 40'000'000'000;
  EXPECT_EQ(fabric::default_headroom(link, 1500), 16720u);  // (301 + 15) x 40 + 4080
  // The response delay is the budget's first term: without it, cable and MTUs.
  link.pfc_response_delay = sim::Duration::zero();
  EXPECT_EQ(fabric::default_headroom(link, 1500), 600u + 4080u);
}

TEST(Switch, PauseRefreshedBeforeItRunsOutKeepsThePeerPausedUntilXon) {
  sim::Simulator sim(1);
  fabric::FramePool pool;
  fabric::PortParams p;
  fabric::Port a(sim, "a", p), b(sim, "b", p);
  fabric::Port::connect(a, b);
  fabric::PfcParams pp;
  pp.priorities = 1u << 3;
  pp.quanta = 1000;  // 5.12 us at 100 Gb/s, refreshed every 2.56 us
  fabric::PfcGenerator g(sim, pool, b, {2, 0, 0, 0, 0, 2}, pp);
  sim::Event on([&] { g.set_congested(3, true); }, "on"), off([&] { g.set_congested(3, false); }, "off");
  sim.scheduler().schedule(on, sim::Time::zero() + 10_us);
  sim.scheduler().schedule(off, sim::Time::zero() + 110_us);
  sim.scheduler().run_until(sim::Time::max());
  // Paused from the XOFF's arrival to the XON's: exactly the 100 us of congestion,
  // never running out in between (that would show as less).
  EXPECT_EQ(a.counters().paused_time[3], 100_us);
  EXPECT_EQ(g.counters().refresh[3], 39u);  // at 12.56, 15.12, ... 107.84 us
  EXPECT_EQ(a.counters().pause_rx[3], 40u);
  EXPECT_EQ(a.counters().xon_rx[3], 1u);
  EXPECT_FALSE(a.paused(3));
}
