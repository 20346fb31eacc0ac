// Hostile capture files for `rnicsim lint`: a table of malformed, truncated and
// odd pcap and pcapng files, each with the exit status lint must give and a text
// its report or error must hold. None may crash it (the ASan build runs this too).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "lint/lint.hpp"
#include "tests/packet/sample_packets.hpp"

namespace rnicsim::lint {
namespace {

using Bytes = std::vector<std::uint8_t>;

void put32(Bytes& b, std::uint32_t v, bool big = false) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (big ? 24 - 8 * i : 8 * i)));
}
void put16(Bytes& b, std::uint16_t v, bool big = false) {
  b.push_back(static_cast<std::uint8_t>(big ? v >> 8 : v));
  b.push_back(static_cast<std::uint8_t>(big ? v : v >> 8));
}

constexpr std::uint32_t kNanoMagic = 0xA1B23C4D, kMicroMagic = 0xA1B2C3D4;
constexpr std::uint32_t kEthernet = 1, kInfiniband = 247;

struct Header {
  std::uint32_t magic = kNanoMagic;
  std::uint16_t major = 2, minor = 4;
  std::uint32_t snaplen = 65535;
  std::uint32_t link = kEthernet;
  bool big_endian = false;
};

Bytes header(const Header& h = {}) {
  Bytes b;
  put32(b, h.magic, h.big_endian);
  put16(b, h.major, h.big_endian);
  put16(b, h.minor, h.big_endian);
  put32(b, 0, h.big_endian);  // thiszone
  put32(b, 0, h.big_endian);  // sigfigs
  put32(b, h.snaplen, h.big_endian);
  put32(b, h.link, h.big_endian);
  return b;
}

// A record whose header says caplen/len; `data` is what follows (may differ).
Bytes record(const Bytes& data, std::uint32_t caplen, std::uint32_t len, bool big = false) {
  Bytes b;
  put32(b, 1, big);
  put32(b, 1000, big);
  put32(b, caplen, big);
  put32(b, len, big);
  b.insert(b.end(), data.begin(), data.end());
  return b;
}
Bytes record(const Bytes& data, bool big = false) {
  return record(data, static_cast<std::uint32_t>(data.size()), static_cast<std::uint32_t>(data.size()), big);
}

Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes b;
  for (const Bytes& p : parts) b.insert(b.end(), p.begin(), p.end());
  return b;
}
Bytes cut(Bytes b, std::size_t n) {
  b.resize(n);
  return b;
}
Bytes zeros(std::size_t n) { return Bytes(n, 0); }

Bytes frame(packet::Opcode op, packet::LinkKind link = packet::LinkKind::RoceV2Ipv4, std::uint32_t psn = 1) {
  packet::PacketFields f = packet::testing::sample_fields(op, {link, false});
  f.psn = packet::Psn(psn);
  const auto bytes = packet::testing::sample_frame(f);
  Bytes b;
  for (std::byte x : bytes) b.push_back(std::to_integer<std::uint8_t>(x));
  return b;
}
Bytes send_only(std::uint32_t psn = 1) { return frame(packet::Opcode::RcSendOnly, packet::LinkKind::RoceV2Ipv4, psn); }
Bytes ib_send_only() { return frame(packet::Opcode::RcSendOnly, packet::LinkKind::IbLocal); }

// pcapng blocks (little-endian): a block is type, total length, body, total length.
Bytes block(std::uint32_t type, const Bytes& body, std::uint32_t length_field = 0) {
  const auto total = static_cast<std::uint32_t>(12 + body.size());
  Bytes b;
  put32(b, type);
  put32(b, length_field ? length_field : total);
  b.insert(b.end(), body.begin(), body.end());
  put32(b, length_field ? length_field : total);
  return b;
}
Bytes section_header() {
  Bytes body;
  put32(body, 0x1A2B3C4D);  // byte-order magic
  put16(body, 1);
  put16(body, 0);
  put32(body, 0xFFFFFFFF);  // section length unknown
  put32(body, 0xFFFFFFFF);
  return block(0x0A0D0D0A, body);
}
Bytes interface(std::uint16_t link) {
  Bytes body;
  put16(body, link);
  put16(body, 0);
  put32(body, 65535);
  return block(0x00000001, body);
}
Bytes enhanced_packet(const Bytes& data, std::uint32_t interface_id = 0) {
  Bytes body;
  put32(body, interface_id);
  put32(body, 0);
  put32(body, 0);
  put32(body, static_cast<std::uint32_t>(data.size()));
  put32(body, static_cast<std::uint32_t>(data.size()));
  body.insert(body.end(), data.begin(), data.end());
  while (body.size() % 4) body.push_back(0);
  return block(0x00000006, body);
}

struct Case {
  const char* name;
  std::function<Bytes()> file;
  int status;        // lint's exit status
  const char* text;  // in its report (stdout) or its error (stderr)
};

