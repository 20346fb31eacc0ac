// CM MAD codec. Each message's layout is written once, as a list of
// (location, member) pairs that one visitor encodes and another decodes, so the
// two directions cannot drift. Locations are checked against the 256-byte MAD
// at compile time: no encode or decode can touch a byte outside it.
#include "cm/mad.hpp"

#include <algorithm>
#include <concepts>
#include <type_traits>
#include <utility>

namespace rnicsim::cm {
namespace {

using Bytes = std::span<std::byte, kMadBytes>;
using ConstBytes = std::span<const std::byte, kMadBytes>;

// A field of 1..64 bits inside `bytes` big-endian bytes at `offset` from the
// MAD start, `shift` bits above the least significant bit of those bytes.
struct Loc {
  uint16_t offset;
  uint8_t bytes, shift, bits;
  consteval Loc(unsigned off, unsigned n, unsigned sh = 0, unsigned b = 0)
      : offset(static_cast<uint16_t>(off)), bytes(static_cast<uint8_t>(n)), shift(static_cast<uint8_t>(sh)),
        bits(static_cast<uint8_t>(b ? b : n * 8)) {
    if (n < 1 || n > 8 || off + n > kMadBytes || shift + bits > n * 8) throw "field outside the MAD";
  }
  constexpr uint64_t mask() const { return bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }
};

// A byte array (GID, ARI, private data) at a fixed offset.
template <size_t Off>
struct At {};

uint64_t load(ConstBytes b, size_t off, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | std::to_integer<uint8_t>(b[off + i]);
  return v;
}

void store(Bytes b, size_t off, size_t n, uint64_t v) {
  for (size_t i = 0; i < n; ++i) b[off + n - 1 - i] = std::byte(static_cast<uint8_t>(v >> (8 * i)));
}

// A strong number of the packet layer (QPN, PSN, Q_Key): it says its value.
template <class T>
concept Numbered = requires(T v) { v.value(); };

template <class T>
uint64_t to_wire(T v) {
  if constexpr (std::is_enum_v<T>) return static_cast<uint64_t>(static_cast<std::underlying_type_t<T>>(v));
  else if constexpr (Numbered<T>) return v.value();
  else return static_cast<uint64_t>(v);
}

template <class T>
T from_wire(uint64_t v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (Numbered<T>) return T(static_cast<uint32_t>(v));
  else return static_cast<T>(v);
}

// Writes each field into a zeroed MAD; a value wider than its field keeps only
// its low bits (the neighbours are untouched).
struct Encoder {
  Bytes out;
  template <class T>
  void operator()(Loc l, const T& v) {
    const uint64_t word = load(out, l.offset, l.bytes) & ~(l.mask() << l.shift);
    store(out, l.offset, l.bytes, word | ((to_wire(v) & l.mask()) << l.shift));
  }
  template <size_t Off, size_t N>
  void operator()(At<Off>, const std::array<uint8_t, N>& a) {
    static_assert(Off + N <= kMadBytes);
    std::transform(a.begin(), a.end(), out.begin() + Off, [](uint8_t x) { return std::byte(x); });
  }
};

struct Decoder {
  ConstBytes in;
  template <class T>
  void operator()(Loc l, T& v) {
    v = from_wire<T>((load(in, l.offset, l.bytes) >> l.shift) & l.mask());
  }
  template <size_t Off, size_t N>
  void operator()(At<Off>, std::array<uint8_t, N>& a) {
    static_assert(Off + N <= kMadBytes);
    std::transform(in.begin() + Off, in.begin() + Off + N, a.begin(), [](std::byte x) { return std::to_integer<uint8_t>(x); });
  }
};

// Private data runs to the end of the MAD in every message.
static_assert(164 + kReqPrivate == kMadBytes && 34 + kMraPrivate == kMadBytes && 108 + kRejPrivate == kMadBytes &&
              60 + kRepPrivate == kMadBytes && 32 + kRtuPrivate == kMadBytes && 36 + kDreqPrivate == kMadBytes &&
              32 + kDrepPrivate == kMadBytes && 40 + kSidrReqPrivate == kMadBytes && 120 + kSidrRepPrivate == kMadBytes);

template <class T, class U>
concept Is = std::same_as<std::remove_const_t<T>, U>;

// The primary path of a REQ (offsets 76..119); the alternate path stays zero.
template <class F>
void fields(Is<Path> auto& p, F& f) {
  f(Loc{76, 2}, p.local_lid);
  f(Loc{78, 2}, p.remote_lid);
  f(At<80>{}, p.local_gid);
  f(At<96>{}, p.remote_gid);
  f(Loc{112, 4, 12, 20}, p.flow_label);
  f(Loc{115, 1, 0, 6}, p.rate);
  f(Loc{116, 1}, p.traffic_class);
  f(Loc{117, 1}, p.hop_limit);
  f(Loc{118, 1, 4, 4}, p.sl);
  f(Loc{118, 1, 3, 1}, p.subnet_local);
  f(Loc{119, 1, 3, 5}, p.local_ack_timeout);
}

template <class F>
void fields(Is<Req> auto& m, F& f) {
  f(Loc{24, 4}, m.local_comm_id);
  f(Loc{32, 8}, m.service_id);
  f(Loc{40, 8}, m.local_ca_guid);
  f(Loc{52, 4}, m.local_qkey);
  f(Loc{56, 3}, m.local_qpn);
  f(Loc{59, 1}, m.responder_resources);
  f(Loc{60, 3}, m.local_eecn);
  f(Loc{63, 1}, m.initiator_depth);
  f(Loc{64, 3}, m.remote_eecn);
  f(Loc{67, 1, 3, 5}, m.remote_cm_response_timeout);
  f(Loc{67, 1, 1, 2}, m.transport);
  f(Loc{67, 1, 0, 1}, m.end_to_end_flow_control);
  f(Loc{68, 3}, m.starting_psn);
  f(Loc{71, 1, 3, 5}, m.local_cm_response_timeout);
  f(Loc{71, 1, 0, 3}, m.retry_count);
  f(Loc{72, 2}, m.pkey);
  f(Loc{74, 1, 4, 4}, m.path_mtu);
  f(Loc{74, 1, 3, 1}, m.rdc_exists);
  f(Loc{74, 1, 0, 3}, m.rnr_retry_count);
  f(Loc{75, 1, 4, 4}, m.max_cm_retries);
  f(Loc{75, 1, 3, 1}, m.srq);
  f(Loc{75, 1, 0, 3}, m.extended_transport);
  fields(m.primary, f);
  f(At<164>{}, m.private_data);
}

template <class F>
void fields(Is<Mra> auto& m, F& f) {
  f(Loc{24, 4}, m.local_comm_id);
  f(Loc{28, 4}, m.remote_comm_id);
  f(Loc{32, 1, 6, 2}, m.message_mraed);
  f(Loc{33, 1, 3, 5}, m.service_timeout);
  f(At<34>{}, m.private_data);
}

template <class F>
void fields(Is<Rej> auto& m, F& f) {
  f(Loc{24, 4}, m.local_comm_id);
  f(Loc{28, 4}, m.remote_comm_id);
  f(Loc{32, 1, 6, 2}, m.message_rejected);
  f(Loc{33, 1, 1, 7}, m.ari_length);
  f(Loc{34, 2}, m.reason);
  f(At<36>{}, m.ari);
  f(At<108>{}, m.private_data);
}

template <class F>
void fields(Is<Rep> auto& m, F& f) {
  f(Loc{24, 4}, m.local_comm_id);
  f(Loc{28, 4}, m.remote_comm_id);
  f(Loc{32, 4}, m.local_qkey);
  f(Loc{36, 3}, m.local_qpn);
  f(Loc{40, 3}, m.local_eecn);
  f(Loc{44, 3}, m.starting_psn);
  f(Loc{48, 1}, m.responder_resources);
  f(Loc{49, 1}, m.initiator_depth);
  f(Loc{50, 1, 3, 5}, m.target_ack_delay);
  f(Loc{50, 1, 1, 2}, m.failover_accepted);
  f(Loc{50, 1, 0, 1}, m.end_to_end_flow_control);
  f(Loc{51, 1, 5, 3}, m.rnr_retry_count);
  f(Loc{51, 1, 4, 1}, m.srq);
  f(Loc{52, 8}, m.local_ca_guid);
  f(At<60>{}, m.private_data);
}

template <class F>
void fields(Is<Rtu> auto& m, F& f) {
  f(Loc{24, 4}, m.local_comm_id);
  f(Loc{28, 4}, m.remote_comm_id);
  f(At<32>{}, m.private_data);
}

template <class F>
void fields(Is<Dreq> auto& m, F& f) {
  f(Loc{24, 4}, m.local_comm_id);
  f(Loc{28, 4}, m.remote_comm_id);
  f(Loc{32, 3}, m.remote_qpn);
  f(At<36>{}, m.private_data);
}

template <class F>
void fields(Is<Drep> auto& m, F& f) {
  f(Loc{24, 4}, m.local_comm_id);
  f(Loc{28, 4}, m.remote_comm_id);
  f(At<32>{}, m.private_data);
}

template <class F>
void fields(Is<SidrReq> auto& m, F& f) {
  f(Loc{24, 4}, m.request_id);
  f(Loc{28, 2}, m.pkey);
  f(Loc{32, 8}, m.service_id);
  f(At<40>{}, m.private_data);
}

template <class F>
void fields(Is<SidrRep> auto& m, F& f) {
  f(Loc{24, 4}, m.request_id);
  f(Loc{28, 1}, m.status);
  f(Loc{29, 1}, m.add_info_length);
  f(Loc{32, 3}, m.qpn);
  f(Loc{36, 8}, m.service_id);
  f(Loc{44, 4}, m.qkey);
  f(At<48>{}, m.class_port_info);
  f(At<120>{}, m.private_data);
}

// The attribute of each alternative of Message, in the variant's order.
constexpr std::array<Attr, std::variant_size_v<Message>> kAttrs = {
    Attr::Req, Attr::Mra, Attr::Rej, Attr::Rep, Attr::Rtu, Attr::Dreq, Attr::Drep, Attr::SidrReq, Attr::SidrRep,
};

template <size_t I>
Message decode_as(ConstBytes in) {
  std::variant_alternative_t<I, Message> m;
  Decoder d{in};
  fields(m, d);
  return m;
}

using DecodeFn = Message (*)(ConstBytes);
template <size_t... I>
constexpr std::array<DecodeFn, sizeof...(I)> decoders(std::index_sequence<I...>) {
  return {&decode_as<I>...};
}
constexpr auto kDecoders = decoders(std::make_index_sequence<std::variant_size_v<Message>>{});

// Common MAD header offsets.
constexpr size_t kBaseVersionAt = 0, kClassAt = 1, kClassVersionAt = 2, kMethodAt = 3, kStatusAt = 4,
                 kTidAt = 8, kAttrAt = 16;
constexpr uint8_t kBaseVersion = 1;

}  // namespace

Attr attribute_of(const Message& m) { return kAttrs[m.index()]; }

std::array<std::byte, kMadBytes> encode(const Mad& m) {
  std::array<std::byte, kMadBytes> out{};
  const Bytes b{out};
  store(b, kBaseVersionAt, 1, kBaseVersion);
  store(b, kClassAt, 1, kMgmtClassCm);
  store(b, kClassVersionAt, 1, kCmClassVersion);
  store(b, kMethodAt, 1, kMethodSend);
  store(b, kStatusAt, 2, m.status);
  store(b, kTidAt, 8, m.transaction_id);
  store(b, kAttrAt, 2, static_cast<uint16_t>(attribute_of(m.message)));
  Encoder e{b};
  std::visit([&e](const auto& msg) { fields(msg, e); }, m.message);
  return out;
}

std::optional<Mad> decode(std::span<const std::byte> bytes) {
  if (bytes.size() < kMadBytes) return std::nullopt;
  const ConstBytes in = bytes.first<kMadBytes>();
  if (load(in, kBaseVersionAt, 1) != kBaseVersion || load(in, kClassAt, 1) != kMgmtClassCm ||
      load(in, kClassVersionAt, 1) != kCmClassVersion || load(in, kMethodAt, 1) != kMethodSend)
    return std::nullopt;
  const auto attr = static_cast<Attr>(load(in, kAttrAt, 2));
  const auto* it = std::find(kAttrs.begin(), kAttrs.end(), attr);
  if (it == kAttrs.end()) return std::nullopt;
  return Mad{load(in, kTidAt, 8), static_cast<uint16_t>(load(in, kStatusAt, 2)),
             kDecoders[static_cast<size_t>(it - kAttrs.begin())](in)};
}

namespace {
constexpr uint8_t kCmaVersion = 0;
constexpr size_t kPortAt = 2, kSrcAddrAt = 4, kDstAddrAt = 20, kAddrBytes = 16, kIpv4Bytes = 4;

// An IPv4 address sits in the last 4 bytes of its 16, after 12 zero bytes.
void put_addr(std::span<uint8_t, kIpHeaderBytes> out, size_t at, const std::array<uint8_t, 16>& a, bool v4) {
  const size_t skip = v4 ? kAddrBytes - kIpv4Bytes : 0;
  std::fill_n(out.begin() + at, skip, uint8_t{0});
  std::copy(a.begin() + skip, a.end(), out.begin() + at + skip);
}
std::array<uint8_t, 16> get_addr(std::span<const uint8_t, kIpHeaderBytes> in, size_t at, bool v4) {
  std::array<uint8_t, 16> a{};
  const size_t skip = v4 ? kAddrBytes - kIpv4Bytes : 0;
  std::copy(in.begin() + at + skip, in.begin() + at + kAddrBytes, a.begin() + skip);
  return a;
}
}  // namespace

void encode_ip_header(const IpHeader& h, std::span<uint8_t, kIpHeaderBytes> out) {
  out[0] = kCmaVersion;
  out[1] = static_cast<uint8_t>(h.ip_version << 4);
  out[kPortAt] = static_cast<uint8_t>(h.src_port >> 8);
  out[kPortAt + 1] = static_cast<uint8_t>(h.src_port);
  const bool v4 = h.ip_version == 4;
  put_addr(out, kSrcAddrAt, h.src_addr, v4);
  put_addr(out, kDstAddrAt, h.dst_addr, v4);
}

std::optional<IpHeader> decode_ip_header(std::span<const uint8_t, kIpHeaderBytes> in) {
  const uint8_t ipv = in[1] >> 4;
  if (in[0] != kCmaVersion || (ipv != 4 && ipv != 6)) return std::nullopt;
  IpHeader h;
  h.ip_version = ipv;
  h.src_port = static_cast<uint16_t>((in[kPortAt] << 8) | in[kPortAt + 1]);
  h.src_addr = get_addr(in, kSrcAddrAt, ipv == 4);
  h.dst_addr = get_addr(in, kDstAddrAt, ipv == 4);
  return h;
}

}  // namespace rnicsim::cm
