// Fuzzes what the CM agent of a port runs on a MAD that arrived on QP1:
// cm::decode() of 256 bytes, and the RDMA CM's IP header in a REQ's private
// data. Besides "no crash, no read outside the bytes", the codec must agree
// with itself: a MAD that decodes encodes to bytes that decode to the same
// message, and encoding that again gives the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

#include "cm/mad.hpp"

namespace {

using namespace rnicsim::cm;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "cm_mad fuzzer: check failed: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  const auto mad = decode(in);
  if (!mad) return 0;
  const auto bytes = encode(*mad);
  const auto again = decode(bytes);
  require(again.has_value(), "an encoded MAD decodes");
  require(*again == *mad, "an encoded MAD decodes to the same message");
  require(encode(*again) == bytes, "encoding is stable");
  if (const auto* req = std::get_if<Req>(&mad->message)) {
    const auto ip = decode_ip_header(std::span<const uint8_t, kIpHeaderBytes>(req->private_data.data(), kIpHeaderBytes));
    if (ip) {
      std::array<uint8_t, kIpHeaderBytes> out{};
      encode_ip_header(*ip, out);
      require(decode_ip_header(out) == ip, "an IP header round-trips");
    }
  }
  return 0;
}
