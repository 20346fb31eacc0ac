// The daemon's op table: one row for every op of the control protocol, in the
// scope the protocol gives it, and an op it does not have refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

#include "emulation/op_table.hpp"
#include "emulation/rdma_cm.hpp"
#include "emulation/server.hpp"
#include "fuzz/control_client.hpp"

namespace rnicsim::emulation {
namespace {

namespace proto = verbs_proto;
using Op = proto::Op;
// The protocol's ops run from Hello (1) to its last, the RDMA CM's CmSetOption.
constexpr uint16_t kFirstOp = static_cast<uint16_t>(Op::Hello), kLastOp = static_cast<uint16_t>(Op::CmSetOption);

TEST(OpTable, EveryOpOfTheProtocolHasExactlyOneRow) {
  EXPECT_EQ(op_table().size(), size_t{kLastOp - kFirstOp + 1u});
  for (uint16_t op = kFirstOp; op <= kLastOp; ++op) {
    size_t rows = 0;
    for (const OpRow& row : op_table()) rows += static_cast<uint16_t>(row.op) == op ? 1 : 0;
    EXPECT_EQ(rows, 1u) << "op " << op;
    ASSERT_NE(find_op(op), nullptr) << "op " << op;
    EXPECT_EQ(static_cast<uint16_t>(find_op(op)->op), op);
  }
}

TEST(OpTable, ScopesFollowTheProtocol) {
  for (const OpRow& row : op_table()) {
    const OpScope want = row.op == Op::Hello || row.op == Op::OpenContext ? OpScope::Session
                         : row.op >= Op::CmOpenChannel && row.op <= Op::CmSetOption ? OpScope::Cm
                                                                                    : OpScope::Context;
    EXPECT_EQ(row.scope, want) << "op " << static_cast<int>(row.op);
  }
}

TEST(OpTable, UnknownOpHasNoRow) {
  for (uint16_t op : {uint16_t{0}, static_cast<uint16_t>(kLastOp + 1), uint16_t{999}, uint16_t{0xFFFF}})
    EXPECT_EQ(find_op(op), nullptr) << "op " << op;
}

// Refused as every context-scoped request is checked: the context first, then the op.
TEST(OpTable, UnknownOpIsRefusedAndTheSessionGoesOn) {
  std::ostringstream log;
  ControlHarness daemon(default_scenario(), log);
  proto::Received reply;
  const int fd = daemon.connect();
  ASSERT_EQ(fuzz::request(daemon, fd, Op::Hello, proto::HelloReq{}, reply), 0);
  ASSERT_EQ(fuzz::request(daemon, fd, Op::OpenContext, proto::OpenContextReq{}, reply), 0);
  const uint32_t ctx = fuzz::reply_as<proto::OpenContextRep>(reply).ctx;
  const auto unknown = static_cast<Op>(kLastOp + 1);
  EXPECT_EQ(fuzz::request(daemon, fd, unknown, uint16_t{0}, reply), EPROTO);
  EXPECT_EQ(fuzz::request(daemon, fd, unknown, proto::ObjectReq{ctx + 1, 0, 0}, reply), EBADF);
  EXPECT_EQ(fuzz::request(daemon, fd, unknown, proto::ObjectReq{ctx, 0, 0}, reply), EOPNOTSUPP);
  EXPECT_EQ(fuzz::request(daemon, fd, Op::AllocPd, proto::ObjectReq{ctx, 0, 0}, reply), 0);
  close(fd);
}

}  // namespace
}  // namespace rnicsim::emulation
