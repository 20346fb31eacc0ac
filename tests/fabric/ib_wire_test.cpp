// InfiniBand wire timing: the serializer charges the SDP and EGP delimiters (2
// bytes) per packet, no preamble, FCS or inter-packet gap, and no minimum size;
// the frame (LRH .. VCRC) is what the capture shows. Ethernet framing stays the
// default.
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <vector>

#include "fabric/pcap_tap.hpp"
#include "fabric/port.hpp"
#include "packet/bytes.hpp"
#include "packet/erf.hpp"
#include "packet/packet.hpp"

using namespace rnicsim;
using namespace rnicsim::sim::literals;

namespace {

constexpr uint64_t k100G = 100'000'000'000;

fabric::PortParams ib_params() {
  fabric::PortParams p;
  p.set_framing(fabric::LinkFraming::Infiniband);
  return p;
}

struct Arrivals : fabric::FrameSink {
  sim::Simulator& sim;
  std::vector<sim::Time> at;
  std::vector<size_t> sizes;
  explicit Arrivals(sim::Simulator& s) : sim(s) {}
  void receive(fabric::Frame&& f) override {
    at.push_back(sim.now());
    sizes.push_back(f.size());
  }
};

// A native IB RC RDMA WRITE MIDDLE packet with `payload` bytes, built by the packet layer.
std::vector<std::byte> ib_write_middle(packet::LinkKind kind, uint32_t payload) {
  packet::PacketFields f;
  f.link = kind;
  f.opcode = packet::Opcode::RcRdmaWriteMiddle;
  f.slid = 1;
  f.dlid = 2;
  f.dest_qp = packet::Qpn(0x11);
  f.payload_length = payload;
  packet::derive_fields(f);
  std::vector<std::byte> data(payload, std::byte{0x5A});
  std::vector<std::byte> out(packet::frame_length(f));
  auto n = packet::build(f, data, out);
  EXPECT_TRUE(n.has_value());
  return out;
}

}  // namespace

TEST(IbWire, DefaultFramingIsEthernet) {
  const fabric::PortParams p;
  EXPECT_EQ(p.wire_overhead_bytes, 24u);
  EXPECT_EQ(p.min_frame_bytes, 60u);
  fabric::PortParams q = ib_params();
  q.set_framing(fabric::LinkFraming::Ethernet);
  EXPECT_EQ(q.wire_overhead_bytes, p.wire_overhead_bytes);
  EXPECT_EQ(q.min_frame_bytes, p.min_frame_bytes);
}

TEST(IbWire, TwoDelimiterBytesPerPacketAndNoMinimum) {
  sim::Simulator s(1);
  fabric::Port ib(s, "ib", ib_params());
  EXPECT_EQ(ib.params().wire_overhead_bytes, 2u);
  EXPECT_EQ(ib.params().min_frame_bytes, 0u);
  // An ACK without GRH: LRH 8 + BTH 12 + AETH 4 + ICRC 4 + VCRC 2 = 30 bytes,
  // 32 with SDP and EGP: 2.56 ns at 100 Gb/s. On Ethernet a frame this short is
  // padded to 60 bytes and takes 84 byte times.
  EXPECT_EQ(ib.wire_time(30), 2560_ps);
  EXPECT_EQ(ib.wire_time(30), sim::serialization_time(32, k100G));
  EXPECT_LT(ib.wire_time(10), ib.wire_time(30));  // no padding to a minimum
  fabric::Port eth(s, "eth", {});
  EXPECT_EQ(eth.wire_time(30), 6720_ps);
}

TEST(IbWire, BackToBackFullMtuPacketsAtEdrRate) {
  // 4 KiB MTU: LRH 8 + BTH 12 + 4096 + ICRC 4 + VCRC 2 = 4122 bytes; with the
  // delimiters 4124, a whole number of 4-byte columns on a 4x link.
  const auto frame = ib_write_middle(packet::LinkKind::IbLocal, 4096);
  ASSERT_EQ(frame.size(), 4122u);
  EXPECT_EQ((frame.size() + 2) % 4, 0u);

  sim::Simulator s(1);
  fabric::FramePool pool;
  fabric::PortParams p = ib_params();
  p.rate_bps = k100G;  // EDR 4x: 4 x 25.78125 Gbaud x 64/66
  p.delay = 1_us;
  fabric::Port a(s, "a", p), b(s, "b", p);
  fabric::Port::connect(a, b);
  Arrivals rx(s);
  b.set_receiver(&rx);
  for (int i = 0; i < 10; ++i) {
    fabric::Frame f = pool.acquire(frame.size());
    std::copy(frame.begin(), frame.end(), f.bytes().begin());
    ASSERT_TRUE(a.send(std::move(f)));
  }
  s.scheduler().run_until(sim::Time::max());
  ASSERT_EQ(rx.at.size(), 10u);
  const sim::Duration per_packet = sim::serialization_time(4124, k100G);  // 329.92 ns
  EXPECT_EQ(per_packet, 329920_ps);
  for (size_t i = 0; i < rx.at.size(); ++i) {
    EXPECT_EQ(rx.at[i], sim::Time::zero() + per_packet * static_cast<int64_t>(i + 1) + 1_us) << i;
    EXPECT_EQ(rx.sizes[i], 4122u);  // the frame keeps its VCRC; delimiters are not bytes of it
  }
  // Payload share of the line: 4096 / 4124 = 99.32%, against 4096 / 4178 = 98.04%
  // for the same packet over RoCEv2/IPv4 (Ethernet 14, IPv4 20, UDP 8, BTH 12,
  // ICRC 4, FCS 4, preamble 8, IFG 12).
  fabric::Port eth(s, "eth", {});
  const auto roce_frame = 14 + 20 + 8 + 12 + 4096 + 4;
  EXPECT_EQ(eth.wire_time(roce_frame), sim::serialization_time(4178, k100G));
  EXPECT_LT(a.wire_time(frame.size()), eth.wire_time(roce_frame));
}

