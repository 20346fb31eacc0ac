// The hot path allocates nothing: write_headers, seal, build, parse, icrc_ok
// and vcrc_ok run with a counting global operator new.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "packet/icrc.hpp"
#include "packet/packet.hpp"
#include "tests/packet/sample_packets.hpp"

namespace {
std::atomic<long> g_allocations{0};
}

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace rnicsim::packet {
namespace {

TEST(Allocation, HotPathAllocatesNothing) {
  using namespace testing;
  std::vector<std::vector<std::byte>> frames;
  std::vector<PacketFields> fields;
  std::vector<std::vector<std::byte>> payloads;
  for (const auto& lv : all_link_variants())
    for (Opcode op : all_valid_opcodes()) {
      fields.push_back(sample_fields(op, lv));
      frames.emplace_back(frame_length(fields.back()));
      payloads.push_back(sample_payload(fields.back().payload_length));
    }
  const long before = g_allocations.load();
  int ok = 0;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    auto l = write_headers(fields[i], frames[i]);
    if (!l) continue;
    std::copy(payloads[i].begin(), payloads[i].end(), frames[i].begin() + l->payload_offset);
    seal(frames[i], *l);
    auto n = build(fields[i], payloads[i], frames[i]);
    auto r = parse(frames[i], is_roce(fields[i].link) ? LinkType::Ethernet : LinkType::Infiniband);
    if (n && r && icrc_ok(frames[i], *r) && vcrc_ok(frames[i], *r) && seal(frames[i], fields[i].link)) ++ok;
  }
  const long after = g_allocations.load();
  EXPECT_EQ(after - before, 0);
  EXPECT_EQ(ok, static_cast<int>(fields.size()));
}

}  // namespace
}  // namespace rnicsim::packet
