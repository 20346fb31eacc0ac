// Frames: pooled buffers behind a one-pointer handle, and payload borrowed from
// a lender until someone needs it.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <numeric>
#include <utility>

#include "fabric/frame.hpp"

namespace rnicsim::fabric {
namespace {

// A lender: some bytes and the list of frames borrowing them, as host memory keeps it.
struct Lender {
  std::array<std::byte, 256> bytes{};
  BorrowList borrowers;
  Lender() {
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i);
  }
  // What a memory write does: borrowers of the bytes copy them in, then they change.
  void write(size_t at, size_t n, std::byte value) {
    borrowers.settle(bytes.data() + at, bytes.data() + at + n);
    std::memset(bytes.data() + at, std::to_integer<int>(value), n);
  }
};

TEST(Frame, IsOnePointerAndReturnsItsBufferToThePool) {
  EXPECT_EQ(sizeof(Frame), sizeof(void*));
  FramePool pool(128);
  {
    Frame a = pool.acquire(100);
    a.meta().priority = 3;
    Frame b = std::move(a);
    EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): a moved-from frame is empty
    EXPECT_EQ(a.size(), 0u);
    EXPECT_TRUE(a.bytes().empty());
    EXPECT_EQ(b.size(), 100u);
    EXPECT_EQ(b.meta().priority, 3);
    EXPECT_EQ(pool.in_use(), 1u);
  }
  EXPECT_EQ(pool.in_use(), 0u);
  Frame c = pool.acquire(10);  // the same buffer again, with fresh metadata
  EXPECT_EQ(pool.allocated(), 1u);
  EXPECT_EQ(c.meta().priority, 0);
  EXPECT_FALSE(c.borrowing());
}

TEST(Frame, BorrowedPayloadIsCopiedInWhenLookedAt) {
  FramePool pool(128);
  Lender lender;
  Frame f = pool.acquire(64);
  std::memset(f.bytes().data(), 0xEE, 64);
  f.lend_payload(lender.borrowers, 16, lender.bytes.data() + 100, 32);
  EXPECT_TRUE(f.borrowing());
  EXPECT_EQ(lender.borrowers.borrowers(), 1u);
  // The buffer does not hold the payload yet; the builder's view leaves it so.
  EXPECT_EQ(f.builder_bytes()[16], std::byte{0xEE});
  EXPECT_TRUE(f.borrowing());
  // A receiver moving the payload reads it in the lender's memory.
  const auto part = f.bytes_as_built().subspan(20, 8);
  const auto src = f.source_of(part);
  EXPECT_EQ(src.data(), lender.bytes.data() + 104);
  EXPECT_EQ(src.size(), 8u);
  // Looking at the bytes copies the payload in and leaves the lender's list.
  const auto b = f.bytes();
  EXPECT_FALSE(f.borrowing());
  EXPECT_EQ(lender.borrowers.borrowers(), 0u);
  for (size_t i = 0; i < 32; ++i) EXPECT_EQ(b[16 + i], static_cast<std::byte>(100 + i));
  EXPECT_EQ(b[15], std::byte{0xEE});
  EXPECT_EQ(b[48], std::byte{0xEE});
}

// A lender whose bytes another thread still brings: every read of them here
// (looking at the frame, source_of, a settle) waits for them first; a reader
// ordered after their arrival (source_in_order) does not.
TEST(Frame, BorrowedBytesStillOnTheirWayAreAwaitedBeforeAnyReadHere) {
  struct Late : BorrowList::Arrival {
    std::array<std::byte, 64> bytes{};
    mutable int awaited = 0;
    void await() const override {
      if (awaited++ == 0) std::memset(const_cast<std::byte*>(bytes.data()), 0x42, bytes.size());  // they land now
    }
  } late;
  BorrowList borrowers(&late);
  FramePool pool(128);
  Frame f = pool.acquire(64);
  f.lend_payload(borrowers, 0, late.bytes.data(), 64);
  EXPECT_EQ(f.source_in_order(f.bytes_as_built()).data(), late.bytes.data());
  EXPECT_EQ(late.awaited, 0);
  EXPECT_EQ(f.source_of(f.bytes_as_built())[63], std::byte{0x42});
  EXPECT_EQ(late.awaited, 1);
  Frame g = pool.acquire(64);
  g.lend_payload(borrowers, 0, late.bytes.data(), 64);
  EXPECT_EQ(f.bytes()[0], std::byte{0x42});  // copied in, after the wait
  EXPECT_EQ(late.awaited, 2);
  borrowers.settle_all();
  EXPECT_EQ(late.awaited, 3);
  EXPECT_EQ(g.bytes()[63], std::byte{0x42});
}

