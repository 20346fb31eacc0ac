// PCIe link: outstanding read tags bound read bandwidth to
// max_read_tags x MRRS / round trip, and change nothing when they are plentiful.
#include <gtest/gtest.h>

#include <cstdint>

#include "nic_model/pcie_link.hpp"

namespace rnicsim::nic {
namespace {

using sim::Duration;
using sim::Time;

PcieParams params(uint32_t tags) {
  PcieParams p;  // gen 3 x16, 250 ns each way, 80 ns host memory, MRRS 512
  p.max_read_tags = tags;
  return p;
}

// Issues `reads` reads of `bytes` each at time zero; returns when the last one is done.
Time read_burst(PcieLink& link, int reads, uint64_t bytes) {
  Time last = Time::zero();
  for (int i = 0; i < reads; ++i) {
    const Time done = link.read(Time::zero(), bytes);
    EXPECT_GE(done, last) << "read completions must stay in issue order";
    last = done;
  }
  return last;
}

double gbytes_per_s(uint64_t bytes, Time done) { return static_cast<double>(bytes) / done.since_start().seconds() / 1e9; }

TEST(PcieTlps, EachTlpCarriesItsHeaderWhateverTheMaxPayload) {
  // A write of `bytes` is ceil(bytes / MPS) TLPs (at least one), each with its
  // overhead, for power-of-two and other payload sizes alike.
  for (const uint32_t mps : {128u, 256u, 384u, 4096u}) {
    for (const uint64_t bytes : {0ull, 1ull, 127ull, 128ull, 129ull, 4096ull, 4097ull, 1048576ull}) {
      PcieParams p;
      p.max_payload_bytes = mps;
      PcieLink link(p);
      (void)link.write(Time::zero(), bytes);
      const uint64_t tlps = bytes == 0 ? 1 : (bytes + mps - 1) / mps;
      EXPECT_EQ(link.upstream_bytes(), bytes + tlps * p.tlp_overhead_bytes) << bytes << " B, MPS " << mps;
    }
  }
}

TEST(PcieReadTags, FewTagsBoundReadBandwidth) {
  for (const uint32_t tags : {1u, 2u, 4u, 8u}) {
    PcieLink link(params(tags));
    const PcieParams& p = link.params();
    const int reads = 400;
    const Time done = read_burst(link, reads, p.max_read_request_bytes);
    // A tag comes back no sooner than a round trip: latency both ways plus the host memory.
    const Duration round_trip = p.latency + p.latency + p.host_memory_latency;
    const double bound = static_cast<double>(tags) * p.max_read_request_bytes / round_trip.seconds() / 1e9;
    const double measured = gbytes_per_s(uint64_t{reads} * p.max_read_request_bytes, done);
    EXPECT_LE(measured, bound) << tags << " tags";
    // Serialization of the request and its completions adds a little to each round trip.
    EXPECT_GE(measured, 0.85 * bound) << tags << " tags";
    EXPECT_GT(link.read_tag_waits(), 0u);
  }
}

TEST(PcieReadTags, BandwidthGrowsWithTagsUntilTheLinkLimits) {
  double previous = 0;
  for (const uint32_t tags : {1u, 2u, 4u, 8u, 16u, 32u}) {
    PcieLink link(params(tags));
    const double measured = gbytes_per_s(uint64_t{1000} * 512, read_burst(link, 1000, 512));
    EXPECT_GT(measured, previous) << tags << " tags";
    previous = measured;
  }
  // The data rate of the downstream direction (gen 3 x16, about 15.75 GB/s) is the ceiling.
  EXPECT_LE(previous, PcieParams{}.data_rate_bps() / 8.0 / 1e9);
}

TEST(PcieReadTags, PlentifulTagsChangeNothing) {
  // The default (256 tags) against no limit at all: identical timing, read by read,
  // for a stream of reads of mixed sizes that keeps the link busy.
  PcieLink limited(params(256));
  PcieLink unlimited(params(0));
  for (int i = 0; i < 2000; ++i) {
    const Time now = Time::zero() + Duration::ns(i * 200);
    const uint64_t bytes = 64 + static_cast<uint64_t>(i % 8) * 512;
    ASSERT_EQ(limited.read(now, bytes), unlimited.read(now, bytes)) << "read " << i;
  }
  EXPECT_EQ(limited.read_tag_waits(), 0u);
  EXPECT_EQ(limited.downstream_bytes(), unlimited.downstream_bytes());
}

TEST(PcieReadTags, PlentifulTagsLeaveLinkBoundBandwidthAlone) {
  // A burst far larger than the tags: reads wait for tags, but the link, not the
  // tags, sets the pace (256 x 512 B per round trip is over ten times the link),
  // so the burst ends when it would with no limit.
  PcieLink limited(params(256));
  PcieLink unlimited(params(0));
  const Time a = read_burst(limited, 4000, 512);
  const Time b = read_burst(unlimited, 4000, 512);
  EXPECT_GT(limited.read_tag_waits(), 0u);
  EXPECT_EQ(a, b);
}

TEST(PcieReadTags, ReadLargerThanAllTagsGoesOutInParts) {
  // Two tags of 512 bytes: a 4 KiB read is four parts, each a round trip after the last.
  PcieLink link(params(2));
  const PcieParams& p = link.params();
  const Duration round_trip = p.latency + p.latency + p.host_memory_latency;
  const Time done = link.read(Time::zero(), 4096);
  EXPECT_GE(done.since_start(), round_trip * 4);
  EXPECT_LT(done.since_start(), round_trip * 5);
  // With tags enough for all eight requests it is one round trip and the transfer.
  PcieLink wide(params(8));
  EXPECT_LT(wide.read(Time::zero(), 4096).since_start(), round_trip * 2);
}

}  // namespace
}  // namespace rnicsim::nic

