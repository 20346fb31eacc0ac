// One NIC block alone: the context the blocks share (simulated host memory
// behind a real DMA engine and PCIe link, empty context tables) and fakes of
// every port, which record what the block sends into them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "nic_model/host_queues.hpp"
#include "nic_model/nic_context.hpp"
#include "nic_model/ports.hpp"
#include "packet/packet.hpp"
#include "sim/simulator.hpp"

namespace rnicsim::nictest {

using namespace rnicsim::nic;

struct FakeSendQueue : SendQueuePort {
  std::vector<uint64_t> accepted;  // wr_ids, in order
  std::vector<uint32_t> kicked;
  std::vector<uint32_t> rewound, resent;  // PSNs
  int unreliable_sent = 0;
  void accept_wqe(QpContext&, const SendWqe& w) override { accepted.push_back(w.wr_id); }
  void kick(QpContext& qp) override { kicked.push_back(qp.qpn.value()); }
  void rewind(QpContext&, Psn psn) override { rewound.push_back(psn.value()); }
  void resend(QpContext&, Psn psn) override { resent.push_back(psn.value()); }
  void unreliable_wqe_sent(QpContext&) override { ++unreliable_sent; }
};

struct FakeRequests : RequestPort {
  std::vector<uint32_t> arrived;  // recv_wqes_arrived, by QPN (0: an SRQ's)
  RequestVerdict receive(QpContext&, const packet::ParsedPacket&, fabric::Frame&) override {
    return RequestVerdict::Done;
  }
  void recv_wqes_arrived(std::optional<Qpn> qpn) override { arrived.push_back(qpn ? qpn->value() : 0); }
};

struct FakeErrors : QpErrorPort {
  struct Fatal {
    uint32_t qpn;
    WcStatus status;
  };
  std::vector<Fatal> fatal;
  std::vector<uint64_t> flushed;  // receive wr_ids
  std::vector<std::pair<AsyncEvent, uint32_t>> events;
  void qp_fatal(QpContext& qp, WcStatus status) override { fatal.push_back({qp.qpn.value(), status}); }
  void flush_recv(QpContext&, const RecvWqe& w) override { flushed.push_back(w.wr_id); }
  void async_event(AsyncEvent event, AsyncObject about) override { events.emplace_back(event, number_of(about)); }
};

// A frame a block handed on, parsed (sealed first: its payload DMA never happens).
struct SentFrame {
  packet::PacketFields fields;
  std::vector<std::byte> payload;
  std::vector<DmaPiece> pieces;
  std::vector<DmaPiece> ahead;  // the rest of a chunk read with it
  bool buffered = false;        // its bytes came with an earlier packet's chunk
  uint32_t qpn = 0;
  TxOrigin origin = TxOrigin::Request;
};
inline SentFrame parse_sent(fabric::Frame& frame) {
  static_cast<void>(packet::seal(frame.bytes(), packet::LinkKind::RoceV2Ipv4));
  SentFrame s;
  const auto p = packet::parse(frame.bytes(), packet::LinkType::Ethernet);
  EXPECT_TRUE(p) << "the block sent a frame that does not parse";
  if (p) {
    s.fields = p->fields;
    s.payload.assign(p->payload.begin(), p->payload.end());
  }
  return s;
}

struct FakeTransmit : TransmitPort {
  bool room = true;
  std::vector<SentFrame> sent;
  bool has_room(size_t) const override { return room; }
  void submit(fabric::Frame&& frame, const packet::FrameLayout&, std::span<const DmaPiece> pieces, Qpn qpn,
              TxOrigin origin, const ChunkRead& chunk) override {
    SentFrame s = parse_sent(frame);
    s.pieces.assign(pieces.begin(), pieces.end());
    s.ahead.assign(chunk.ahead.begin(), chunk.ahead.end());
    s.buffered = chunk.buffered;
    s.qpn = qpn.value();
    s.origin = origin;
    sent.push_back(std::move(s));
  }
  // Everything submitted counts as on the wire: nothing to take back.
  uint32_t withdraw(Qpn, uint8_t, Psn) override { return 0; }
};

struct FakeWire : WirePort {
  std::vector<packet::PacketFields> sent;  // ACKs and NAKs
  std::vector<std::vector<std::byte>> payloads;
  std::vector<sim::Time> at;  // when each went
  sim::Simulator* sim = nullptr;  // set to record `at`
  bool has_room(size_t) const override { return true; }
  void transmit(fabric::Frame&& frame) override {
    SentFrame s = parse_sent(frame);
    sent.push_back(s.fields);
    payloads.push_back(std::move(s.payload));
    if (sim != nullptr) at.push_back(sim->now());
  }
  uint32_t withdraw(Qpn, uint8_t, Psn) override { return 0; }
};

struct FakeResponses : ResponsePort {
  int armed = 0;
  void receive(QpContext&, const packet::ParsedPacket&, fabric::Frame&) override {}
  void arm_timer(QpContext&) override { ++armed; }
};

struct FakeCompletions : CompletionPort {
  struct Sent {
    uint64_t wr_id;
    WcStatus status;
  };
  struct Posted {
    Cqn cqn;
    Cqe cqe;
    bool solicited;
  };
  std::vector<Sent> sends;
  std::vector<Posted> posted;
  bool overrun = false;  // a posted CQE finds its CQ full, which breaks the QP
  void complete_send(QpContext&, const SendEntry& e, WcStatus status) override {
    sends.push_back({e.wqe.wr_id, status});
  }
  void post(QpContext& qp, Cqn cqn, Cqe cqe, bool solicited) override {
    posted.push_back({cqn, cqe, solicited});
    if (overrun) qp.state = QpState::Err;
  }
};

struct FakeFetch : FetchPort {
  bool pending = false;
  std::vector<WorkQueue> kicked;
  void kick(WorkQueue queue) override { kicked.push_back(queue); }
  bool recv_fetch_pending(WorkQueue) const override { return pending; }
};

struct FakeReceive : ReceivePort {
  std::vector<uint32_t> resumed;     // QPNs (0: any)
  std::vector<uint32_t> reinjected;  // the frames' PSNs
  int atomics_done = 0;
  void resume(std::optional<Qpn> qpn) override { resumed.push_back(qpn ? qpn->value() : 0); }
  void atomic_done() override { ++atomics_done; }
  void reinject(fabric::Frame&& frame) override { reinjected.push_back(parse_sent(frame).fields.psn.value()); }
};

// A packet as the receive pipeline hands it to a block: the frame and its parse,
// whose payload lies in the frame.
struct InPacket {
  fabric::Frame frame;
  packet::ParsedPacket p;
};
// Builds `f` (pad and link fields derived) around `payload` and parses it.
inline InPacket make_packet(fabric::FramePool& pool, packet::PacketFields f, std::span<const std::byte> payload = {}) {
  f.payload_length = static_cast<uint32_t>(payload.size());
  packet::derive_fields(f);
  InPacket in{pool.acquire(packet::frame_length(f)), {}};
  const auto n = packet::build(f, payload, in.frame.bytes());
  EXPECT_TRUE(n) << "the test's packet does not build";
  const auto p = packet::parse(in.frame.bytes(), packet::LinkType::Ethernet);
  EXPECT_TRUE(p) << "the test's packet does not parse";
  if (p) in.p = *p;
  return in;
}
// `n` bytes counting up from `first`.
inline std::vector<std::byte> pattern(size_t n, uint8_t first = 1) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::byte(static_cast<uint8_t>(first + i));
  return v;
}