TEST(Frame, ALenderChangingBorrowedBytesMakesTheBorrowerCopyThemFirst) {
  FramePool pool(128);
  Lender lender;
  Frame near = pool.acquire(64), far = pool.acquire(64);
  near.lend_payload(lender.borrowers, 0, lender.bytes.data() + 10, 20);  // bytes 10..29
  far.lend_payload(lender.borrowers, 0, lender.bytes.data() + 200, 20);  // bytes 200..219
  lender.write(100, 50, std::byte{0});  // touches neither
  EXPECT_TRUE(near.borrowing());
  EXPECT_TRUE(far.borrowing());
  lender.write(29, 1, std::byte{0xAA});  // the last byte `near` borrows
  EXPECT_FALSE(near.borrowing());
  EXPECT_TRUE(far.borrowing());
  // `near` carries the bytes as they were when lent.
  for (size_t i = 0; i < 20; ++i) EXPECT_EQ(near.bytes()[i], static_cast<std::byte>(10 + i));
  EXPECT_EQ(lender.borrowers.borrowers(), 1u);
  EXPECT_EQ(lender.borrowers.settled(), 1u);
}

TEST(Frame, PartOnlyPartlyBorrowedIsCopiedInFirst) {
  FramePool pool(128);
  Lender lender;
  Frame f = pool.acquire(64);
  std::memset(f.builder_bytes().data(), 0x55, 64);
  f.lend_payload(lender.borrowers, 8, lender.bytes.data(), 16);
  const auto straddling = f.bytes_as_built().subspan(4, 8);
  const auto src = f.source_of(straddling);
  EXPECT_EQ(src.data(), straddling.data());  // the frame's own buffer, now complete
  EXPECT_FALSE(f.borrowing());
  EXPECT_EQ(src[3], std::byte{0x55});
  EXPECT_EQ(src[4], std::byte{0});
}

TEST(Frame, ReleasedBorrowerLeavesTheListAndAGoingLenderSettlesEveryone) {
  FramePool pool(128);
  Frame survivor;
  {
    Lender lender;
    {
      Frame gone = pool.acquire(64);
      gone.lend_payload(lender.borrowers, 0, lender.bytes.data(), 8);
      EXPECT_EQ(lender.borrowers.borrowers(), 1u);
    }
    EXPECT_EQ(lender.borrowers.borrowers(), 0u);
    survivor = pool.acquire(64);
    survivor.lend_payload(lender.borrowers, 4, lender.bytes.data() + 50, 8);
  }
  // The lender went; the survivor copied its bytes in on the way.
  EXPECT_FALSE(survivor.borrowing());
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(survivor.bytes()[4 + i], static_cast<std::byte>(50 + i));
}

TEST(Frame, LendingTwiceOrOutsideTheFrameIsRefused) {
  FramePool pool(128);
  Lender lender;
  Frame f = pool.acquire(32);
  EXPECT_THROW(f.lend_payload(lender.borrowers, 30, lender.bytes.data(), 8), std::logic_error);
  f.lend_payload(lender.borrowers, 0, lender.bytes.data(), 8);
  EXPECT_THROW(f.lend_payload(lender.borrowers, 8, lender.bytes.data(), 8), std::logic_error);
  Frame empty;
  EXPECT_THROW(empty.lend_payload(lender.borrowers, 0, lender.bytes.data(), 0), std::logic_error);
}

}  // namespace
}  // namespace rnicsim::fabric