const Case kCases[] = {
    {"empty file", [] { return Bytes{}; }, 2, "rnicsim lint:"},
    {"file header cut short", [] { return cut(header(), 23); }, 2, "rnicsim lint:"},
    {"not a capture (text)", [] { const std::string t = "hello, this is not a pcap file\n"; return Bytes(t.begin(), t.end()); }, 2,
     "rnicsim lint:"},
    {"wrong magic", [] { return header({.magic = 0x12345678}); }, 2, "rnicsim lint:"},
    {"pcap version 1.0", [] { return header({.major = 1, .minor = 0}); }, 2, "rnicsim lint:"},
    {"unsupported link type (802.11)", [] { return cat({header({.link = 105}), record(send_only())}); }, 2,
     "unsupported link type 105"},
    {"header only, no packets", [] { return header(); }, 0, "result: 0 errors, 0 warnings"},
    {"microsecond timestamps", [] { return cat({header({.magic = kMicroMagic}), record(send_only())}); }, 0,
     "result: 0 errors, 0 warnings"},
    {"big-endian file", [] { return cat({header({.big_endian = true}), record(send_only(), true)}); }, 0,
     "result: 0 errors, 0 warnings"},
    {"snaplen 0 in the file header", [] { return cat({header({.snaplen = 0}), record(send_only())}); }, 0,
     "result: 0 errors"},
    {"record header cut short", [] { return cat({header(), record(send_only()), cut(record(send_only(2)), 10)}); }, 1,
     "error: capture file damaged or truncated"},
    {"record data cut short", [] { return cat({header(), record(send_only()), cut(record(send_only(2)), 40)}); }, 1,
     "error: capture file damaged or truncated"},
    {"record claims 2 GiB", [] { return cat({header(), record(send_only(), 0x7FFFFFFF, 0x7FFFFFFF)}); }, 1,
     "error: capture file damaged or truncated"},
    {"record caplen above the snaplen", [] { return cat({header({.snaplen = 64}), record(zeros(300))}); }, 1,
     "frame 1: error: the record holds 300 bytes, more than the capture's snaplen of 64"},
    {"record caplen larger than its wire length", [] {
       const Bytes f = send_only();
       return cat({header(), record(f, static_cast<std::uint32_t>(f.size()), 10)});
     }, 0, "result: 0 errors"},
    {"zero-length record", [] { return cat({header(), record(Bytes{}), record(send_only())}); }, 1,
     "frame 1: error: malformed packet: truncated in the Ethernet header"},
    {"one-byte frame", [] { return cat({header(), record(Bytes{0x45})}); }, 1,
     "frame 1: error: malformed packet: truncated in the Ethernet header"},
    {"Ethernet header only", [] { return cat({header(), record(cut(send_only(), 14))}); }, 1,
     "frame 1: error: malformed packet: truncated in the IPv4 header"},
    {"RoCEv2 frame cut in its BTH", [] { return cat({header(), record(cut(send_only(), 46))}); }, 1, "error"},
    {"frame cut by the snaplen", [] {
       const Bytes f = send_only();
       return cat({header(), record(cut(f, 50), 50, static_cast<std::uint32_t>(f.size()))});
     }, 0, "warning"},
    {"PFC frame cut inside its quanta", [] {
       // Priority 7 enabled; its quanta would be bytes 32-33.
       Bytes f(32, 0xFF);
       const Bytes head = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x02, 0, 0, 0, 0, 1, 0x88, 0x08, 0x01, 0x01, 0x00, 0x80};
       std::copy(head.begin(), head.end(), f.begin());
       return cat({header(), record(f)});
     }, 1, "shorter than its 34-byte header"},
    {"64 KiB of zeros", [] { return cat({header(), record(zeros(65535))}); }, 0, "frames"},
    {"InfiniBand frame in an Ethernet capture", [] { return cat({header(), record(ib_send_only())}); }, 0, "frames"},
    {"Ethernet frame in an InfiniBand capture", [] { return cat({header({.link = kInfiniband}), record(send_only())}); },
     1, "error"},
    {"InfiniBand capture, clean", [] { return cat({header({.link = kInfiniband}), record(ib_send_only())}); }, 0,
     "result: 0 errors, 0 warnings"},
    {"pcapng, clean", [] { return cat({section_header(), interface(1), enhanced_packet(send_only())}); }, 0,
     "result: 0 errors, 0 warnings"},
    {"pcapng without an interface", [] { return cat({section_header(), enhanced_packet(send_only())}); }, 2,
     "rnicsim lint:"},
    {"pcapng packet of an unknown interface", [] {
       return cat({section_header(), interface(1), enhanced_packet(send_only(), 7)});
     }, 1, "error: capture file damaged or truncated"},
    {"pcapng block with a bad length", [] {
       return cat({section_header(), interface(1), block(0x00000006, zeros(20), 13)});
     }, 1, "error: capture file damaged or truncated"},
    {"pcapng cut in a block", [] {
       return cut(cat({section_header(), interface(1), enhanced_packet(send_only())}), 60);
     }, 1, "error: capture file damaged or truncated"},
};

class HostilePcap : public ::testing::TestWithParam<Case> {};

TEST_P(HostilePcap, LintAnswersWithoutCrashing) {
  const Case& c = GetParam();
  const auto dir = std::filesystem::temp_directory_path() / ("rnicsim_hostile_pcap_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "capture.pcap").string();
  const Bytes bytes = c.file();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
  std::ostringstream out, err;
  const int status = run_lint(path, out, err);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(status, c.status) << out.str() << err.str();
  EXPECT_NE((out.str() + err.str()).find(c.text), std::string::npos) << out.str() << err.str();
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n;
  for (const char* p = info.param.name; *p; ++p) n += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Table, HostilePcap, ::testing::ValuesIn(kCases), case_name);

}  // namespace
}  // namespace rnicsim::lint
