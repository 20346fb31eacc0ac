// The daemon's object registry: an object is named only by requests of the
// context that owns it, and goes with that context.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>
#include <unordered_map>

#include "emulation/registry.hpp"
#include "emulation/server.hpp"
#include "fuzz/control_client.hpp"

namespace rnicsim::emulation {
namespace {

namespace proto = verbs_proto;
using Op = proto::Op;

TEST(Registry, OwnedByNeedsTheObjectAndItsContext) {
  const std::unordered_map<uint32_t, uint32_t> pds{{5, 1}};  // PD -> context
  EXPECT_TRUE(owned_by(pds, 5, 1));
  EXPECT_FALSE(owned_by(pds, 5, 2));
  EXPECT_FALSE(owned_by(pds, 6, 1));
  const std::unordered_map<uint32_t, QpEntry> qps{{0x11, QpEntry{.ctx = 2}}};
  EXPECT_TRUE(owned_by(qps, 0x11, 2));
  EXPECT_FALSE(owned_by(qps, 0x11, 1));
  EXPECT_FALSE(owned_by(qps, 0x12, 2));
}

// Two programs on one host, each with a context: neither reaches the other's.
class TwoPrograms : public ::testing::Test {
protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) {
      fd[i] = daemon.connect();
      ASSERT_EQ(call(i, Op::Hello, proto::HelloReq{}), 0);
      ASSERT_EQ(call(i, Op::OpenContext, proto::OpenContextReq{}), 0);
      ctx[i] = fuzz::reply_as<proto::OpenContextRep>(reply).ctx;
      ASSERT_EQ(call(i, Op::AllocPd, proto::ObjectReq{ctx[i], 0, 0}), 0);
      pd[i] = fuzz::reply_as<proto::ObjectRep>(reply).id;
      ASSERT_EQ(call(i, Op::CreateCq, proto::CreateCqReq{ctx[i], 16, 0, 0}), 0);
      cq[i] = fuzz::reply_as<proto::RingRep>(reply).id;
    }
  }
  void TearDown() override {
    for (int f : fd) close(f);
  }
  template <class Body>
  int call(int i, Op op, const Body& body) {
    return fuzz::request(daemon, fd[i], op, body, reply);
  }
  std::ostringstream log;
  ControlHarness daemon{default_scenario(), log};
  proto::Received reply;
  int fd[2] = {-1, -1};
  uint32_t ctx[2] = {}, pd[2] = {}, cq[2] = {};
};

TEST_F(TwoPrograms, AContextIsItsSessionsOnly) {
  EXPECT_EQ(call(1, Op::AllocPd, proto::ObjectReq{ctx[0], 0, 0}), EBADF);
  EXPECT_EQ(call(1, Op::CloseContext, proto::ObjectReq{ctx[0], 0, 0}), EBADF);
  EXPECT_EQ(call(0, Op::AllocPd, proto::ObjectReq{ctx[0], 0, 0}), 0);
}

TEST_F(TwoPrograms, ObjectsAreTheirContextsOnly) {
  EXPECT_EQ(call(1, Op::DeallocPd, proto::ObjectReq{ctx[1], pd[0], 0}), EINVAL);
  EXPECT_EQ(call(1, Op::DestroyCq, proto::ObjectReq{ctx[1], cq[0], 0}), EINVAL);
  EXPECT_EQ(call(1, Op::ResizeCq, proto::ObjectReq{ctx[1], cq[0], 64}), EINVAL);
  EXPECT_EQ(call(1, Op::CreateQp, proto::CreateQpReq{ctx[1], pd[0], cq[1], cq[1], 0, 2, 0, 1, 1, 1, 1, 0}), EINVAL);
  EXPECT_EQ(call(1, Op::CreateQp, proto::CreateQpReq{ctx[1], pd[1], cq[0], cq[1], 0, 2, 0, 1, 1, 1, 1, 0}), EINVAL);
  EXPECT_EQ(call(1, Op::CreateSrq, proto::CreateSrqReq{ctx[1], pd[0], 16, 1, 0, 0}), EINVAL);
  // Each still owns what it made.
  EXPECT_EQ(call(0, Op::DestroyCq, proto::ObjectReq{ctx[0], cq[0], 0}), 0);
  EXPECT_EQ(call(0, Op::DeallocPd, proto::ObjectReq{ctx[0], pd[0], 0}), 0);
}

TEST_F(TwoPrograms, ObjectsGoWithTheirContext) {
  ASSERT_EQ(call(0, Op::CloseContext, proto::ObjectReq{ctx[0], 0, 0}), 0);
  EXPECT_EQ(call(0, Op::AllocPd, proto::ObjectReq{ctx[0], 0, 0}), EBADF);
  ASSERT_EQ(call(0, Op::OpenContext, proto::OpenContextReq{}), 0);
  const uint32_t again = fuzz::reply_as<proto::OpenContextRep>(reply).ctx;
  EXPECT_NE(again, ctx[0]);
  EXPECT_EQ(call(0, Op::DeallocPd, proto::ObjectReq{again, pd[0], 0}), EINVAL);
  EXPECT_EQ(call(0, Op::DestroyCq, proto::ObjectReq{again, cq[0], 0}), EINVAL);
  // The other program's are untouched.
  EXPECT_EQ(call(1, Op::DestroyCq, proto::ObjectReq{ctx[1], cq[1], 0}), 0);
}

}  // namespace
}  // namespace rnicsim::emulation
