// The discrete-event kernel: events are members of the components that own them
// (gem5 style), so scheduling never allocates. The queue is an indexed binary heap
// ordered by (time, key), every event keyed, those for the present too: a run is
// a pure function of its inputs. The key is
// (the actor that scheduled the event, how many it had scheduled before): an
// order that each actor's own history fixes, so that it is the same when the
// actors run in separate schedulers and their events cross between them.
#pragma once

#include <cstdint>
#include <cstddef>
#include <functional>
#include <new>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/time.hpp"

namespace rnicsim::sim {

class Scheduler;

// A unit of the model that a partition holds whole (a host, a switch), named
// by a number. Its events run as it: what they schedule takes its key. Actor 0
// is the outside: set-up, and the emulation daemon between events.
class Actor {
public:
  static constexpr unsigned kBits = 24;
  constexpr Actor() = default;
  explicit constexpr Actor(uint32_t id) : id_(id) {
    if (id >> kBits) throw std::out_of_range("an actor's number takes 24 bits");
  }
  constexpr uint32_t id() const { return id_; }
  friend constexpr bool operator==(Actor, Actor) = default;

private:
  uint32_t id_ = 0;
};

// One pending action of a component. An event is either idle or scheduled once;
// scheduling a scheduled event is an error (use reschedule). The callback is bound
// at construction, so firing costs one indirect call: a small callable that is
// trivially copyable (a lambda capturing `this` and a pointer or two) is stored in
// the event itself; anything else is kept in a std::function.
class alignas(64) Event {
public:
  template <class F, class = std::enable_if_t<std::is_invocable_r_v<void, F&>>>
  explicit Event(F&& action, std::string_view name = "event", Actor actor = Actor()) : actor_(actor), name_(name) {
    using Fn = std::decay_t<F>;
    if constexpr (sizeof(Fn) <= kInlineBytes && alignof(Fn) <= alignof(std::max_align_t) &&
                  std::is_trivially_copyable_v<Fn> && std::is_trivially_destructible_v<Fn>) {
      ::new (static_cast<void*>(inline_)) Fn(std::forward<F>(action));
      invoke_ = [](Event& e) { (*std::launder(reinterpret_cast<Fn*>(e.inline_)))(); };
    } else {
      fallback_ = std::function<void()>(std::forward<F>(action));
      invoke_ = [](Event& e) { e.fallback_(); };
    }
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  bool scheduled() const { return heap_index_ != kIdle; }
  Time when() const { return when_; }
  std::string_view name() const { return name_; }
  Actor actor() const { return actor_; }

private:
  friend class Scheduler;
  friend class SlotHeap;
  static constexpr uint32_t kIdle = UINT32_MAX;
  static constexpr size_t kInlineBytes = 24;
  void fire() { invoke_(*this); }
  // The event is in no queue any more.
  void make_idle() {
    heap_index_ = kIdle;
    owner_ = nullptr;
  }

  // What scheduling, sifting and firing touch comes first, in one cache line
  // (the event is aligned to one): in a large world most events are cold when
  // the queue moves or fires them, and each line is a miss.
  void (*invoke_)(Event&) = nullptr;
  alignas(std::max_align_t) unsigned char inline_[kInlineBytes];
  Time when_;
  Scheduler* owner_ = nullptr;
  uint32_t heap_index_ = kIdle;
  Actor actor_;
  std::function<void()> fallback_;
  std::string_view name_;
};

// The queue's slots: each event's ordering key beside its pointer, so that
// sifting compares without touching the events: (time, key), compared as one
// unsigned 128-bit number (times are never negative). The two halves are
// separate words, written and read as such: a slot read back as one 16-byte
// load right after two 8-byte stores cannot be forwarded from the store
// buffer and stalls.
struct QueueSlot {
  uint64_t time;
  uint64_t key;
  Event* event;
  friend bool operator<(const QueueSlot& a, const QueueSlot& b) {
    using Key = unsigned __int128;
    return ((Key{a.time} << 64) | a.key) < ((Key{b.time} << 64) | b.key);
  }
};

// An indexed 4-ary heap of slots; each event keeps its position, with the
// heap's tag in the high bit, in Event::heap_index_ (O(log n) removal). Four
// children, not two: every level a slot moves writes its event's position, a
// cold line in a large world, and a 4-ary heap has half the levels; the extra
// comparisons read slots that lie side by side.
class SlotHeap {
public:
  explicit SlotHeap(uint32_t tag) : tag_(tag) {}
  bool empty() const { return slots_.empty(); }
  size_t size() const { return slots_.size(); }
  const QueueSlot& front() const { return slots_.front(); }
  const std::vector<QueueSlot>& slots() const { return slots_; }
  void push(const QueueSlot& s) {
    slots_.emplace_back();  // a hole at the end, filled by the sift
    sift_up(static_cast<uint32_t>(slots_.size() - 1), s);
  }
  // Removes and returns the earliest event (its index is left to the caller).
  Event* pop();
  void remove_at(uint32_t i);

private:
  void place(uint32_t i, const QueueSlot& s);
  // Moves the hole at `i` up until `s` fits there.
  void sift_up(uint32_t i, const QueueSlot s) {
    while (i > 0) {
      const uint32_t parent = (i - 1) / kArity;
      if (!(s < slots_[parent])) break;
      place(i, slots_[parent]);
      i = parent;
    }
    place(i, s);
  }
  void sift_down(uint32_t i);
  // The earliest of i's children (i has at least one; n slots).
  uint32_t earliest_child(uint32_t i, uint32_t n) const {
    const uint32_t first = kArity * i + 1;
    const uint32_t end = first + kArity < n ? first + kArity : n;
    uint32_t best = first;
    for (uint32_t c = first + 1; c < end; ++c)
      if (slots_[c] < slots_[best]) best = c;
    return best;
  }
  static constexpr uint32_t kArity = 4;

