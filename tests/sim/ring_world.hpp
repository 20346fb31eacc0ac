// A ring of actors for the engine's tests: each ticks every 10 ns and sends to
// the next two 20 ns later; a message is echoed at once (an event of the
// present) and every other one answered. Actors are spread over `partitions`
// schedulers (actor a in partition a mod P) run by sim::Partitions in windows
// of the smallest delay between actors (20 ns) on `threads` threads: what
// crosses waits in the sending partition's outbox, with its key, and lands at
// the window's end. Each actor's log is what it saw, in order.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/partitions.hpp"
#include "sim/scheduler.hpp"

namespace rnicsim::sim {

class Ring {
public:
  static constexpr uint32_t kActors = 5;
  Ring(uint32_t partitions, unsigned threads, Time last_tick = Time::zero() + Duration::ns(400))
      : last_tick_(last_tick), logs_(kActors + 1), parts_(partitions), engine_(Duration::ns(20), threads) {
    for (uint32_t a = 1; a <= kActors; ++a) {
      ticks_.push_back(std::make_unique<Event>([this, a] { tick(a); }, "tick", Actor(a)));
      at(a).scheduler.schedule(*ticks_.back(), Time::zero() + Duration::ns(10));
    }
    for (uint32_t p = 0; p < partitions; ++p)
      engine_.add({&parts_[p].scheduler, [this, p] { land(p); }, [this, p] { parts_[p].outbox.clear(); }});
  }
  std::vector<std::vector<std::string>> run(Time end) {
    engine_.run_until(end);
    return logs_;
  }
  Partitions& engine() { return engine_; }

private:
  struct Crossing {
    Event* event;
    Time when;
    uint64_t key;
    uint32_t to;
  };
  struct Part {
    Scheduler scheduler;
    std::vector<Crossing> outbox;
    std::vector<std::unique_ptr<Event>> events;  // made by this partition's actors
  };
  Part& at(uint32_t actor) { return parts_[actor % parts_.size()]; }
  void land(uint32_t p) {
    for (const Part& from : parts_)
      for (const Crossing& c : from.outbox)
        if (&at(c.to) == &parts_[p]) parts_[p].scheduler.schedule_keyed(*c.event, c.when, c.key);
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
    Event& e = event(from, to, [this, from, to, what] { receive(to, from, what); });
    const Time when = here.scheduler.now() + Duration::ns(20);
    if (&at(to) == &here) {
      here.scheduler.schedule(e, when);
    } else {
      here.outbox.push_back({&e, when, here.scheduler.next_key(), to});
    }
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
  }
  Time last_tick_;
  std::vector<std::unique_ptr<Event>> ticks_;
  std::vector<std::vector<std::string>> logs_;
  uint32_t received_[kActors + 1] = {};
  std::vector<Part> parts_;
  Partitions engine_;
};

}  // namespace rnicsim::sim
