// A pcap writer (libpcap) with nanosecond timestamps taken from simulated time.
// Ethernet link type for RoCEv2, LINKTYPE_INFINIBAND (247) for native IB.
#pragma once

#include <cstdint>
#include <string>

#include "fabric/port.hpp"
#include "packet/packet.hpp"

struct pcap;
struct pcap_dumper;

namespace rnicsim::fabric {

enum class CaptureLinkType : int { Ethernet = 1, InfiniBand = 247 };
// Native IB frames start with the LRH: LINKTYPE_INFINIBAND; RoCE frames are Ethernet.
constexpr CaptureLinkType capture_link_type(packet::LinkKind k) {
  return packet::is_ib(k) ? CaptureLinkType::InfiniBand : CaptureLinkType::Ethernet;
}

class PcapTap : public FrameTap {
public:
  // Throws std::runtime_error if the file cannot be created.
  PcapTap(const std::string& path, CaptureLinkType link, uint32_t snaplen = 65535);
  PcapTap(const PcapTap&) = delete;
  PcapTap& operator=(const PcapTap&) = delete;
  ~PcapTap() override;

  // A size-only frame is written as a capture cut after the headers: the record's
  // captured length says what is there, its original length the frame's length.
  void capture(sim::Time when, std::span<const std::byte> bytes, size_t wire_length) override;
  // Data frames of priorities not in `mask` (bit p: priority p) are not captured.
  void set_priority_filter(uint8_t mask) { priorities_ = mask; }
  bool wants(uint8_t priority) const override { return (priorities_ >> priority) & 1; }
  void flush();
  uint64_t frames() const { return frames_; }

private:
  pcap* handle_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  uint32_t snaplen_;
  uint64_t frames_ = 0;
  uint8_t priorities_ = 0xFF;
};

}  // namespace rnicsim::fabric
