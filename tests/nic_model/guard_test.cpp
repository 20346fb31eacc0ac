// Verbs misuse against guarded regions: each registered region sits between two
// guard pages of mapped host memory (registered to nobody) filled with a pattern.
// Every misuse must complete with its IBTA status, write nothing in either
// region, and never touch a guard: no guard byte changes, and no guard byte
// travels to the requester.
#include <gtest/gtest.h>

#include <functional>

#include "nic_fixture.hpp"

using namespace rnicsim;
using namespace rnicsim::nictest;

namespace {

constexpr uint64_t kPage = 4096;
constexpr uint32_t kAll = kAccessLocalWrite | kAccessRemoteWrite | kAccessRemoteRead | kAccessRemoteAtomic;

std::byte guard_byte(uint64_t i) { return std::byte(static_cast<uint8_t>(0xA5 ^ (i * 29))); }

// guard page | region page | guard page, one mapping: only the translation
// stands between the region and its guards.
struct Guarded {
  TestHost* host = nullptr;
  uint64_t base = 0;
  MemoryRegion mr;
  uint64_t region() const { return base + kPage; }
  std::span<std::byte> bytes(uint64_t from, uint64_t len) const { return host->memory.span(from, len); }

  Guarded(TestHost& h, Pdn pd, uint32_t access, uint64_t seed) : host(&h) {
    base = h.memory.allocate(3 * kPage, kPage);
    for (uint64_t g : {base, base + 2 * kPage}) {
      auto s = bytes(g, kPage);
      for (uint64_t i = 0; i < kPage; ++i) s[i] = guard_byte(i);
    }
    fill_random(bytes(region(), kPage), seed);
    mr = h.nic->reg_mr(pd, region(), kPage, access);
  }
  bool guards_intact() const {
    for (uint64_t g : {base, base + 2 * kPage}) {
      auto s = bytes(g, kPage);
      for (uint64_t i = 0; i < kPage; ++i)
        if (s[i] != guard_byte(i)) return false;
    }
    return true;
  }
  // Whether any 8 consecutive guard bytes appear in the region.
  bool region_holds_guard_bytes() const {
    auto s = bytes(region(), kPage);
    for (uint64_t at = 0; at + 8 <= kPage; ++at)
      for (uint64_t i = 0; i + 8 <= kPage; i += 8)
        if (std::equal(s.begin() + static_cast<long>(at), s.begin() + static_cast<long>(at + 8),
                       bytes(base + i, 8).begin()))
          return true;
    return false;
  }
};

struct Sides {
  Endpoint& x;
  Guarded& local;
  Guarded& remote;
};

SendWqe base_wqe(WrOpcode op, const Sides& s, uint64_t local_off, uint32_t len, int64_t remote_off) {
  SendWqe w{};
  w.wr_id = 1;
  w.opcode = op;
  w.send_flags = kSendSignaled;
  w.num_sge = 1;
  w.sge[0] = Sge{s.local.region() + local_off, len, s.local.mr.lkey};
  w.remote_addr = static_cast<uint64_t>(static_cast<int64_t>(s.remote.region()) + remote_off);
  w.rkey = s.remote.mr.rkey;
  w.compare_add = 1;
  return w;
}

struct Misuse {
  const char* name;
  uint32_t remote_access, local_access;
  bool remote_other_pd;
  std::function<SendWqe(const Sides&)> wqe;
  WcStatus expect;
  // The local check comes only with the response: the responder has executed
  // the atomic (once) by then.
  bool remote_executes = false;
};

const Misuse kMisuses[] = {
    {"write_wrong_rkey", kAll, kAll, false,
     [](const Sides& s) {
       SendWqe w = base_wqe(WrOpcode::RdmaWrite, s, 0, 256, 0);
       w.rkey = packet::Rkey(w.rkey.value() ^ 0x100);
       return w;
     },
     WcStatus::RemAccessErr},
    {"write_past_region_end", kAll, kAll, false,
     [](const Sides& s) { return base_wqe(WrOpcode::RdmaWrite, s, 0, 200, kPage - 100); }, WcStatus::RemAccessErr},
    {"write_before_region_start", kAll, kAll, false,
     [](const Sides& s) { return base_wqe(WrOpcode::RdmaWrite, s, 0, 200, -100); }, WcStatus::RemAccessErr},
    {"write_without_remote_write", kAccessLocalWrite | kAccessRemoteRead, kAll, false,
     [](const Sides& s) { return base_wqe(WrOpcode::RdmaWrite, s, 0, 256, 0); }, WcStatus::RemAccessErr},
    {"write_region_of_other_pd", kAll, kAll, true,
     [](const Sides& s) { return base_wqe(WrOpcode::RdmaWrite, s, 0, 256, 0); }, WcStatus::RemAccessErr},
    {"read_past_region_end", kAll, kAll, false,
     [](const Sides& s) { return base_wqe(WrOpcode::RdmaRead, s, 0, 200, kPage - 100); }, WcStatus::RemAccessErr},
    {"read_before_region_start", kAll, kAll, false,
     [](const Sides& s) { return base_wqe(WrOpcode::RdmaRead, s, 0, 200, -100); }, WcStatus::RemAccessErr},
    {"read_whole_guard", kAll, kAll, false,
     [](const Sides& s) { return base_wqe(WrOpcode::RdmaRead, s, 0, kPage, kPage); }, WcStatus::RemAccessErr},
    {"read_without_remote_read", kAccessLocalWrite | kAccessRemoteWrite, kAll, false,
     [](const Sides& s) { return base_wqe(WrOpcode::RdmaRead, s, 0, 256, 0); }, WcStatus::RemAccessErr},
    {"read_wrong_rkey", kAll, kAll, false,
     [](const Sides& s) {
       SendWqe w = base_wqe(WrOpcode::RdmaRead, s, 0, 256, 0);
       w.rkey = packet::Rkey(w.rkey.value() ^ 0x100);
       return w;
     },
     WcStatus::RemAccessErr},
    {"atomic_without_atomic_access", kAccessLocalWrite | kAccessRemoteWrite | kAccessRemoteRead, kAll, false,
     [](const Sides& s) { return base_wqe(WrOpcode::AtomicFetchAdd, s, 0, 8, 0); }, WcStatus::RemAccessErr},
    {"atomic_past_region_end", kAll, kAll, false,
     [](const Sides& s) { return base_wqe(WrOpcode::AtomicFetchAdd, s, 0, 8, kPage); }, WcStatus::RemAccessErr},
    {"cmp_swap_before_region_start", kAll, kAll, false,
     [](const Sides& s) { return base_wqe(WrOpcode::AtomicCmpSwap, s, 0, 8, -8); }, WcStatus::RemAccessErr},
    {"write_wrong_lkey", kAll, kAll, false,
     [](const Sides& s) {
       SendWqe w = base_wqe(WrOpcode::RdmaWrite, s, 0, 256, 0);
       w.sge[0].lkey = packet::Lkey(w.sge[0].lkey.value() ^ 0x100);
       return w;
     },
     WcStatus::LocProtErr},
    {"write_from_past_local_end", kAll, kAll, false,
     [](const Sides& s) { return base_wqe(WrOpcode::RdmaWrite, s, kPage - 100, 200, 0); }, WcStatus::LocProtErr},
    {"read_into_past_local_end", kAll, kAll, false,
     [](const Sides& s) { return base_wqe(WrOpcode::RdmaRead, s, kPage - 100, 200, 0); }, WcStatus::LocProtErr},
    {"read_into_region_without_local_write", kAll, kAccessRemoteRead, false,
     [](const Sides& s) { return base_wqe(WrOpcode::RdmaRead, s, 0, 256, 0); }, WcStatus::LocProtErr},
    {"atomic_result_past_local_end", kAll, kAll, false,
     [](const Sides& s) { return base_wqe(WrOpcode::AtomicFetchAdd, s, kPage - 4, 8, 0); }, WcStatus::LocProtErr, true},
};

class GuardedMisuse : public ::testing::TestWithParam<Misuse> {};

TEST_P(GuardedMisuse, FailsWithItsStatusAndLeavesTheGuardsAlone) {
  const Misuse& m = GetParam();
  TestBed bed;
  auto [x, y] = bed.pair();
  const Pdn remote_pd = m.remote_other_pd ? y->nic().alloc_pd() : y->pd;
  Guarded remote(y->host(), remote_pd, m.remote_access, 1);
  Guarded local(x->host(), x->pd, m.local_access, 2);
  std::vector<std::byte> remote_before(remote.bytes(remote.region(), kPage).begin(),
                                       remote.bytes(remote.region(), kPage).end());
  const std::vector<std::byte> local_before(local.bytes(local.region(), kPage).begin(),
                                            local.bytes(local.region(), kPage).end());
  x->post_send(m.wqe(Sides{*x, local, remote}));
  bed.run();
  ASSERT_EQ(x->cqes.size(), 1u);
  EXPECT_EQ(x->cqes[0].cqe.status, m.expect) << to_string(x->cqes[0].cqe.status);
  EXPECT_TRUE(y->cqes.empty());
  EXPECT_TRUE(remote.guards_intact()) << "a guard of the target region was written";
  EXPECT_TRUE(local.guards_intact()) << "a guard of the requester's region was written";
  if (m.remote_executes) {  // FETCH_AND_ADD of 1 at the region's start
    uint64_t v = 0;
    std::memcpy(&v, remote_before.data(), 8);
    ++v;
    std::memcpy(remote_before.data(), &v, 8);
  }
  EXPECT_TRUE(same(remote.bytes(remote.region(), kPage), remote_before)) << "the target region changed";
  EXPECT_TRUE(same(local.bytes(local.region(), kPage), local_before)) << "the requester's region changed";
  EXPECT_FALSE(local.region_holds_guard_bytes()) << "guard bytes reached the requester";
  EXPECT_EQ(x->nic().qp(x->qpn)->state, QpState::Err);
}

INSTANTIATE_TEST_SUITE_P(Table, GuardedMisuse, ::testing::ValuesIn(kMisuses),
                         [](const ::testing::TestParamInfo<Misuse>& i) { return std::string(i.param.name); });

// The same regions used correctly: the operations work and the guards still hold
// (the check above is not vacuous).
TEST(GuardedRegions, LegalOperationsAtTheEdgesTouchOnlyTheRegion) {
  TestBed bed;
  auto [x, y] = bed.pair();
  Guarded remote(y->host(), y->pd, kAll, 1);
  Guarded local(x->host(), x->pd, kAll, 2);
  const Sides s{*x, local, remote};
  SendWqe write = base_wqe(WrOpcode::RdmaWrite, s, 0, kPage, 0);
  write.wr_id = 1;
  SendWqe read = base_wqe(WrOpcode::RdmaRead, s, kPage - 100, 100, 0);
  read.wr_id = 2;
  SendWqe add = base_wqe(WrOpcode::AtomicFetchAdd, s, kPage - 8, 8, kPage - 8);
  add.wr_id = 3;
  x->post_sends({write, read, add});
  bed.run();
  ASSERT_EQ(x->cqes.size(), 3u);
  for (const Completion& c : x->cqes) EXPECT_EQ(c.cqe.status, WcStatus::Success) << c.cqe.wr_id;
  EXPECT_TRUE(remote.guards_intact());
  EXPECT_TRUE(local.guards_intact());
  EXPECT_FALSE(local.region_holds_guard_bytes());
}

}  // namespace