TEST(IbWire, GlobalPacketsCarryTheGrh) {
  const auto local = ib_write_middle(packet::LinkKind::IbLocal, 256);
  const auto global = ib_write_middle(packet::LinkKind::IbGlobal, 256);
  EXPECT_EQ(global.size(), local.size() + 40);
  sim::Simulator s(1);
  fabric::Port ib(s, "ib", ib_params());
  EXPECT_EQ(ib.wire_time(global.size()) - ib.wire_time(local.size()), sim::serialization_time(40, k100G));
}

// A frame sent through a tap writing `link` with `snaplen`: the record read
// back (pcap header and data, after an ERF header if any) and the frame.
struct TapRecord {
  int dlt;
  pcap_pkthdr header;
  std::vector<std::byte> data, frame;
};
TapRecord tap_one_frame(fabric::CaptureLinkType link, uint32_t snaplen) {
  // One file per test and process: ctest runs these tests side by side.
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = std::string("rnicsim_ib_tap_") + test->name() + "_" + std::to_string(::getpid()) + ".pcap";
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  TapRecord r{};
  r.frame = ib_write_middle(packet::LinkKind::IbLocal, 256);  // a MIDDLE carries a whole PMTU
  {
    sim::Simulator s(1);
    fabric::FramePool pool;
    fabric::Port a(s, "a", ib_params()), b(s, "b", ib_params());
    fabric::Port::connect(a, b);
    fabric::PcapTap tap(path, link, snaplen);
    a.add_tap(&tap);
    sim::Event send([&] {
      fabric::Frame f = pool.acquire(r.frame.size());
      std::copy(r.frame.begin(), r.frame.end(), f.bytes().begin());
      a.send(std::move(f));
    });
    s.scheduler().schedule(send, sim::Time::zero() + 1234567_ps);  // sent at 1.234567 us
    s.scheduler().run_until(sim::Time::max());
    EXPECT_EQ(tap.frames(), 1u);
  }
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  EXPECT_NE(p, nullptr) << err;
  if (p == nullptr) return r;
  r.dlt = pcap_datalink(p);
  pcap_pkthdr* h;
  const u_char* data;
  EXPECT_EQ(pcap_next_ex(p, &h, &data), 1);
  r.header = *h;
  r.data.assign(reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + h->caplen);
  pcap_close(p);
  std::filesystem::remove(path);
  return r;
}

TEST(IbWire, TapWritesInfinibandLinkType) {
  const TapRecord r = tap_one_frame(fabric::CaptureLinkType::InfiniBand, 65535);
  EXPECT_EQ(r.dlt, 247);  // LINKTYPE_INFINIBAND
  ASSERT_EQ(r.header.len, r.frame.size());
  EXPECT_EQ(r.data, r.frame);
  EXPECT_EQ(std::to_integer<int>(r.data[1]) & 0x03, 2);  // LRH first: LNH = 2 (IBA local)
  auto parsed = packet::parse(r.data, packet::LinkType::Infiniband);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_TRUE(packet::vcrc_ok(r.data, *parsed));
}

TEST(IbWire, TapWritesErfRecordsOfTypeInfiniband) {
  const TapRecord r = tap_one_frame(fabric::CaptureLinkType::Erf, 65535);
  EXPECT_EQ(r.dlt, 197);  // LINKTYPE_ERF
  ASSERT_EQ(r.header.len, packet::kErfHeaderBytes + r.frame.size());
  ASSERT_EQ(r.header.caplen, r.header.len);
  EXPECT_EQ(r.header.ts.tv_sec, 0);
  EXPECT_EQ(r.header.ts.tv_usec, 1234);  // nanoseconds (the tap drops the picoseconds)
  EXPECT_EQ(std::to_integer<int>(r.data[8]), 21);  // ERF type InfiniBand
  EXPECT_EQ(packet::load_be16(&r.data[10]), r.header.caplen);  // record length
  // The ERF time is the pcap record's: 1234 ns as a fraction of 2^32.
  EXPECT_EQ(packet::load_le32(&r.data[4]), 0u);
  EXPECT_EQ(packet::load_le32(&r.data[0]), 5300u);  // round(1234e-9 * 2^32)
  const auto ib = packet::erf_infiniband_packet(r.data);
  ASSERT_TRUE(ib.has_value());
  EXPECT_EQ(ib->wire_length, r.frame.size());
  EXPECT_TRUE(std::equal(ib->bytes.begin(), ib->bytes.end(), r.frame.begin(), r.frame.end()));
}

// The snap length counts the packet's bytes; the ERF header comes on top, and
// its wire length is the whole packet's.
TEST(IbWire, ErfSnaplenCutsThePacketNotItsHeader) {
  const TapRecord r = tap_one_frame(fabric::CaptureLinkType::Erf, 64);
  ASSERT_EQ(r.header.caplen, packet::kErfHeaderBytes + 64);
  EXPECT_EQ(r.header.len, packet::kErfHeaderBytes + r.frame.size());
  const auto ib = packet::erf_infiniband_packet(r.data);
  ASSERT_TRUE(ib.has_value());
  EXPECT_EQ(ib->bytes.size(), 64u);
  EXPECT_EQ(ib->wire_length, r.frame.size());
}