  std::vector<QueueSlot> slots_;
  uint32_t tag_;
};

class Scheduler {
public:
  Scheduler() = default;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  ~Scheduler();

  Time now() const { return now_; }

  // Schedules an idle event at absolute time `t` (not before now).
  void schedule(Event& e, Time t) {
    if (e.scheduled() || t < now_) [[unlikely]] refuse(e);
    insert(e, t, next_key());
  }
  void schedule_in(Event& e, Duration d) { schedule(e, now_ + d); }
  // The key the acting actor gives the next event it schedules, taken: an
  // event sent to another scheduler carries it there (schedule_keyed).
  uint64_t next_key() {
    const uint64_t n = (acting_.id() == 0 ? *outside_count_ : scheduled_by_[acting_.id()])++;
    if (n >> kCountBits) [[unlikely]] refuse_count();
    return (uint64_t{acting_.id()} << kCountBits) | n;
  }
  // Schedules an idle event, not before the present, with the key its sender
  // took when it sent it: it fires where it would have, had it been scheduled then.
  void schedule_keyed(Event& e, Time t, uint64_t key) {
    if (e.scheduled() || t < now_) [[unlikely]] refuse(e);
    insert(e, t, key);
  }
  // The actor whose event is firing (the outside between events).
  Actor acting() const { return acting_; }
  // Moves an event (scheduled or not) to time `t`.
  void reschedule(Event& e, Time t);
  // Removes a scheduled event; a no-op for an idle one.
  void cancel(Event& e) {
    if (!e.scheduled()) return;
    (e.heap_index_ & kPresentTag ? present_ : later_).remove_at(e.heap_index_ & ~kPresentTag);
  }

  bool empty() const { return later_.empty() && present_.empty(); }
  size_t pending() const { return later_.size() + present_.size(); }
  Time next_time() const {
    if (!present_.empty()) return now_;
    return later_.empty() ? Time::max() : later_.front().event->when_;
  }

  // Fires the earliest event. Returns false when the queue is empty.
  bool step() {
    Event* e = nullptr;
    if (!present_.empty() && (later_.empty() || present_.front() < later_.front())) {
      e = present_.pop();
    } else if (!later_.empty()) {
      e = later_.pop();
    } else {
      return false;
    }
    // The next event is probably the later queue's new front: its line comes
    // in while this one fires, instead of stalling the next step.
    if (!later_.empty()) __builtin_prefetch(later_.front().event, 1);
    now_ = e->when_;
    ++fired_;
    acting_ = e->actor_;
    // One test for both rare cases: a new actor, and actor 0 (the outside).
    if (acting_.id() - 1 >= scheduled_by_.size() - 1) [[unlikely]] meet_actor();
    e->fire();
    acting_ = Actor();
    return true;
  }
  // Fires events until the queue is empty or the next event is after `until`;
  // time then stands at min(until, time of the last event fired) — never past `until`.
  void run_until(Time until);
  // Fires every event at or before `t`, then sets the time to `t` (not before
  // now): the real-time executor moves the clock to the wall clock this way, so
  // work arriving from outside (a doorbell) is scheduled at the present.
  void advance_to(Time t);
  // Stops run_until after the current event.
  void stop() { stop_requested_ = true; }
  // Whether the last run_until ended at a stop().
  bool stopped() const { return stop_requested_; }
  // Sets the time to `t` (not before now) when nothing pending is earlier:
  // a partition's clock stands where the outside acts on it.
  void move_to(Time t);
  // Makes this scheduler one partition of a world whose outside (actor 0:
  // set-up, and what no unit does) is `outside`: actor 0 takes its keys from
  // `outside`'s count, one sequence world-wide for any partitioning, and no
  // event of actor 0 may fire here.
  void take_outside_keys_from(Scheduler& outside);

  uint64_t events_fired() const { return fired_; }

private:
  // A key: the actor in the high bits, its count in the rest.
  static constexpr unsigned kCountBits = 64 - Actor::kBits;
  // Events for the present (a third of a packet stream's) go to a heap of
  // their own, a few deep, not into the big one; step takes the earlier front.
  static constexpr uint32_t kPresentTag = 0x8000'0000u;
  void insert(Event& e, Time t, uint64_t key) {
    e.when_ = t;
    e.owner_ = this;
    (t == now_ ? present_ : later_).push(QueueSlot{static_cast<uint64_t>(t.picoseconds()), key, &e});
  }
  // Grows the counts for a new actor; refuses actor 0 in a partition.
  void meet_actor();
  [[noreturn]] void refuse(const Event& e) const;
  [[noreturn]] void refuse_count() const;

  SlotHeap later_{0};
  SlotHeap present_{kPresentTag};  // empty whenever time moves
  Time now_;
  Actor acting_;
  std::vector<uint64_t> scheduled_by_ = std::vector<uint64_t>(1);  // events each actor scheduled (not 0)
  uint64_t outside_scheduled_ = 0;                  // actor 0's count, when this is the outside
  uint64_t* outside_count_ = &outside_scheduled_;   // actor 0's count: here, or the outside's
  uint64_t fired_ = 0;
  bool stop_requested_ = false;
};

}  // namespace rnicsim::sim
