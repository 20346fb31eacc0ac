// A ring of actors for the engine's tests: each ticks every 10 ns and sends to
// the next two 20 ns later; a message is echoed at once (an event of the
// present) and every other one answered. Actors are spread over `partitions`
// schedulers (actor a in partition a mod P) run by sim::Partitions in windows
// of the smallest delay between actors (20 ns) on `threads` threads: what
// crosses waits in the sending partition's outbox (as bytes: its time, key,
// ends and text), with its key, and lands at the window's end. Each actor's
// log is what it saw, in order.
//
// With `outside`, an outside event every 37 ns (to 300 ns) tells every actor
// so and pokes it 3 ns later. With `stages`, the run goes in two stages: a
// partition's share of one is done once each of its actors has received
// `goal` messages (10, then 30); each stage's end is logged by every actor,
// and the second ends the run.
//
// With `ranks`, this process is one rank of the run and holds only its share
// of the partitions (Partitions::set_ranks); the other actors' logs stay empty.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/partitions.hpp"
#include "sim/rank_link.hpp"
#include "sim/scheduler.hpp"

namespace rnicsim::sim {

struct RingOptions {
  Time last_tick = Time::zero() + Duration::ns(400);
  bool outside = false, stages = false;
};

class Ring {
public:
  using Options = RingOptions;
  static constexpr uint32_t kActors = 5;
  Ring(uint32_t partitions, unsigned threads, Options o = {}, RankLink* ranks = nullptr)
      : last_tick_(o.last_tick), logs_(kActors + 1), ranks_(ranks), parts_(partitions), engine_(Duration::ns(20), threads) {
    if (o.outside) engine_.set_outside(outside_);
    if (ranks != nullptr) engine_.set_ranks(*ranks, partitions);
    for (uint32_t p = 0; p < partitions; ++p) {
      parts_[p].to.resize(partitions);
      parts_[p].from.resize(partitions);
      if (held(p)) add(p);
    }
    for (uint32_t a = 1; a <= kActors; ++a) {
      ticks_.push_back(std::make_unique<Event>([this, a] { tick(a); }, "tick", Actor(a)));
      if (held(a % partitions)) at(a).scheduler.schedule(*ticks_.back(), Time::zero() + Duration::ns(10));
    }
    if (o.outside) outside_.schedule(outside_tick_, Time::zero() + Duration::ns(37));
    if (o.stages) engine_.set_stages({[this](size_t p) { return share_done(parts_[p]); }, [this](Time t) { return end_stage(t); }});
  }
  std::vector<std::vector<std::string>> run(Time end) {
    engine_.run_until(end);
    return logs_;
  }
  Partitions& engine() { return engine_; }
  // Whether this rank holds partition `p` (every one without ranks).
  bool held(uint32_t p) const { return ranks_ == nullptr || Partitions::rank_of(p, ranks_->ranks()) == ranks_->rank(); }

private:
  // A message on its way: fixed fields, then the text.
  struct Crossing {
    int64_t when;
    uint64_t key;
    uint32_t from, to, length, unused = 0;  // no padding: all bytes written
  };
  struct Part {
    Scheduler scheduler;
    std::vector<std::vector<std::byte>> to;            // outbox, per partition
    Time earliest = Time::max();                       // of what it holds
    std::vector<std::span<const std::byte>> from;      // from other ranks' partitions
    std::vector<std::unique_ptr<Event>> events;        // landed here or made by this partition's actors
  };
  void add(uint32_t p) {
    Part& part = parts_[p];
    auto clear = [&part] {
      part.earliest = Time::max();
      for (auto& bytes : part.to) bytes.clear();
      for (auto& bytes : part.from) bytes = {};
    };
    auto outbox = [&part](size_t to) { return std::span<const std::byte>(part.to[to]); };
    auto inbox = [&part](size_t from, std::span<const std::byte> bytes) { part.from[from] = bytes; };
    engine_.add({&part.scheduler, [this, p] { land(p); }, clear}, {outbox, inbox, [&part] { return part.earliest; }});
  }
  Part& at(uint32_t actor) { return parts_[actor % parts_.size()]; }
  const Part& at(uint32_t actor) const { return parts_[actor % parts_.size()]; }
  void land(uint32_t p) {
    for (uint32_t q = 0; q < parts_.size(); ++q) {
      std::span<const std::byte> in = held(q) ? std::span<const std::byte>(parts_[q].to[p]) : parts_[p].from[q];
      while (!in.empty()) {
        Crossing c;
        std::memcpy(&c, in.data(), sizeof c);
        const std::string what(reinterpret_cast<const char*>(in.data() + sizeof c), c.length);
        in = in.subspan(sizeof c + c.length);
        Event& e = event(c.to, c.to, [this, to = c.to, from = c.from, what] { receive(to, from, what); });
        parts_[p].scheduler.schedule_keyed(e, Time::from_ps(c.when), c.key);
      }
    }
  }
  Event& event(uint32_t maker, uint32_t actor, std::function<void()> f) {
    auto& events = at(maker).events;
    events.push_back(std::make_unique<Event>(std::move(f), "message", Actor(actor)));
    return *events.back();
  }
  void log(uint32_t a, const std::string& what) {
    logs_[a].push_back(std::to_string(at(a).scheduler.now().picoseconds()) + " " + what);
  }
  void send(uint32_t from, uint32_t to, const std::string& what) {
    Part& here = at(from);
    const Time when = here.scheduler.now() + Duration::ns(20);
    if (&at(to) == &here) {
      here.scheduler.schedule(event(from, to, [this, from, to, what] { receive(to, from, what); }), when);
      return;
    }
    const Crossing c{when.picoseconds(), here.scheduler.next_key(), from, to, static_cast<uint32_t>(what.size())};
    here.earliest = std::min(here.earliest, when);
    auto& out = here.to[to % parts_.size()];
    const auto* bytes = reinterpret_cast<const std::byte*>(&c);
    out.insert(out.end(), bytes, bytes + sizeof c);
    const auto* text = reinterpret_cast<const std::byte*>(what.data());
    out.insert(out.end(), text, text + what.size());
  }
  void tick(uint32_t a) {
    log(a, "tick");
    send(a, a % kActors + 1, "tick of " + std::to_string(a));
    send(a, (a + 1) % kActors + 1, "tick of " + std::to_string(a));
    if (at(a).scheduler.now() < last_tick_) at(a).scheduler.schedule_in(*ticks_[a - 1], Duration::ns(10));
  }
  void receive(uint32_t a, uint32_t from, const std::string& what) {
    log(a, what);
    Event& echo = event(a, a, [this, a, what] { log(a, "echo " + what); });
    at(a).scheduler.schedule(echo, at(a).scheduler.now());
    if (++received_[a] % 2 == 0 && what.rfind("tick", 0) == 0) send(a, from, "answer to " + what);
    if (received_[a] == goal_ && share_done(at(a))) at(a).scheduler.stop();  // the share's last step
  }
  bool share_done(const Part& part) const {
    for (uint32_t a = 1; a <= kActors; ++a)
      if (&at(a) == &part && received_[a] < goal_) return false;
    return true;
  }
  bool end_stage(Time t) {
    for (uint32_t a = 1; a <= kActors; ++a)
      if (held(a % parts_.size())) log(a, "stage " + std::to_string(goal_) + " ends at " + std::to_string(t.picoseconds()));
    goal_ += 20;
    return goal_ <= 30;
  }
  void outside_tick() {
    for (uint32_t a = 1; a <= kActors; ++a) {
      if (!held(a % parts_.size())) continue;
      log(a, "outside");
      outside_events_.push_back(std::make_unique<Event>([this, a] { log(a, "poked"); }, "poke", Actor(a)));
      at(a).scheduler.schedule(*outside_events_.back(), outside_.now() + Duration::ns(3));
    }
    if (outside_.now() < Time::zero() + Duration::ns(300)) outside_.schedule_in(outside_tick_, Duration::ns(37));
  }
  Time last_tick_;
  uint32_t goal_ = 10;
  Scheduler outside_;
  Event outside_tick_{[this] { outside_tick(); }, "outside"};
  std::vector<std::unique_ptr<Event>> outside_events_;
  std::vector<std::unique_ptr<Event>> ticks_;
  std::vector<std::vector<std::string>> logs_;
  uint32_t received_[kActors + 1] = {};
  RankLink* ranks_;
  std::vector<Part> parts_;
  Partitions engine_;
};

}  // namespace rnicsim::sim