struct BlockContext {
  explicit BlockContext(NicParams params = {})
      : config{.name = "nic", .params = params},
        pcie(config.params.pcie),
        dma(sim, pcie, memory),
        cache(config.params, pcie, translation),
        jitter(config.params.jitter_mean, sim.random("nic.jitter")),
        ctx{sim, config, sim::ClockDomain(config.params.clock_hz), pool, pcie, dma, translation, tables, cache, stats,
            jitter} {}

  // A QP with rings of `entries` WQEs in host memory, in `state`.
  QpContext& add_qp(uint32_t qpn, QpState state, uint32_t entries = 64) {
    auto qp = std::make_unique<QpContext>();
    qp->qpn = Qpn(qpn);
    qp->state = state;
    qp->sq = WorkRing{memory.allocate(size_t{entries} * kMinWqeStride, 4096), entries};
    qp->rq = WorkRing{memory.allocate(size_t{entries} * kMinWqeStride, 4096), entries};
    qp->retransmit_timer = std::make_unique<sim::Event>([] {}, "qp.timer");
    return tables.add_qp(std::move(qp));
  }
  void run() {
    while (sim.scheduler().step()) {
    }
  }
  // `len` zeroed bytes of host memory registered in `pd` with `access` (iova = address).
  const MemoryRegion& region(Pdn pd, uint64_t len, uint32_t access) {
    const uint64_t addr = memory.allocate(len, 4096);
    return translation.add(pd, addr, len, addr, access);
  }
  std::vector<std::byte> read(uint64_t addr, size_t len) {
    std::vector<std::byte> v(len);
    EXPECT_TRUE(memory.read(addr, v));
    return v;
  }

  sim::Simulator sim{1};
  SimulatedHostMemory memory;
  fabric::FramePool pool;
  NicConfig config;
  PcieLink pcie;
  DmaEngine dma;
  MemoryTranslation translation;
  ContextTables tables;
  ContextCache cache;
  NicCounters stats;
  Jitter jitter;
  NicContext ctx;
};

// A block's fixture (constructed from NicParams) with parameters `Tune` changes.
template <class Fixture, void (*Tune)(NicParams&)>
class Tuned : public Fixture {
protected:
  Tuned() : Fixture(params()) {}
  static NicParams params() {
    NicParams p;
    Tune(p);
    return p;
  }
};

}  // namespace rnicsim::nictest
