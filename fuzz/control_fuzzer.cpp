// Fuzzes the emulation daemon's control protocol: a fresh daemon serves three
// hostile clients and one well-behaved client through the same reads, checks
// and replies as accepted connections. Beyond "no crash", nothing the hostile
// ones send reaches the good client's objects (check_good_client).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "emulation/server.hpp"
#include "fuzz/control_client.hpp"

namespace {

namespace proto = rnicsim::verbs_proto;
using rnicsim::emulation::ControlHarness;
using rnicsim::fuzz::drain;
using rnicsim::fuzz::reply_as;
using rnicsim::fuzz::send_and_serve;

constexpr std::size_t kMaxRecords = 64;
constexpr std::size_t kClients = 3;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "control fuzzer: check failed: %s\n", what);
  std::abort();
}

// A request of the well-behaved client, which must be answered.
template <class Body>
int request(ControlHarness& daemon, int fd, proto::Op op, const Body& body, proto::Received& reply) {
  const int status = rnicsim::fuzz::request(daemon, fd, op, body, reply);
  require(status != -1, "the good client's request is answered");
  return status;
}

const rnicsim::scenario::Scenario& scenario() {
  static const rnicsim::scenario::Scenario s = rnicsim::emulation::default_scenario();
  return s;
}

// The well-behaved client: a context, a PD and a CQ.
struct GoodClient {
  int fd = -1;
  std::uint32_t ctx = 0, pd = 0, cq = 0;
};

GoodClient set_up_good_client(ControlHarness& daemon) {
  GoodClient g;
  g.fd = daemon.connect();
  require(g.fd >= 0, "a client connects");
  proto::Received reply;
  require(request(daemon, g.fd, proto::Op::Hello, proto::HelloReq{}, reply) == 0, "hello");
  require(request(daemon, g.fd, proto::Op::OpenContext, proto::OpenContextReq{}, reply) == 0, "open context");
  g.ctx = reply_as<proto::OpenContextRep>(reply).ctx;
  require(request(daemon, g.fd, proto::Op::AllocPd, proto::ObjectReq{g.ctx, 0, 0}, reply) == 0, "alloc pd");
  g.pd = reply_as<proto::ObjectRep>(reply).id;
  require(request(daemon, g.fd, proto::Op::CreateCq, proto::CreateCqReq{g.ctx, 16, 0, 0}, reply) == 0, "create cq");
  g.cq = reply_as<proto::RingRep>(reply).id;
  return g;
}

// The good client is still served and still owns what it made.
void check_good_client(ControlHarness& daemon, const GoodClient& g) {
  proto::Received reply;
  require(request(daemon, g.fd, proto::Op::AllocPd, proto::ObjectReq{g.ctx, 0, 0}, reply) == 0, "alloc pd afterwards");
  require(request(daemon, g.fd, proto::Op::DestroyCq, proto::ObjectReq{g.ctx, g.cq, 0}, reply) == 0,
          "the good client's CQ is still its own");
  require(request(daemon, g.fd, proto::Op::DeallocPd, proto::ObjectReq{g.ctx, g.pd, 0}, reply) == 0,
          "the good client's PD is still its own");
}

// A record's message: its bytes as they are (flag 8), or a header with the
// record's first two bytes as the op and the rest as the body.
std::vector<unsigned char> message_of(std::uint8_t flags, const std::uint8_t* bytes, std::size_t length) {
  std::vector<unsigned char> message;
  if ((flags & 8) != 0) {
    message.assign(bytes, bytes + length);
    return message;
  }
  proto::MsgHeader h;
  if (length >= 2) std::memcpy(&h.op, bytes, 2);
  const std::size_t body = length >= 2 ? length - 2 : 0;
  h.length = static_cast<std::uint32_t>(body);
  message.resize(sizeof h + body);
  std::memcpy(message.data(), &h, sizeof h);
  if (body > 0) std::memcpy(message.data() + sizeof h, bytes + 2, body);
  return message;
}

}  // namespace

// The input is a list of records (at most kMaxRecords):
//   flags (1 byte): bits 0-1 the client (0..2), bit 2 a descriptor (/dev/null)
//     goes with the message, bit 3 the message is raw bytes (else the harness
//     writes a correct header: op from the first two bytes, the rest the body),
//     bit 4 the client hangs up instead (and a new client takes its place);
//   length (1 byte), then that many bytes.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::ostringstream log;
  ControlHarness daemon(scenario(), log);
  const GoodClient good = set_up_good_client(daemon);

  // The hostile clients.
  std::array<int, kClients> clients{};
  for (int& c : clients) c = daemon.connect();
  std::size_t at = 0;
  for (std::size_t n = 0; n < kMaxRecords && at + 2 <= size; ++n) {
    const std::uint8_t flags = data[at];
    std::size_t length = data[at + 1];
    at += 2;
    length = std::min(length, size - at);
    const std::uint8_t* bytes = data + at;
    at += length;
    int& fd = clients[(flags & 3) % kClients];
    if (fd < 0) fd = daemon.connect();
    if ((flags & 16) != 0) {  // hang up: the daemon sees the end of the stream
      close(fd);
      (void)daemon.serve(fd);
      fd = daemon.connect();
      continue;
    }
    const std::vector<unsigned char> message = message_of(flags, bytes, length);
    if (send_and_serve(daemon, fd, message.data(), message.size(), (flags & 4) != 0)) {
      proto::Received ignored;
      drain(fd, ignored);
    } else {
      close(fd);  // the daemon ended the session
      fd = -1;
    }
  }
  check_good_client(daemon, good);
  for (int c : clients)
    if (c >= 0) close(c);
  close(good.fd);
  return 0;
}
