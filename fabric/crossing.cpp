#include "fabric/crossing.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "fabric/port.hpp"
#include "packet/packet.hpp"

namespace rnicsim::fabric {

const std::array<Frame::Sealer, 3> kSealers = {nullptr, &packet::complete_seal_ethernet,
                                               &packet::complete_seal_infiniband};

namespace {

enum class Kind : uint8_t { Frame = 1, Credit = 2, Word = 3 };

// A record's fixed fields, gathered on the stack and appended in one go: a
// record has a few dozen fields, and a busy cut link carries millions.
class Fields {
public:
  template <class T>
  void put(T v) {
    static_assert(std::is_integral_v<T>);
    using U = std::make_unsigned_t<T>;
    const U u = static_cast<U>(v);
    for (size_t i = 0; i < sizeof(T); ++i) bytes_[n_ + i] = static_cast<std::byte>(u >> (8 * i));
    n_ += sizeof(T);
  }
  void append_to(std::vector<std::byte>& out) const { out.insert(out.end(), bytes_.begin(), bytes_.begin() + n_); }

private:
  std::array<std::byte, 128> bytes_;  // a frame record's head and metadata take 69
  size_t n_ = 0;
};

template <class T>
bool get(std::span<const std::byte>& in, T& v) {
  static_assert(std::is_integral_v<T>);
  if (in.size() < sizeof(T)) return false;
  std::make_unsigned_t<T> u = 0;
  for (size_t i = 0; i < sizeof(T); ++i) u |= static_cast<decltype(u)>(std::to_integer<uint8_t>(in[i])) << (8 * i);
  v = static_cast<T>(u);
  in = in.subspan(sizeof(T));
  return true;
}

bool get_flag(std::span<const std::byte>& in, bool& v) {
  uint8_t b = 2;
  if (!get(in, b) || b > 1) return false;
  v = b == 1;
  return true;
}

void put_head(Fields& out, Kind kind, uint32_t port, sim::Time arrival, uint64_t key) {
  out.put(static_cast<uint8_t>(kind));
  out.put(port);
  out.put(arrival.picoseconds());
  out.put(key);
}

void put_meta(Fields& out, const FrameMeta& m) {
  out.put(m.priority);
  out.put(m.flow_id);
  out.put(m.created.picoseconds());
  out.put(m.ingress_port);
  out.put(m.ingress_vl);
  out.put(static_cast<uint8_t>(m.corrupted));
  out.put(m.psn.value());
  out.put(static_cast<uint8_t>(m.request));
  out.put(static_cast<uint8_t>(m.route.numbering != nullptr));
  out.put(m.route.destination);
  out.put(m.route.flow_hash);
  out.put(m.route.ip_offset);
  out.put(m.route.markings.dscp);
  out.put(m.route.markings.pcp);
  out.put(m.route.markings.sl);
  out.put(static_cast<uint8_t>(m.route.markings.tagged));
}

// Reads the metadata; false if a field is out of its range or missing.
bool get_meta(std::span<const std::byte>& in, FrameMeta& m, const void* numbering) {
  int64_t created = 0;
  uint32_t psn = 0;
  bool routed = false;
  auto& r = m.route;
  if (!(get(in, m.priority) && get(in, m.flow_id) && get(in, created) && get(in, m.ingress_port) &&
        get(in, m.ingress_vl) && get_flag(in, m.corrupted) && get(in, psn) && get_flag(in, m.request) &&
        get_flag(in, routed) && get(in, r.destination) && get(in, r.flow_hash) && get(in, r.ip_offset) &&
        get(in, r.markings.dscp) && get(in, r.markings.pcp) && get(in, r.markings.sl) &&
        get_flag(in, r.markings.tagged)))
    return false;
  // Priorities and VLs index the ports' per-priority queues and credits.
  if (m.priority >= kPriorities || m.ingress_vl >= kPriorities || created < 0 || psn > packet::Psn::kMask)
    return false;
  m.created = sim::Time::from_ps(created);
  m.psn = packet::Psn(psn);
  r.numbering = routed ? numbering : nullptr;
  return true;
}

}  // namespace

void CrossingWriter::frame(uint32_t port, sim::Time arrival, uint64_t key, Frame&& frame) {
  frame.copy_in_payload();
  const Frame::Sealer s = frame.deferred_sealer();
  const auto sealer = std::find(kSealers.begin(), kSealers.end(), s);
  if (sealer == kSealers.end()) frame.complete_seal();  // a sealer no record names: sealed here
  const std::span<const std::byte> bytes = frame.bytes_as_built();
  Fields f;
  put_head(f, Kind::Frame, port, arrival, key);
  f.put(static_cast<uint32_t>(bytes.size()));
  f.put(static_cast<uint32_t>(frame.elided()));
  f.put(static_cast<uint8_t>(sealer == kSealers.end() ? 0 : sealer - kSealers.begin()));
  put_meta(f, frame.meta());
  f.append_to(out_);
  out_.insert(out_.end(), bytes.begin(), bytes.end());
  note(arrival);
}

void CrossingWriter::credit(const CrossingCredit& c) {
  Fields f;
  put_head(f, Kind::Credit, c.port, c.arrival, c.key);
  f.put(c.vl);
  f.put(c.bytes);
  f.append_to(out_);
  note(c.arrival);
}

void CrossingWriter::word(const CrossingWord& w) {
  Fields f;
  put_head(f, Kind::Word, w.listener, w.arrival, w.key);
  f.put(w.part);
  f.append_to(out_);
  note(w.arrival);
}

CrossingReader::Record CrossingReader::next() {
  if (in_.empty()) return {};
  uint8_t kind = 0;
  uint32_t port = 0;
  int64_t arrival = 0;
  uint64_t key = 0;
  if (!(get(in_, kind) && get(in_, port) && get(in_, arrival) && get(in_, key)) || arrival < 0) return refuse();
  const sim::Time at = sim::Time::from_ps(arrival);
  if (kind == static_cast<uint8_t>(Kind::Frame)) return read_frame(port, at, key);
  if (kind == static_cast<uint8_t>(Kind::Credit)) return read_credit(port, at, key);
  if (kind == static_cast<uint8_t>(Kind::Word)) {
    CrossingWord w{port, at, key};
    return get(in_, w.part) ? Record(w) : refuse();
  }
  return refuse();
}

CrossingReader::Record CrossingReader::read_frame(uint32_t port, sim::Time arrival, uint64_t key) {
  uint32_t length = 0, elided = 0;
  uint8_t sealer = 0;
  FrameMeta meta;
  if (!(get(in_, length) && get(in_, elided) && get(in_, sealer) && get_meta(in_, meta, numbering_)))
    return refuse();
  const uint64_t size = uint64_t{length} + elided;
  if (sealer >= kSealers.size() || size > pool_.buffer_size() || in_.size() < length || (elided > 0 && sealer != 0))
    return refuse();
  CrossingFrame c{port, arrival, key, pool_.acquire(size)};
  std::memcpy(c.frame.builder_bytes().data(), in_.data(), length);
  in_ = in_.subspan(length);
  if (elided > 0) c.frame.elide_from(length);
  if (sealer != 0) c.frame.defer_seal(kSealers[sealer]);
  c.frame.meta() = meta;
  return c;
}

CrossingReader::Record CrossingReader::read_credit(uint32_t port, sim::Time arrival, uint64_t key) {
  CrossingCredit c{port, arrival, key};
  if (!(get(in_, c.vl) && get(in_, c.bytes)) || c.vl >= kPriorities) return refuse();
  return c;
}

}  // namespace rnicsim::fabric
