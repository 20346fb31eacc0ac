// The ring FIFO under the model's queues: order across growth and wrap-around,
// slots released when popped, and popping an empty queue refused.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

#include "sim/ring_queue.hpp"

namespace rnicsim::sim {
namespace {

TEST(RingQueue, KeepsOrderAcrossWrapAndGrowth) {
  RingQueue<int> q(4);
  int next_in = 0, next_out = 0;
  for (int round = 0; round < 50; ++round) {
    for (int k = 0; k < round % 7 + 1; ++k) q.push_back(next_in++);
    for (int k = 0; k < round % 5 + 1 && !q.empty(); ++k) {
      ASSERT_EQ(q.front(), next_out);
      EXPECT_EQ(q.pop_front(), next_out++);
    }
    ASSERT_EQ(q.size(), static_cast<size_t>(next_in - next_out));
    for (size_t i = 0; i < q.size(); ++i) ASSERT_EQ(q[i], next_out + static_cast<int>(i));
  }
}

TEST(RingQueue, PoppedSlotLetsGoOfWhatItHeld) {
  RingQueue<std::shared_ptr<int>> q(2);
  auto p = std::make_shared<int>(7);
  q.push_back(p);
  q.push_back(p);
  EXPECT_EQ(p.use_count(), 3);
  q.pop();
  EXPECT_EQ(p.use_count(), 2);
  q.clear();
  EXPECT_EQ(p.use_count(), 1);
  EXPECT_EQ(q.emplace_back(), nullptr);  // a reused slot is a fresh value
}

TEST(RingQueue, PoppingAnEmptyQueueThrows) {
  RingQueue<int> q;
  EXPECT_THROW(q.pop(), std::logic_error);
  EXPECT_THROW(q.pop_front(), std::logic_error);
  q.push_back(1);
  q.pop();
  EXPECT_THROW(q.pop(), std::logic_error);
  EXPECT_TRUE(q.empty());
  q.push_back(2);  // still usable
  EXPECT_EQ(q.pop_front(), 2);
}

}  // namespace
}  // namespace rnicsim::sim

TEST(RingQueue, AQueueHoldsNoRingUntilItsFirstPush) {
  rnicsim::sim::RingQueue<int> q(5);
  EXPECT_EQ(q.capacity(), 0u);
  EXPECT_TRUE(q.empty());
  for (int i = 0; i < 20; ++i) q.push_back(i);
  EXPECT_EQ(q.capacity(), 32u);  // 8 first (5 rounded up), then doubled
  for (int i = 0; i < 20; ++i) EXPECT_EQ(q.pop_front(), i);
}
