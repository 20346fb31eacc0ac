// Records of what crosses a cut link: a frame or credit leaves one partition as
// bytes and arrives in another as the same thing, and bytes that do not parse
// are refused.
#include "fabric/crossing.hpp"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "fabric/port.hpp"
#include "packet/packet.hpp"
#include "sim/partitions.hpp"
#include "sim/simulator.hpp"

namespace rnicsim::fabric {
namespace {

using sim::Time;

const int kNumbering = 0;  // stands for the receiving side's Destinations

// A RoCEv2 WRITE First, built and sealed; `deferred` leaves its ICRC to a
// deferred seal, as the NIC's transmit pipeline does.
Frame write_first(FramePool& pool, std::vector<std::byte>* sealed, bool deferred) {
  packet::PacketFields f;
  f.link = packet::LinkKind::RoceV2Ipv4;
  f.opcode = packet::Opcode::RcRdmaWriteFirst;
  f.ip_src = packet::ipv4_mapped(0x0A000001);
  f.ip_dst = packet::ipv4_mapped(0x0A000002);
  f.psn = packet::Psn(42);
  f.dest_qp = packet::Qpn(0x11);
  f.payload_length = 256;
  f.reth = packet::RethFields{0x1000, packet::Rkey(7), 1 << 20};
  packet::derive_fields(f);
  Frame frame = pool.acquire(packet::frame_length(f));
  std::vector<std::byte> payload(256, std::byte{0x5a});
  EXPECT_TRUE(packet::build(f, payload, frame.bytes()));
  if (sealed != nullptr) sealed->assign(frame.bytes().begin(), frame.bytes().end());
  if (deferred) {
    auto b = frame.builder_bytes();
    for (size_t i = b.size() - 4; i < b.size(); ++i) b[i] = std::byte{0};  // the ICRC, not yet computed
    frame.defer_seal(&packet::complete_seal_ethernet);
  }
  FrameMeta& m = frame.meta();
  m.priority = 3;
  m.flow_id = 77;
  m.created = Time::from_ps(123'456);
  m.ingress_port = 5;
  m.ingress_vl = 3;
  m.psn = packet::Psn(42);
  m.request = true;
  m.route = {&kNumbering, 19, 0xfeedface'cafef00dull, 14, Markings{26, 3, 0, true}};
  return frame;
}

CrossingReader::Record only_record(std::span<const std::byte> in, FramePool& pool) {
  CrossingReader r(in, pool, &kNumbering);
  auto rec = r.next();
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.next()));
  EXPECT_FALSE(r.malformed());
  return rec;
}

TEST(Crossing, AFrameArrivesWithItsSealStillDeferredAndItsMetadata) {
  FramePool here(2048), there(2048);
  std::vector<std::byte> sealed;
  CrossingWriter w;
  w.frame(9, Time::from_ps(5'000'000), 0xabc, write_first(here, &sealed, true));
  EXPECT_EQ(here.in_use(), 0u);  // the frame was spent
  auto rec = only_record(w.bytes(), there);
  auto* c = std::get_if<CrossingFrame>(&rec);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->port, 9u);
  EXPECT_EQ(c->arrival, Time::from_ps(5'000'000));
  EXPECT_EQ(c->key, 0xabcu);
  EXPECT_TRUE(c->frame.intact());
  EXPECT_EQ(c->frame.deferred_sealer(), &packet::complete_seal_ethernet);
  const FrameMeta& m = c->frame.meta();
  EXPECT_EQ(m.priority, 3);
  EXPECT_EQ(m.flow_id, 77u);
  EXPECT_EQ(m.created, Time::from_ps(123'456));
  EXPECT_EQ(m.ingress_port, 5);
  EXPECT_EQ(m.ingress_vl, 3);
  EXPECT_EQ(m.psn, packet::Psn(42));
  EXPECT_TRUE(m.request);
  EXPECT_FALSE(m.corrupted);
  EXPECT_EQ(m.route.numbering, &kNumbering);
  EXPECT_EQ(m.route.destination, 19u);
  EXPECT_EQ(m.route.flow_hash, 0xfeedface'cafef00dull);
  EXPECT_EQ(m.route.ip_offset, 14);
  EXPECT_EQ(m.route.markings.dscp, 26);
  EXPECT_TRUE(m.route.markings.tagged);
  const auto bytes = c->frame.bytes();  // completes the seal: the ICRC the builder would have written
  EXPECT_EQ(std::vector<std::byte>(bytes.begin(), bytes.end()), sealed);
}

TEST(Crossing, ASizeOnlyFrameKeepsItsSizeAndItsCorruption) {
  FramePool here(2048), there(2048);
  Frame f = here.acquire(1500);
  for (size_t i = 0; i < 60; ++i) f.builder_bytes()[i] = static_cast<std::byte>(i);
  f.elide_from(60);
  f.meta().corrupted = true;
  CrossingWriter w;
  w.frame(1, Time::from_ps(10), 1, std::move(f));
  auto rec = only_record(w.bytes(), there);
  auto* c = std::get_if<CrossingFrame>(&rec);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->frame.size(), 1500u);
  EXPECT_EQ(c->frame.elided(), 1440u);
  EXPECT_FALSE(c->frame.intact());
  EXPECT_TRUE(c->frame.meta().corrupted);
  EXPECT_EQ(c->frame.meta().route.numbering, nullptr);  // none was kept
  for (size_t i = 0; i < 60; ++i) EXPECT_EQ(c->frame.bytes()[i], static_cast<std::byte>(i));
}

TEST(Crossing, ABorrowedPayloadCrossesAsTheBytesTheLenderHadThen) {
  FramePool here(2048), there(2048);
  std::array<std::byte, 64> memory{};
  memory.fill(std::byte{0x21});
  BorrowList lender;
  Frame f = here.acquire(100);
  f.lend_payload(lender, 20, memory.data(), 64);
  CrossingWriter w;
  w.frame(2, Time::from_ps(1), 2, std::move(f));
  EXPECT_EQ(lender.borrowers(), 0u);
  memory.fill(std::byte{0x99});  // later stores do not reach the record
  auto rec = only_record(w.bytes(), there);
  auto* c = std::get_if<CrossingFrame>(&rec);
  ASSERT_NE(c, nullptr);
  for (size_t i = 20; i < 84; ++i) EXPECT_EQ(c->frame.bytes()[i], std::byte{0x21}) << i;
}

// Three records (credit, frame, word) in one buffer, and every cut of it: the records before the cut
// come out whole, the cut one is refused with nothing after it.
TEST(Crossing, RecordsComeInOrderAndACutBufferIsRefusedWhereItIsCut) {
  FramePool here(2048), there(2048);
  CrossingWriter w;
  w.credit({4, Time::from_ps(700), 11, 2, 4096});
  const size_t credit_bytes = w.bytes().size();
  w.frame(9, Time::from_ps(800), 12, write_first(here, nullptr, true));
  const size_t frame_end = w.bytes().size();
  w.word({3, Time::from_ps(900), 13, 6});
  ASSERT_EQ(w.records(), 3u);
  const std::vector<std::byte> all(w.bytes().begin(), w.bytes().end());
  for (size_t cut = 0; cut <= all.size(); ++cut) {
    CrossingReader r(std::span<const std::byte>(all).first(cut), there, &kNumbering);
    size_t whole = 0;
    for (auto rec = r.next(); !std::holds_alternative<std::monostate>(rec); rec = r.next()) ++whole;
    const size_t expect = cut == all.size() ? 3 : cut >= frame_end ? 2 : cut >= credit_bytes ? 1 : 0;
    EXPECT_EQ(whole, expect) << cut;
    EXPECT_EQ(r.malformed(), cut != 0 && cut != credit_bytes && cut != frame_end && cut != all.size()) << cut;
  }
  EXPECT_EQ(there.in_use(), 0u);
  CrossingReader r(all, there, &kNumbering);
  auto first = r.next();
  auto* credit = std::get_if<CrossingCredit>(&first);
  ASSERT_NE(credit, nullptr);
  EXPECT_EQ(credit->port, 4u);
  EXPECT_EQ(credit->arrival, Time::from_ps(700));
  EXPECT_EQ(credit->key, 11u);
  EXPECT_EQ(credit->vl, 2);
  EXPECT_EQ(credit->bytes, 4096u);
  EXPECT_TRUE(std::holds_alternative<CrossingFrame>(r.next()));
  auto third = r.next();
  auto* word = std::get_if<CrossingWord>(&third);
  ASSERT_NE(word, nullptr);
  EXPECT_EQ(word->listener, 3u);
  EXPECT_EQ(word->arrival, Time::from_ps(900));
  EXPECT_EQ(word->key, 13u);
  EXPECT_EQ(word->part, 6u);
}

// A field out of its range refuses the record: an unknown kind, a priority
// past 7, an unknown sealer, a frame larger than the receiver's buffers.
TEST(Crossing, FieldsOutOfTheirRangeAreRefused) {
  FramePool here(2048), small(64);
  CrossingWriter w;
  w.frame(9, Time::from_ps(800), 12, write_first(here, nullptr, true));
  const std::vector<std::byte> good(w.bytes().begin(), w.bytes().end());
  constexpr size_t kHead = 1 + 4 + 8 + 8, kSealer = kHead + 8, kPriority = kSealer + 1;
  auto refused = [&](size_t at, std::byte value, FramePool& pool) {
    std::vector<std::byte> bad = good;
    bad[at] = value;
    CrossingReader r(bad, pool, &kNumbering);
    return std::holds_alternative<std::monostate>(r.next()) && r.malformed();
  };
  EXPECT_TRUE(refused(0, std::byte{9}, here));
  EXPECT_TRUE(refused(kSealer, std::byte{3}, here));
  EXPECT_TRUE(refused(kPriority, std::byte{8}, here));
  EXPECT_FALSE(refused(kPriority, std::byte{7}, here));
  CrossingReader r(good, small, &kNumbering);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.next()));
  EXPECT_TRUE(r.malformed());
}


// Two ports and what each saw arrive, wired in one scheduler or across two.
// Port a sends WRITE packets to b, the second of them delayed 3 us by a fault
// (it lands behind later ones); b answers each with a frame of its own; both
// return IB credit, which holds a's frames back. Arrivals are logged with
// their time and which frame they were, each port's in its own log (what two
// schedulers write side by side interleaves by window, not by time).
class TwoPorts {
public:
  // across: 0, wired directly in one scheduler; else that many threads.
  explicit TwoPorts(unsigned across) : across_(across) {
    fabric::PortParams p;  // 100 Gb/s, 1 us
    p.vl_credit_bytes = 700;  // two WRITE frames at a time
    sims_.push_back(std::make_unique<sim::Simulator>(1));
    sims_.push_back(across ? std::make_unique<sim::Simulator>(1) : nullptr);
    sim::Simulator& sb = across ? *sims_[1] : *sims_[0];
    a_ = std::make_unique<Port>(*sims_[0], "a", p, sim::Actor(1));
    b_ = std::make_unique<Port>(sb, "b", p, sim::Actor(2));
    if (across) {
      a_->connect_across(out_[0], 1);
      b_->connect_across(out_[1], 0);
    } else {
      Port::connect(*a_, *b_);
    }
    FaultRule delay_second;
    delay_second.nth = 2;
    delay_second.action = FaultAction::Delay;
    delay_second.delay = sim::Duration::us(3);
    a_->faults().add_rule(delay_second);
    sinks_[0] = std::make_unique<Sink>(*this, 0, *sims_[0]);
    sinks_[1] = std::make_unique<Sink>(*this, 1, sb);
    a_->set_receiver(sinks_[0].get());
    b_->set_receiver(sinks_[1].get());
    for (int i = 0; i < 6; ++i) a_->send(write_first(pool_[0], nullptr, false));
  }
  // Runs to the end: one scheduler at once, or two as partitions in windows of
  // the link's delay, each window's records landing in the other before the next.
  std::array<std::vector<std::string>, 2> run() {
    if (!sims_[1]) {
      sims_[0]->scheduler().run_until(Time::max());
      return log_;
    }
    sim::Partitions engine(sim::Duration::us(1), across_);
    for (int side = 0; side < 2; ++side)
      engine.add({&sims_[side]->scheduler(), [this, side] { land(1 - side); }, [this, side] { out_[side].clear(); }});
    engine.run_until(Time::max());
    return log_;
  }
  size_t in_use() const { return pool_[0].in_use() + pool_[1].in_use(); }
  uint64_t credit_stalls() const {
    uint64_t n = 0;
    for (uint64_t s : a_->counters().credit_stalls) n += s;
    return n;
  }

private:
  struct Sink : FrameSink {
    TwoPorts& t;
    int side;
    sim::Simulator& sim;
    Sink(TwoPorts& two, int s, sim::Simulator& si) : t(two), side(s), sim(si) {}
    void receive(Frame&& f) override {
      t.log_[side].push_back(std::to_string(sim.now().picoseconds()) + " got " + std::to_string(f.size()));
      Port& at = side == 0 ? *t.a_ : *t.b_;
      at.return_credit(f.meta().priority, f.size());
      if (side == 1) {  // an answer, of a size that tells which frame it answers
        Frame r = t.pool_[1].acquire(64 + 8 * t.answers_++);
        r.meta().priority = 0;
        at.send(std::move(r));
      }
    }
  };
  // Lands what side `from` wrote at the other side's port.
  void land(int from) {
    Port& to = from == 0 ? *b_ : *a_;
    CrossingReader in(out_[from].bytes(), pool_[1 - from], &kNumbering);
    for (auto r = in.next(); !std::holds_alternative<std::monostate>(r); r = in.next()) {
      if (auto* f = std::get_if<CrossingFrame>(&r)) to.land(f->arrival, f->key, std::move(f->frame));
      if (auto* c = std::get_if<CrossingCredit>(&r)) to.land_credit(*c);
    }
    EXPECT_FALSE(in.malformed());
  }
  unsigned across_;
  std::vector<std::unique_ptr<sim::Simulator>> sims_;
  std::array<FramePool, 2> pool_;
  std::array<CrossingWriter, 2> out_;
  std::unique_ptr<Port> a_, b_;
  std::array<std::unique_ptr<Sink>, 2> sinks_;
  std::array<std::vector<std::string>, 2> log_;  // each port's own
  int answers_ = 0;
};

// A port wired to one in another scheduler, its frames and credit crossing as
// records at window ends, sees what the pair sees wired directly.
TEST(Crossing, PortsInTwoSchedulersSeeWhatADirectlyWiredPairSees) {
  TwoPorts one(0);
  const auto direct = one.run();
  EXPECT_EQ(direct[0].size(), 6u);  // six frames each way
  EXPECT_EQ(direct[1].size(), 6u);
  EXPECT_GT(one.credit_stalls(), 0u);  // credit held a's frames back
  for (unsigned threads : {1u, 2u}) {
    TwoPorts two(threads);
    EXPECT_EQ(two.run(), direct) << threads;
    EXPECT_EQ(two.credit_stalls(), one.credit_stalls());
    EXPECT_EQ(two.in_use(), 0u);
  }
  EXPECT_EQ(one.in_use(), 0u);
}

}  // namespace
}  // namespace rnicsim::fabric
