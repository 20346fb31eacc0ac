// What crosses a cut link from one partition of the world to another: a frame
// that reaches the far port, or IB credit that reaches the sending port back;
// and word between the parts of a program on different partitions (a failed
// host telling the others), which crosses outside the fabric; each at a simulated time and with the key its sender's scheduler gave it
// (sim::Scheduler::next_key), so that the receiving scheduler fires it where one
// scheduler would have. Records are plain bytes appended to a buffer, which
// another thread reads or a message between processes carries: no pointer
// crosses. A frame keeps everything it holds: its bytes as built (a borrowed
// payload copied in), a deferred seal still deferred (named by its index in
// kSealers), its size-only tail and its metadata. Fixed-width little-endian
// fields; the reader checks each one and refuses a buffer that does not parse.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>
#include <vector>

#include "fabric/frame.hpp"
#include "sim/time.hpp"

namespace rnicsim::fabric {

// The functions that complete a deferred seal; a record names one by index (0: none).
extern const std::array<Frame::Sealer, 3> kSealers;

struct CrossingFrame {
  uint32_t port = 0;  // the receiving port's number in the world
  sim::Time arrival;
  uint64_t key = 0;
  Frame frame;
};

// Word for part `part` of what listens as `listener` (scenario::World::listen).
struct CrossingWord {
  uint32_t listener = 0;
  sim::Time arrival;
  uint64_t key = 0;
  uint32_t part = 0;
};

struct CrossingCredit {
  uint32_t port = 0;  // the port the credit returns to (the sender of the frames)
  sim::Time arrival;
  uint64_t key = 0;
  uint8_t vl = 0;
  uint64_t bytes = 0;
};

class CrossingWriter {
public:
  // Appends a frame, which is spent: its borrowed payload is copied in first.
  void frame(uint32_t port, sim::Time arrival, uint64_t key, Frame&& frame);
  void credit(const CrossingCredit& c);
  void word(const CrossingWord& w);
  std::span<const std::byte> bytes() const { return out_; }
  size_t records() const { return records_; }
  // The earliest arrival of the records written (Time::max() when none): where
  // the receiver's next window may start.
  sim::Time earliest() const { return earliest_; }
  void clear() {
    out_.clear();
    records_ = 0;
    earliest_ = sim::Time::max();
  }

private:
  std::vector<std::byte> out_;
  size_t records_ = 0;
  sim::Time earliest_ = sim::Time::max();
  void note(sim::Time arrival) {
    ++records_;
    earliest_ = std::min(earliest_, arrival);
  }
};

class CrossingReader {
public:
  // Frames are rebuilt in `pool`; a frame's kept route refers to `numbering`
  // (the receiving side's Destinations, numbered as the sender's).
  CrossingReader(std::span<const std::byte> in, FramePool& pool, const void* numbering)
      : in_(in), pool_(pool), numbering_(numbering) {}
  using Record = std::variant<std::monostate, CrossingFrame, CrossingCredit, CrossingWord>;
  // The next record; monostate at the end, or at a record that does not parse
  // (then malformed() says so and nothing after it is read).
  Record next();
  bool malformed() const { return malformed_; }

private:
  Record refuse() {
    malformed_ = true;
    in_ = {};
    return {};
  }
  Record read_frame(uint32_t port, sim::Time arrival, uint64_t key);
  Record read_credit(uint32_t port, sim::Time arrival, uint64_t key);
  std::span<const std::byte> in_;
  FramePool& pool_;
  const void* numbering_;
  bool malformed_ = false;
};

}  // namespace rnicsim::fabric
