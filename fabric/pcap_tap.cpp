#include "fabric/pcap_tap.hpp"

#include <pcap/pcap.h>

#include <algorithm>
#include <stdexcept>

namespace rnicsim::fabric {

PcapTap::PcapTap(const std::string& path, CaptureLinkType link, uint32_t snaplen)
    : snaplen_(snaplen), erf_(link == CaptureLinkType::Erf) {
  const uint32_t record_snaplen = snaplen + (erf_ ? packet::kErfHeaderBytes : 0);
  handle_ = pcap_open_dead_with_tstamp_precision(static_cast<int>(link), static_cast<int>(record_snaplen),
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
  const int64_t ps = when.picoseconds();
  pcap_pkthdr h{};
  h.ts.tv_sec = ps / 1'000'000'000'000;
  h.ts.tv_usec = (ps % 1'000'000'000'000) / 1000;  // nanoseconds with nano precision
  size_t length = std::max(bytes.size(), wire_length);
  size_t captured = std::min<size_t>(bytes.size(), snaplen_);
  const std::byte* data = bytes.data();
  if (erf_) {
    const auto header = packet::erf_header(static_cast<uint32_t>(h.ts.tv_sec), static_cast<uint32_t>(h.ts.tv_usec), captured, length);
    record_.assign(header.begin(), header.end());
    record_.insert(record_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(captured));
    data = record_.data();
    length += packet::kErfHeaderBytes;
    captured += packet::kErfHeaderBytes;
  }
  h.len = static_cast<bpf_u_int32>(length);
  h.caplen = static_cast<bpf_u_int32>(captured);
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, reinterpret_cast<const u_char*>(data));
  ++frames_;
}

void PcapTap::flush() { pcap_dump_flush(dumper_); }

}  // namespace rnicsim::fabric
