// A switch's shared packet buffer and its admission control.
//
// Every frame is charged, while it waits in the switch, to its ingress port and
// priority and to its egress port and priority. Lossy priorities are admitted by
// the dynamic threshold at egress (Choudhury-Hahne): a queue may grow while it
// is below alpha x the free shared buffer. Lossless priorities (PFC) are
// admitted by ingress accounting: below the XOFF threshold a frame goes into
// the shared buffer; above it the port is paused and what still arrives goes
// into the headroom reserved for that ingress port and priority; a frame that
// finds the headroom full is dropped and counted as a headroom overflow (the
// headroom is too small for the link: a configuration error reported loudly).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fabric/pfc.hpp"

namespace rnicsim::fabric {

struct BufferParams {
  uint64_t size_bytes = 16 * 1024 * 1024;  // the whole buffer, headroom included
  double alpha = 1.0;                      // dynamic threshold of lossy egress queues
  // IB credit flow control bounds what each ingress VL can hold: admit everything.
  bool credit_based = false;
};

// Why a switch dropped a frame. Keep kDropCauseNames in step.
enum class DropCause : uint8_t { NoRoute, BufferFull, EgressThreshold, HeadroomOverflow, Count };
inline constexpr std::array<std::string_view, static_cast<size_t>(DropCause::Count)> kDropCauseNames = {
    "no_route", "buffer_full", "egress_threshold", "headroom_overflow"};

class SharedBuffer {
public:
  // `headroom[i]`: bytes reserved per lossless priority of ingress port i.
  SharedBuffer(const BufferParams& params, const PfcParams& pfc, std::vector<uint64_t> headroom);

  enum class Charge : uint8_t { Shared, Headroom };
  struct Verdict {
    bool admitted = false;
    Charge charge = Charge::Shared;
    DropCause cause = DropCause::BufferFull;
  };
  Verdict admit(size_t in, size_t out, uint8_t prio, uint64_t bytes);
  // A frame leaves: its ingress pair gives back headroom first (what is above
  // the XOFF level is headroom, whichever frame leaves), then shared buffer.
  void release(size_t in, size_t out, uint8_t prio, uint64_t bytes);

  // Lossless (in, prio): the XOFF condition (occupancy over the XOFF threshold,
  // or anything in the headroom) and the XON condition (drained to the XON level).
  bool over_xoff(size_t in, uint8_t prio) const;
  bool under_xon(size_t in, uint8_t prio) const;

  uint64_t shared_size() const { return shared_size_; }
  uint64_t shared_used() const { return shared_used_; }
  uint64_t headroom_used() const { return headroom_used_; }
  uint64_t peak_used() const { return peak_used_; }
  uint64_t ingress_bytes(size_t in, uint8_t prio) const { return in_shared_[in][prio] + in_headroom_[in][prio]; }
  uint64_t egress_bytes(size_t out, uint8_t prio) const { return egress_[out][prio]; }
  uint64_t headroom_of(size_t in) const { return headroom_[in]; }

private:
  uint64_t free_shared() const { return shared_size_ - shared_used_; }
  uint64_t xoff_threshold() const;
  BufferParams params_;
  PfcParams pfc_;
  std::vector<uint64_t> headroom_;
  uint64_t shared_size_ = 0;
  uint64_t shared_used_ = 0, headroom_used_ = 0, peak_used_ = 0;
  std::vector<std::array<uint64_t, 8>> in_shared_, in_headroom_, egress_;
};

}  // namespace rnicsim::fabric
