#include "nic_model/pcie_link.hpp"

#include <algorithm>
#include <array>

namespace rnicsim::nic {

uint64_t PcieParams::data_rate_bps() const {
  // Giga-transfers per second per lane and the share left after line coding.
  struct Gen { uint64_t mtps; uint64_t num, den; };
  static constexpr std::array<Gen, 5> kGens = {{{2500, 8, 10}, {5000, 8, 10}, {8000, 128, 130},
                                                {16000, 128, 130}, {32000, 128, 130}}};
  const Gen& g = kGens[std::clamp<uint32_t>(generation, 1, 5) - 1];
  return g.mtps * 1'000'000 * lanes * g.num / g.den;
}

sim::Time PcieLink::reserve(sim::Time& next_free, sim::Time start, uint64_t wire_bytes,
                            const sim::SerializationTimes& time) {
  const sim::Time begin = std::max(start, next_free);
  next_free = begin + time(wire_bytes);
  return next_free;
}

sim::Time PcieLink::write(sim::Time now, uint64_t bytes) {
  const uint64_t wire = bytes + tlps(bytes, p_.max_payload_bytes) * p_.tlp_overhead_bytes;
  up_bytes_ += wire;
  return reserve(up_free_, now, wire, up_time_) + p_.latency;
}

sim::Time PcieLink::read(sim::Time now, uint64_t bytes) {
  if (p_.max_read_tags == 0) return read_with_tags(now, bytes);
  const uint64_t part_bytes = uint64_t{p_.max_read_tags} * p_.max_read_request_bytes;
  sim::Time done = now;
  uint64_t left = bytes;
  do {
    const uint64_t part = std::min(left, part_bytes);
    const uint32_t n = static_cast<uint32_t>(tlps(part, p_.max_read_request_bytes));
    done = read_with_tags(take_tags(now, n), part);
    tags_in_use_.push_back(TagRelease{done, n});
    left -= part;
  } while (left > 0);
  return done;
}

sim::Time PcieLink::take_tags(sim::Time now, uint32_t n) {
  // Tags of reads complete by now are free again.
  while (!tags_in_use_.empty() && tags_in_use_.front().at <= now) {
    tags_busy_ -= tags_in_use_.front().count;
    tags_in_use_.pop();
  }
  sim::Time start = now;
  if (tags_busy_ + n > p_.max_read_tags) ++tag_waits_;
  // Wait for the oldest reads to return theirs.
  while (tags_busy_ + n > p_.max_read_tags) {
    TagRelease& oldest = tags_in_use_.front();
    const uint32_t freed = std::min(oldest.count, tags_busy_ + n - p_.max_read_tags);
    oldest.count -= freed;
    tags_busy_ -= freed;
    start = std::max(start, oldest.at);
    if (oldest.count == 0) tags_in_use_.pop();
  }
  tags_busy_ += n;
  return start;
}

sim::Time PcieLink::read_with_tags(sim::Time now, uint64_t bytes) {
  const uint64_t req_wire = tlps(bytes, p_.max_read_request_bytes) * p_.tlp_overhead_bytes;
  up_bytes_ += req_wire;
  const sim::Time at_host = reserve(up_free_, now, req_wire, up_time_) + p_.latency + p_.host_memory_latency;
  const uint64_t cpl_wire = bytes + tlps(bytes, p_.max_payload_bytes) * p_.tlp_overhead_bytes;
  down_bytes_ += cpl_wire;
  return reserve(down_free_, at_host, cpl_wire, down_time_) + p_.latency;
}

sim::Time PcieLink::mmio_write(sim::Time now, uint64_t bytes) {
  // PCIe lets posted writes pass completions (PCIe base spec, ordering table):
  // an MMIO write does not queue behind read completions already booked on the
  // downstream link, only behind earlier MMIO writes. Completions are not moved
  // back in turn, which overstates the link by one small TLP per MMIO write.
  const uint64_t wire = bytes + p_.tlp_overhead_bytes;
  down_bytes_ += wire;
  const auto lines = static_cast<int64_t>((bytes + 63) / 64);
  const sim::Time begin = std::max(now, mmio_free_);
  mmio_free_ = begin + std::max(mmio_time_(wire), p_.mmio_line_time * lines);
  return mmio_free_ + p_.latency;
}

}  // namespace rnicsim::nic
