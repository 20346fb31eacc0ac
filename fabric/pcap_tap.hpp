// A pcap writer (libpcap) with nanosecond timestamps taken from simulated time.
// RoCEv2 frames are Ethernet; native IB packets are written as ERF records of
// type InfiniBand (what Wireshark 4.0 decodes) or as LINKTYPE_INFINIBAND (247).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fabric/port.hpp"
#include "packet/erf.hpp"
#include "packet/packet.hpp"

struct pcap;
struct pcap_dumper;

namespace rnicsim::fabric {

enum class CaptureLinkType : int { Ethernet = 1, Erf = 197, InfiniBand = 247 };

// How native IB packets are captured (scenario `ib_capture`, --ib-capture).
enum class IbCapture : uint8_t { Erf, LinktypeInfiniband };
constexpr std::pair<std::string_view, IbCapture> kIbCaptureNames[] = {{"erf", IbCapture::Erf},
                                                                      {"infiniband", IbCapture::LinktypeInfiniband}};
constexpr std::array<std::string_view, std::size(kIbCaptureNames)> ib_capture_names() {
  std::array<std::string_view, std::size(kIbCaptureNames)> names{};
  for (size_t i = 0; i < names.size(); ++i) names[i] = kIbCaptureNames[i].first;
  return names;
}
constexpr std::string_view ib_capture_name(IbCapture c) { return kIbCaptureNames[static_cast<size_t>(c)].first; }
// The capture named `name`, one of kIbCaptureNames (else the first).
constexpr IbCapture ib_capture_named(std::string_view name) {
  for (const auto& [n, c] : kIbCaptureNames)
    if (n == name) return c;
  return kIbCaptureNames[0].second;
}

constexpr CaptureLinkType capture_link_type(packet::LinkKind k, IbCapture ib) {
  if (!packet::is_ib(k)) return CaptureLinkType::Ethernet;
  return ib == IbCapture::Erf ? CaptureLinkType::Erf : CaptureLinkType::InfiniBand;
}

class PcapTap : public FrameTap {
public:
  // Throws std::runtime_error if the file cannot be created. `snaplen` counts the
  // packet's bytes (an ERF header comes on top).
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
  bool erf_;
  uint64_t frames_ = 0;
  uint8_t priorities_ = 0xFF;
  std::vector<std::byte> record_;  // an ERF record: header and packet
};

}  // namespace rnicsim::fabric
