// Malformed control messages to the emulation daemon: a table of hostile
// requests, each sent by one client while another, well-behaved client has a
// context, a PD and a CQ open. A message the daemon cannot read ends the sender's
// session; a readable but wrong request gets an errno; either way the daemon
// goes on serving, and the other client keeps what it made.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "emulation/server.hpp"
#include "fuzz/control_client.hpp"

namespace rnicsim::emulation {
namespace {

namespace proto = verbs_proto;
using fuzz::reply_as;
using fuzz::request;
using Bytes = std::vector<unsigned char>;

constexpr int kSessionEnded = -1;

// The datagram of a request: a header (fields as given) and a body.
Bytes message(proto::Op op, const void* body, std::size_t length, std::uint32_t magic = proto::kMagic,
              std::uint16_t version = proto::kVersion, long length_field = -1) {
  proto::MsgHeader h;
  h.magic = magic;
  h.version = version;
  h.op = static_cast<std::uint16_t>(op);
  h.length = length_field < 0 ? static_cast<std::uint32_t>(length) : static_cast<std::uint32_t>(length_field);
  Bytes b(sizeof h + length);
  std::memcpy(b.data(), &h, sizeof h);
  if (length > 0) std::memcpy(b.data() + sizeof h, body, length);
  return b;
}
template <class Body>
Bytes message(proto::Op op, const Body& body) {
  return message(op, &body, sizeof body);
}

// Context 1 is the good client's; the hostile client opens context 2 first.
constexpr std::uint32_t kGoodCtx = 1, kOwnCtx = 2;

struct Case {
  const char* name;
  bool opened;  // the hostile client has said hello and opened a context first
  Bytes datagram;
  int expect;   // the reply's status, or kSessionEnded
};

std::vector<Case> cases() {
  const proto::HelloReq hello{};
  proto::HelloReq unknown_host{};
  std::strcpy(unknown_host.host, "no-such-host");
  const proto::ObjectReq own{kOwnCtx, 0, 0};
  const unsigned char big[proto::kMaxBody + 64] = {};
  proto::ModifyQpReq modify_no_qp;
  modify_no_qp.ctx = kOwnCtx;
  modify_no_qp.qpn = 12345;
  proto::ShareRunsReq runs_without_fds{kOwnCtx, 1, {{0x10000, 4096, 0}}};
  proto::RegMrReq counting_unsent_runs{kOwnCtx, 1, 0x10000, 4096, 0x10000, 1, 0};
  counting_unsent_runs.shared_runs = 1;
  using Op = proto::Op;
  return {
      {"empty datagram", false, {}, kSessionEnded},
      {"header cut short", false, Bytes(10, 0), kSessionEnded},
      {"wrong magic", false, message(Op::Hello, &hello, sizeof hello, 0xDEADBEEF), kSessionEnded},
      {"wrong version", false, message(Op::Hello, &hello, sizeof hello, proto::kMagic, proto::kVersion + 1), kSessionEnded},
      {"length field above the body", false, message(Op::Hello, &hello, sizeof hello, proto::kMagic, 1, 200),
       kSessionEnded},
      {"length field below the body", false, message(Op::Hello, &hello, sizeof hello, proto::kMagic, 1, 4),
       kSessionEnded},
      {"body larger than any request", false, message(Op::Hello, big, sizeof big), kSessionEnded},
      {"hello with a short body", false, message(Op::Hello, &hello, 8), EPROTO},
      {"hello naming no host", false, message(Op::Hello, unknown_host), ENODEV},
      {"open context before hello", false, message(Op::OpenContext, proto::OpenContextReq{}), EPROTO},
      {"request without a context", true, message(Op::AllocPd, &own, 2), EPROTO},
      {"request naming no context", true, message(Op::AllocPd, proto::ObjectReq{999, 0, 0}), EBADF},
      {"request naming another client's context", true, message(Op::AllocPd, proto::ObjectReq{kGoodCtx, 0, 0}),
       EBADF},
      {"unknown operation", true, message(static_cast<Op>(999), own), EOPNOTSUPP},
      {"operation 0", true, message(static_cast<Op>(0), own), EOPNOTSUPP},
      {"body of the wrong request", true, message(Op::CreateQp, own), EPROTO},
      {"CQ of no entries", true, message(Op::CreateCq, proto::CreateCqReq{kOwnCtx, 0, 0, 0}), EINVAL},
      {"CQ of 2^31 entries", true, message(Op::CreateCq, proto::CreateCqReq{kOwnCtx, 1u << 31, 0, 0}), EINVAL},
      {"QP of an unknown type", true,
       message(Op::CreateQp, proto::CreateQpReq{kOwnCtx, 1, 1, 1, 0, 77, 0, 1, 1, 1, 1, 0}), EOPNOTSUPP},
      {"QP on another client's PD and CQ", true,
       message(Op::CreateQp, proto::CreateQpReq{kOwnCtx, 1, 1, 1, 0, 2, 0, 1, 1, 1, 1, 0}), EINVAL},
      {"memory region of no length", true,
       message(Op::RegMr, proto::RegMrReq{kOwnCtx, 1, 0x1000, 0, 0x1000, 1, 0}), EINVAL},
      {"memory region wrapping the address space", true,
       message(Op::RegMr, proto::RegMrReq{kOwnCtx, 1, ~0ull - 10, 4096, 0, 1, 0}), EINVAL},
      {"destroying another client's CQ", true, message(Op::DestroyCq, proto::ObjectReq{kOwnCtx, 1, 0}), EINVAL},
      {"deallocating another client's PD", true, message(Op::DeallocPd, proto::ObjectReq{kOwnCtx, 1, 0}), EINVAL},
      {"modifying no QP", true, message(Op::ModifyQp, modify_no_qp), EINVAL},
      {"querying no QP", true, message(Op::QueryQp, proto::ObjectReq{kOwnCtx, 12345, 0}), EINVAL},
      {"SRQ on another client's PD", true, message(Op::CreateSrq, proto::CreateSrqReq{kOwnCtx, 1, 16, 1, 0, 0}),
       EINVAL},
      {"SRQ of 2^31 entries", true, message(Op::CreateSrq, proto::CreateSrqReq{kOwnCtx, 1, 1u << 31, 1, 0, 0}),
       EINVAL},
      {"address handle on another client's PD", true, message(Op::CreateAh, proto::CreateAhReq{kOwnCtx, 1, {}}),
       EINVAL},
      {"shared pages without their memfds", true, message(Op::ShareRuns, runs_without_fds), EINVAL},
      {"registration counting shared pages never sent", true, message(Op::RegMr, counting_unsent_runs), EINVAL},
  };
}

class HostileControl : public ::testing::TestWithParam<Case> {};

TEST_P(HostileControl, SenderRefusedOthersUnharmed) {
  const Case& c = GetParam();
  std::ostringstream log;
  ControlHarness daemon(default_scenario(), log);
  proto::Received reply;

  const int good = daemon.connect();
  ASSERT_GE(good, 0);
  ASSERT_EQ(request(daemon, good, proto::Op::Hello, proto::HelloReq{}, reply), 0);
  ASSERT_EQ(request(daemon, good, proto::Op::OpenContext, proto::OpenContextReq{}, reply), 0);
  ASSERT_EQ(reply_as<proto::OpenContextRep>(reply).ctx, kGoodCtx);
  ASSERT_EQ(request(daemon, good, proto::Op::AllocPd, proto::ObjectReq{kGoodCtx, 0, 0}, reply), 0);
  const std::uint32_t pd = reply_as<proto::ObjectRep>(reply).id;
  ASSERT_EQ(request(daemon, good, proto::Op::CreateCq, proto::CreateCqReq{kGoodCtx, 16, 0, 0}, reply), 0);
  const std::uint32_t cq = reply_as<proto::RingRep>(reply).id;

  const int hostile = daemon.connect();
  ASSERT_GE(hostile, 0);
  if (c.opened) {
    ASSERT_EQ(request(daemon, hostile, proto::Op::Hello, proto::HelloReq{}, reply), 0);
    ASSERT_EQ(request(daemon, hostile, proto::Op::OpenContext, proto::OpenContextReq{}, reply), 0);
    ASSERT_EQ(reply_as<proto::OpenContextRep>(reply).ctx, kOwnCtx);
  }
  const bool served = fuzz::send_and_serve(daemon, hostile, c.datagram.data(), c.datagram.size());
  if (c.expect == kSessionEnded) {
    EXPECT_FALSE(served) << "the daemon kept the session";
    char byte;
    EXPECT_EQ(recv(hostile, &byte, 1, MSG_DONTWAIT), 0) << "the daemon's end is not closed";
  } else {
    ASSERT_TRUE(served) << "the daemon ended the session";
    EXPECT_EQ(fuzz::drain(hostile, reply), c.expect);
  }

  // The other client is served and still owns its PD and CQ.
  EXPECT_EQ(request(daemon, good, proto::Op::AllocPd, proto::ObjectReq{kGoodCtx, 0, 0}, reply), 0);
  EXPECT_EQ(request(daemon, good, proto::Op::DestroyCq, proto::ObjectReq{kGoodCtx, cq, 0}, reply), 0);
  EXPECT_EQ(request(daemon, good, proto::Op::DeallocPd, proto::ObjectReq{kGoodCtx, pd, 0}, reply), 0);
  close(hostile);
  close(good);
}

std::size_t open_descriptors() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// A daemon that stops with programs still connected releases every context they
// opened (it used to skip every other one, keeping its memfd and 1 GiB mapping).
TEST(ControlHarness, StoppingReleasesEveryContext) {
  const std::size_t before = open_descriptors();
  {
    std::ostringstream log;
    ControlHarness daemon(default_scenario(), log);
    std::vector<int> clients;
    proto::Received reply;
    for (int i = 0; i < 3; ++i) {
      clients.push_back(daemon.connect());
      ASSERT_EQ(request(daemon, clients.back(), proto::Op::Hello, proto::HelloReq{}, reply), 0);
      for (int k = 0; k < 2; ++k)
        ASSERT_EQ(request(daemon, clients.back(), proto::Op::OpenContext, proto::OpenContextReq{}, reply), 0);
    }
    for (int fd : clients) close(fd);
  }
  EXPECT_EQ(open_descriptors(), before);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n;
  for (const char* p = info.param.name; *p; ++p) n += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Table, HostileControl, ::testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace rnicsim::emulation
