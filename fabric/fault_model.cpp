#include "fabric/fault_model.hpp"

namespace rnicsim::fabric {

void FaultModel::corrupt(Frame& frame, const packet::ParsedPacket& p) {
  if (frame.elided() > 0) {
    // A size-only frame: the bits the fault would flip are not there; the
    // receiver drops the frame as the ICRC check would.
    frame.meta().corrupted = true;
    ++counters_.corrupted;
    return;
  }
  // Bits from the 6th byte of the BTH up to the ICRC: all under the ICRC.
  const size_t first = p.layout.bth_offset + 5;
  const size_t end = p.layout.icrc_offset;
  if (end <= first) return;
  std::span<std::byte> bytes = frame.bytes();  // completes a deferred seal first
  const uint64_t bit = rng_.uniform((end - first) * 8);
  bytes[first + bit / 8] ^= static_cast<std::byte>(1u << (bit % 8));
  ++counters_.corrupted;
}

bool FaultModel::acts_on(const FaultRule& r, uint64_t n) {
  if (n < r.nth) return false;
  const uint64_t after = n - r.nth;
  const uint64_t step = r.every == 0 ? 1 : r.every;
  if (after % step != 0) return false;
  return r.count == 0 || after / step < r.count;
}

FaultModel::Verdict FaultModel::apply(Frame& frame) {
  Verdict v;
  if (rules_.empty()) return v;
  const auto parsed = packet::parse(frame.bytes_as_built(), link_type_, frame.size());
  if (!parsed) return v;
  const packet::PacketFields& f = parsed->fields;
  for (FaultRule& r : rules_) {
    if (r.match.opcode && *r.match.opcode != f.opcode) continue;
    if (r.match.psn && *r.match.psn != f.psn) continue;
    if (r.match.dest_qp && *r.match.dest_qp != f.dest_qp) continue;
    if (r.match.ack_kind && (!f.aeth || f.aeth->syndrome.kind() != *r.match.ack_kind)) continue;
    if (!acts_on(r, ++r.seen)) continue;
    switch (r.action) {
      case FaultAction::Drop:
        ++counters_.rule_drops;
        v.drop = true;
        return v;
      case FaultAction::Corrupt:
        corrupt(frame, *parsed);
        break;
      case FaultAction::Delay:
        ++counters_.delayed;
        v.extra_delay = v.extra_delay + r.delay;
        break;
    }
  }
  return v;
}

}  // namespace rnicsim::fabric
