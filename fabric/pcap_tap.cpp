#include "fabric/pcap_tap.hpp"

#include <pcap/pcap.h>

#include <algorithm>
#include <stdexcept>

namespace rnicsim::fabric {

PcapTap::PcapTap(const std::string& path, CaptureLinkType link, uint32_t snaplen) : snaplen_(snaplen) {
  handle_ = pcap_open_dead_with_tstamp_precision(static_cast<int>(link), static_cast<int>(snaplen),
                                                 PCAP_TSTAMP_PRECISION_NANO);
  if (handle_ == nullptr) throw std::runtime_error("cannot create a pcap handle");
  dumper_ = pcap_dump_open(handle_, path.c_str());
  if (dumper_ == nullptr) {
    std::string why = pcap_geterr(handle_);
    pcap_close(handle_);
    throw std::runtime_error("cannot write " + path + ": " + why);
  }
}

PcapTap::~PcapTap() {
  if (dumper_ != nullptr) pcap_dump_close(dumper_);
  if (handle_ != nullptr) pcap_close(handle_);
}

void PcapTap::capture(sim::Time when, std::span<const std::byte> bytes, size_t wire_length) {
  pcap_pkthdr h{};
  const int64_t ps = when.picoseconds();
  h.ts.tv_sec = ps / 1'000'000'000'000;
  h.ts.tv_usec = (ps % 1'000'000'000'000) / 1000;  // nanoseconds with nano precision
  h.len = static_cast<bpf_u_int32>(std::max(bytes.size(), wire_length));
  h.caplen = static_cast<bpf_u_int32>(std::min<size_t>(bytes.size(), snaplen_));
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, reinterpret_cast<const u_char*>(bytes.data()));
  ++frames_;
}

void PcapTap::flush() { pcap_dump_flush(dumper_); }

}  // namespace rnicsim::fabric