namespace {

TEST(PcieOrdering, MmioWritePassesBookedReadCompletions) {
  rnicsim::nic::PcieParams p;
  rnicsim::nic::PcieLink link(p);
  const rnicsim::sim::Time t0 = rnicsim::sim::Time::zero();
  // A 1 MiB DMA read books the downstream link for about 70 us of completions.
  const rnicsim::sim::Time read_done = link.read(t0, 1 << 20);
  // A doorbell right after it still arrives one MMIO time later, not behind them.
  const rnicsim::sim::Time doorbell = link.mmio_write(t0, 8);
  EXPECT_LT(doorbell - t0, p.latency + rnicsim::sim::Duration::ns(10));
  EXPECT_GT(read_done - t0, rnicsim::sim::Duration::us(50));
  // MMIO writes stay ordered among themselves.
  const rnicsim::sim::Time second = link.mmio_write(t0, 8);
  EXPECT_GT(second, doorbell);
}

}  // namespace

namespace {

// The write-combining rate: MMIO writes of whole lines follow each other no
// faster than mmio_line_time per 64-byte line, where the link alone would
// take them faster; a zero line time leaves the link's rate.
TEST(PcieOrdering, MmioWritesKeepTheWriteCombiningRate) {
  using rnicsim::sim::Duration;
  using rnicsim::sim::Time;
  rnicsim::nic::PcieParams p;
  p.mmio_line_time = Duration::ps(5700);  // 175 M lines/s
  rnicsim::nic::PcieLink link(p);
  rnicsim::nic::PcieLink plain(rnicsim::nic::PcieParams{});
  Time last, plain_last;
  for (int i = 0; i < 100; ++i) {
    last = link.mmio_write(Time::zero(), 128);  // a two-line BlueFlame WQE
    plain_last = plain.mmio_write(Time::zero(), 128);
  }
  // 100 WQEs of two lines: 200 x 5.7 ns, where 100 TLPs of 152 bytes take about 1 us at PCIe 3.0 x16.
  EXPECT_EQ(last - Time::zero(), p.latency + Duration::ps(5700) * 200);
  EXPECT_LT(plain_last - Time::zero(), p.latency + Duration::ns(1100));
  // A doorbell is one line.
  rnicsim::nic::PcieLink doorbells(p);
  Time d;
  for (int i = 0; i < 10; ++i) d = doorbells.mmio_write(Time::zero(), 8);
  EXPECT_EQ(d - Time::zero(), p.latency + Duration::ps(5700) * 10);
}

}  // namespace
