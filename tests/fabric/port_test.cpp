#include "fabric/port.hpp"

#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "fabric/pcap_tap.hpp"

using namespace rnicsim;
using namespace rnicsim::sim::literals;

namespace {
struct Recorder : fabric::FrameSink {
  sim::Simulator& sim;
  std::vector<std::pair<sim::Time, size_t>> got;
  std::vector<uint8_t> first_bytes;
  explicit Recorder(sim::Simulator& s) : sim(s) {}
  void receive(fabric::Frame&& f) override {
    got.emplace_back(sim.now(), f.size());
    first_bytes.push_back(static_cast<uint8_t>(f.bytes()[0]));
  }
};

fabric::Frame make(fabric::FramePool& pool, size_t n, uint8_t tag, uint8_t prio = 0) {
  fabric::Frame f = pool.acquire(n);
  for (auto& b : f.bytes()) b = std::byte{tag};
  f.meta().priority = prio;
  return f;
}
}  // namespace

TEST(Port, SerializationPlusPropagation) {
  sim::Simulator s(1);
  fabric::FramePool pool;
  fabric::PortParams p;  // 100 Gb/s, 1 us
  fabric::Port a(s, "a", p), b(s, "b", p);
  fabric::Port::connect(a, b);
  Recorder rx(s);
  b.set_receiver(&rx);
  ASSERT_TRUE(a.send(make(pool, 1000, 1)));
  ASSERT_TRUE(a.send(make(pool, 1000, 2)));
  s.scheduler().run_until(sim::Time::max());
  ASSERT_EQ(rx.got.size(), 2u);
  const auto per_frame = sim::serialization_time(1024, 100'000'000'000);  // +24 bytes overhead
  EXPECT_EQ(rx.got[0].first, sim::Time::zero() + per_frame + 1_us);
  EXPECT_EQ(rx.got[1].first, sim::Time::zero() + per_frame * 2 + 1_us);
  EXPECT_EQ(a.counters().tx_frames, 2u);
  EXPECT_EQ(b.counters().rx_bytes, 2000u);
  EXPECT_EQ(pool.in_use(), 0u);
}

// A frame arrives as the receiving port's unit, with the key the sender took
// when it left (as a crossing record would carry it between schedulers).
// Credit returns as the sender's unit: the frame that waited for it starts
// then, and a tap on the sender sees it go as unit 1.
TEST(Port, ArrivalsRunAsTheReceiversUnitAndCreditAsTheSenders) {
  sim::Simulator s(1);
  fabric::FramePool pool;
  fabric::PortParams p;
  p.vl_credit_bytes = 1100;  // one 1000-byte frame at a time
  fabric::Port a(s, "a", p, sim::Actor(1)), b(s, "b", p, sim::Actor(2));
  EXPECT_EQ(b.actor(), sim::Actor(2));
  fabric::Port::connect(a, b);
  struct Sink : fabric::FrameSink {
    sim::Simulator& sim;
    fabric::Port& port;
    std::vector<sim::Actor> acting;
    Sink(sim::Simulator& s, fabric::Port& p) : sim(s), port(p) {}
    void receive(fabric::Frame&& f) override {
      acting.push_back(sim.scheduler().acting());
      port.return_credit(0, f.size());
    }
  } rx(s, b);
  struct Tap : fabric::FrameTap {
    sim::Simulator& sim;
    std::vector<sim::Actor> acting;
    explicit Tap(sim::Simulator& s) : sim(s) {}
    void capture(sim::Time, std::span<const std::byte>, size_t) override { acting.push_back(sim.scheduler().acting()); }
  } tap(s);
  b.set_receiver(&rx);
  a.add_tap(&tap);
  ASSERT_TRUE(a.send(make(pool, 1000, 1)));
  ASSERT_TRUE(a.send(make(pool, 1000, 2)));
  s.scheduler().run_until(sim::Time::max());
  EXPECT_EQ(rx.acting, (std::vector<sim::Actor>{sim::Actor(2), sim::Actor(2)}));
  // The first frame left from outside (the test's send); the second when the credit came back.
  EXPECT_EQ(tap.acting, (std::vector<sim::Actor>{sim::Actor(), sim::Actor(1)}));
  EXPECT_EQ(a.credits(0), p.vl_credit_bytes);
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(Port, ShortFramesArePaddedOnTheWire) {
  sim::Simulator s(1);
  fabric::Port a(s, "a", {});
  EXPECT_EQ(a.wire_time(10), a.wire_time(60));
  EXPECT_EQ(a.wire_time(60), 6720_ps);  // 84 bytes at 100 Gb/s
}

TEST(Port, StrictPriorityAndQueueLimit) {
  sim::Simulator s(1);
  fabric::FramePool pool;
  fabric::PortParams p;
  p.queue_bytes = 2500;
  fabric::Port a(s, "a", p), b(s, "b", p);
  fabric::Port::connect(a, b);
  Recorder rx(s);
  b.set_receiver(&rx);
  ASSERT_TRUE(a.send(make(pool, 1000, 1, 0)));  // goes on the wire at once
  ASSERT_TRUE(a.send(make(pool, 1000, 2, 0)));
  ASSERT_TRUE(a.send(make(pool, 1000, 3, 0)));
  EXPECT_FALSE(a.send(make(pool, 1000, 4, 0)));  // 3000 > 2500 queued bytes
  ASSERT_TRUE(a.send(make(pool, 1000, 5, 3)));  // other priority has its own room
  s.scheduler().run_until(sim::Time::max());
  EXPECT_EQ(rx.first_bytes, (std::vector<uint8_t>{1, 5, 2, 3}));
  EXPECT_EQ(a.counters().drops_queue_full, 1u);
}

TEST(Port, LossIsSeededAndCounted) {
  auto run = [](uint64_t seed) {
    sim::Simulator s(seed);
    fabric::FramePool pool;
    fabric::PortParams p;
    p.loss_rate = 0.1;
    fabric::Port a(s, "a", p), b(s, "b", p);
    fabric::Port::connect(a, b);
    Recorder rx(s);
    b.set_receiver(&rx);
    for (int i = 0; i < 1000; ++i) {
      a.send(make(pool, 100, static_cast<uint8_t>(i)));
      s.scheduler().run_until(sim::Time::max());
    }
    EXPECT_EQ(rx.got.size() + a.counters().drops_loss, 1000u);
    return rx.first_bytes;
  };
  const auto r1 = run(3), r2 = run(3), r3 = run(4);
  EXPECT_EQ(r1, r2);
  EXPECT_NE(r1, r3);
  EXPECT_GT(r1.size(), 850u);
  EXPECT_LT(r1.size(), 950u);
}

TEST(PcapTap, WritesNanosecondTimestampsFromSimulatedTime) {
  const std::string path = (std::filesystem::temp_directory_path() / ("rnicsim_tap_test_" + std::to_string(::getpid()) + ".pcap")).string();
  {
    sim::Simulator s(1);
    fabric::FramePool pool;
    fabric::Port a(s, "a", {}), b(s, "b", {});
    fabric::Port::connect(a, b);
    fabric::PcapTap tap(path, fabric::CaptureLinkType::Ethernet);
    b.add_tap(&tap);
    a.send(make(pool, 100, 9));
    s.scheduler().run_until(sim::Time::max());
    EXPECT_EQ(tap.frames(), 1u);
  }
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  ASSERT_NE(p, nullptr) << err;
  EXPECT_EQ(pcap_datalink(p), DLT_EN10MB);
  pcap_pkthdr* h;
  const u_char* data;
  ASSERT_EQ(pcap_next_ex(p, &h, &data), 1);
  EXPECT_EQ(h->len, 100u);
  EXPECT_EQ(data[0], 9);
  // 124 bytes at 100 Gb/s = 9.92 ns, plus 1 us.
  EXPECT_EQ(h->ts.tv_sec, 0);
  EXPECT_EQ(h->ts.tv_usec, 1009);  // nanoseconds, truncated from 1009.92
  pcap_close(p);
  std::filesystem::remove(path);
}

namespace {
// Stands in for the packet layer's CRC: the last 4 bytes become 0xCC.
void fake_crc(std::span<std::byte> b) noexcept {
  for (size_t i = b.size() - 4; i < b.size(); ++i) b[i] = std::byte{0xCC};
}

struct Capture : fabric::FrameTap {
  std::vector<std::vector<std::byte>> frames;
  void capture(sim::Time, std::span<const std::byte> bytes, size_t) override { frames.emplace_back(bytes.begin(), bytes.end()); }
};

struct Keeper : fabric::FrameSink {
  std::vector<fabric::Frame> got;
  void receive(fabric::Frame&& f) override { got.push_back(std::move(f)); }
};

fabric::Frame deferred(fabric::FramePool& pool) {
  fabric::Frame f = pool.acquire(64);
  for (auto& b : f.bytes()) b = std::byte{0x11};  // the CRC field holds stale bytes
  f.defer_seal(&fake_crc);
  return f;
}
}  // namespace

TEST(Frame, DeferredSealIsCompletedByTheFirstLook) {
  fabric::FramePool pool;
  fabric::Frame f = deferred(pool);
  EXPECT_TRUE(f.intact());
  EXPECT_EQ(f.bytes_as_built()[63], std::byte{0x11});  // not computed yet
  fabric::Frame moved = std::move(f);
  EXPECT_TRUE(moved.intact());
  EXPECT_FALSE(f.intact());  // NOLINT(bugprone-use-after-move): a moved-from frame is empty
  const fabric::Frame& seen = moved;
  EXPECT_EQ(seen.bytes()[63], std::byte{0xCC});  // a const look completes it too
  EXPECT_FALSE(moved.intact());
  // Changing the bytes of a frame first completes the seal, then the change stands.
  fabric::Frame g = deferred(pool);
  g.bytes()[60] = std::byte{0x00};
  EXPECT_FALSE(g.intact());
  EXPECT_EQ(g.bytes()[60], std::byte{0x00});
  EXPECT_EQ(g.bytes()[61], std::byte{0xCC});
  fabric::Frame h = deferred(pool);
  h.resize(32);  // truncation by a fault model: sealed first
  EXPECT_FALSE(h.intact());
}

TEST(Frame, TapsSeeCompletedCrcsAndUntappedFramesStayIntact) {
  sim::Simulator s(1);
  fabric::FramePool pool;
  fabric::Port a(s, "a", {}), b(s, "b", {});
  fabric::Port::connect(a, b);
  Keeper rx;
  b.set_receiver(&rx);
  ASSERT_TRUE(a.send(deferred(pool)));
  s.scheduler().run_until(sim::Time::max());
  ASSERT_EQ(rx.got.size(), 1u);
  EXPECT_TRUE(rx.got[0].intact());  // nobody looked: the CRC was never computed

  Capture tap;
  a.add_tap(&tap);
  ASSERT_TRUE(a.send(deferred(pool)));
  s.scheduler().run_until(sim::Time::max());
  ASSERT_EQ(rx.got.size(), 2u);
  ASSERT_EQ(tap.frames.size(), 1u);
  EXPECT_EQ(tap.frames[0][63], std::byte{0xCC});
  EXPECT_FALSE(rx.got[1].intact());
  EXPECT_EQ(rx.got[1].bytes_as_built()[63], std::byte{0xCC});
}

TEST(Port, GilbertElliottLossComesInBurstsAtTheStationaryRate) {
  sim::Simulator s(9);
  fabric::FramePool pool;
  fabric::PortParams p;
  p.queue_bytes = 64u << 20;
  p.gilbert_elliott = {0.01, 0.2, 0.0, 1.0};  // bad 1/21 of the time, bursts of 5 on average
  fabric::Port a(s, "a", p), b(s, "b", p);
  fabric::Port::connect(a, b);
  struct Seq : fabric::FrameSink {
    std::vector<uint32_t> got;
    void receive(fabric::Frame&& f) override {
      uint32_t v = 0;
      std::memcpy(&v, f.bytes().data(), 4);
      got.push_back(v);
    }
  } rx;
  b.set_receiver(&rx);
  constexpr uint32_t kFrames = 200000;
  for (uint32_t i = 0; i < kFrames; ++i) {
    fabric::Frame f = pool.acquire(64);
    std::memcpy(f.bytes().data(), &i, 4);
    a.send(std::move(f));
  }
  s.scheduler().run_until(sim::Time::max());
  const uint64_t lost = kFrames - rx.got.size();
  EXPECT_EQ(lost, a.counters().drops_loss);
  EXPECT_NEAR(static_cast<double>(lost) / kFrames, 0.01 / 0.21, 0.006);
  // Bursts: runs of consecutive lost frames average 1 / p_bad_good = 5.
  uint64_t bursts = 0;
  uint32_t expect = 0;
  for (uint32_t v : rx.got) {
    if (v != expect) ++bursts;
    expect = v + 1;
  }
  if (expect != kFrames) ++bursts;
  EXPECT_NEAR(static_cast<double>(lost) / static_cast<double>(bursts), 5.0, 0.5);
}

TEST(Port, ALinkThatIsDownLosesWhatItSends) {
  sim::Simulator s(1);
  fabric::FramePool pool;
  fabric::PortParams p;
  fabric::Port a(s, "a", p), b(s, "b", p);
  fabric::Port::connect(a, b);
  Recorder rx(s);
  b.set_receiver(&rx);
  // 100 frames of 1000 bytes, 81.92 ns each on the wire; down from 1 us to 3 us.
  for (int i = 0; i < 100; ++i) a.send(make(pool, 1000, static_cast<uint8_t>(i)));
  sim::Event down([&] { a.set_link_up(false); }, "down"), up([&] { a.set_link_up(true); }, "up");
  s.scheduler().schedule(down, sim::Time::zero() + 1_us);
  s.scheduler().schedule(up, sim::Time::zero() + 3_us);
  s.scheduler().run_until(sim::Time::max());
  const auto per = a.wire_time(1000);
  // Frames whose serialization ends in [1 us, 3 us) are lost.
  const int64_t first = (1_us).picoseconds() / per.picoseconds();          // ends at (first+1) x per >= 1 us
  const int64_t last = ((3_us).picoseconds() - 1) / per.picoseconds();     // ends before 3 us
  EXPECT_EQ(a.counters().drops_link_down, static_cast<uint64_t>(last - first));
  EXPECT_EQ(rx.got.size(), 100u - a.counters().drops_link_down);
}

TEST(Port, IbCreditsStopAVlUntilTheReceiverFreesItsBuffer) {
  sim::Simulator s(1);
  fabric::FramePool pool;
  fabric::PortParams p;
  p.set_framing(fabric::LinkFraming::Infiniband);
  p.vl_credit_bytes = 2500;  // two 1000-byte frames per VL
  fabric::Port a(s, "a", p), b(s, "b", p);
  fabric::Port::connect(a, b);
  Recorder rx(s);
  b.set_receiver(&rx);
  for (int i = 0; i < 5; ++i) a.send(make(pool, 1000, static_cast<uint8_t>(i), 0));
  a.send(make(pool, 1000, 9, 1));  // VL 1 has its own credit
  s.scheduler().run_until(sim::Time::zero() + 20_us);
  ASSERT_EQ(rx.got.size(), 3u);  // two on VL 0, one on VL 1; the rest wait for credit
  EXPECT_EQ(a.credits(0), 500u);
  EXPECT_EQ(a.counters().credit_stalls[0], 1u);
  // At 20 us b frees one frame of VL 0: its credit reaches a one propagation delay later.
  sim::Event free_one([&] { b.return_credit(0, 1000); }, "free");
  s.scheduler().schedule(free_one, sim::Time::zero() + 20_us);
  s.scheduler().run_until(sim::Time::zero() + 20_us + 999_ns);
  EXPECT_EQ(rx.got.size(), 3u);
  s.scheduler().run_until(sim::Time::max());
  EXPECT_EQ(rx.got.size(), 4u);
  EXPECT_EQ(rx.got.back().first, sim::Time::zero() + 21_us + a.wire_time(1000) + 1_us);
  EXPECT_GT(a.counters().credit_stall_time[0], 18_us);
}
