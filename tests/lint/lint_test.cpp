// rnicsim lint on captures written here with libpcap.
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lint/lint.hpp"
#include "packet/erf.hpp"
#include "packet/icrc.hpp"
#include "packet/pfc.hpp"
#include "tests/packet/sample_packets.hpp"

namespace rnicsim::lint {
namespace {

using namespace packet;
using packet::testing::LinkVariant;
using packet::testing::sample_fields;
using packet::testing::sample_frame;
using Frame = std::vector<std::byte>;

const LinkVariant kV4{LinkKind::RoceV2Ipv4, false};

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "rnicsim_lint_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

void write_pcap(const std::string& path, const std::vector<Frame>& frames, int dlt = DLT_EN10MB) {
  pcap_t* dead = pcap_open_dead_with_tstamp_precision(dlt, 65535, PCAP_TSTAMP_PRECISION_NANO);
  ASSERT_NE(dead, nullptr);
  pcap_dumper_t* d = pcap_dump_open(dead, path.c_str());
  ASSERT_NE(d, nullptr);
  long ns = 0;
  for (const Frame& f : frames) {
    pcap_pkthdr h{};
    h.ts.tv_sec = 1;
    h.ts.tv_usec = ns += 1000;
    Frame record;
    if (dlt == DLT_ERF) {  // an ERF header of type InfiniBand first
      const auto erf = packet::erf_header(1, static_cast<std::uint32_t>(ns), f.size(), f.size());
      record.assign(erf.begin(), erf.end());
    }
    record.insert(record.end(), f.begin(), f.end());
    h.caplen = h.len = static_cast<bpf_u_int32>(record.size());
    pcap_dump(reinterpret_cast<u_char*>(d), &h, reinterpret_cast<const u_char*>(record.data()));
  }
  pcap_dump_close(d);
  pcap_close(dead);
}

struct LintRun {
  int rc;
  std::string out;
  std::string err;
};

LintRun lint_file(const std::string& path) {
  std::ostringstream out, err;
  const int rc = run_lint(path, out, err);
  return {rc, out.str(), err.str()};
}

LintRun lint_frames(const std::vector<Frame>& frames, int dlt = DLT_EN10MB) {
  TempDir dir;
  write_pcap(dir.file("c.pcap"), frames, dlt);
  return lint_file(dir.file("c.pcap"));
}

/// A packet of opcode `op` with PSN `psn` on the sample QP (10.0.0.1 -> 10.0.0.2, QPN 0x123).
Frame pkt(Opcode op, std::uint32_t psn, LinkVariant lv = kV4, bool reverse = false) {
  PacketFields f = sample_fields(op, lv);
  f.psn = packet::Psn(psn);
  // One QP per transport: the same QPN cannot be RC and UC at once.
  if (opcode_info(op).transport == Transport::Uc) f.dest_qp = packet::Qpn(0x124);
  if (reverse) {
    std::swap(f.ip_src, f.ip_dst);
    std::swap(f.eth_src, f.eth_dst);
    std::swap(f.slid, f.dlid);
    std::swap(f.sgid, f.dgid);
    f.dest_qp = packet::Qpn(0x456);
  }
  return sample_frame(f, static_cast<std::uint8_t>(psn));
}
Frame resp(Opcode op, std::uint32_t psn, LinkVariant lv = kV4) { return pkt(op, psn, lv, true); }

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

/// Frame numbers of error findings in lint output.
std::vector<int> error_frames(const std::string& out) {
  std::vector<int> v;
  static const std::regex re(R"(frame (\d+): error:)");
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end; ++it) v.push_back(std::stoi((*it)[1]));
  return v;
}

Frame pfc_pause() {
  Frame f(60);
  const std::uint8_t head[] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x02, 0, 0, 0, 0, 1, 0x88, 0x08, 0x01, 0x01, 0x00, 0x08};
  for (std::size_t i = 0; i < sizeof head; ++i) f[i] = std::byte{head[i]};
  return f;
}

std::vector<Frame> clean_conversation(LinkVariant lv) {
  std::vector<Frame> v;
  v.push_back(pkt(Opcode::RcSendFirst, 100, lv));
  v.push_back(pkt(Opcode::RcSendMiddle, 101, lv));
  v.push_back(pkt(Opcode::RcSendLast, 102, lv));
  v.push_back(resp(Opcode::RcAcknowledge, 102, lv));
  v.push_back(pkt(Opcode::RcRdmaWriteFirst, 103, lv));
  v.push_back(pkt(Opcode::RcRdmaWriteLastWithImmediate, 104, lv));
  v.push_back(pkt(Opcode::RcRdmaWriteOnly, 105, lv));
  v.push_back(pkt(Opcode::RcSendOnlyWithInvalidate, 106, lv));
  // RDMA READ of 8192 bytes at PMTU 256 reserves PSNs 107..138 (32 responses);
  // here only 3 responses are shown, so PMTU must be learnt: read 3*256 instead.
  {
    PacketFields f = sample_fields(Opcode::RcRdmaReadRequest, lv);
    f.psn = packet::Psn(107);
    f.reth->dma_length = 3 * 256 - 3;
    v.push_back(sample_frame(f));
  }
  v.push_back(resp(Opcode::RcRdmaReadResponseFirst, 107, lv));
  v.push_back(resp(Opcode::RcRdmaReadResponseMiddle, 108, lv));
  v.push_back(resp(Opcode::RcRdmaReadResponseLast, 109, lv));
  v.push_back(pkt(Opcode::RcCompareSwap, 110, lv));
  v.push_back(resp(Opcode::RcAtomicAcknowledge, 110, lv));
  v.push_back(pkt(Opcode::RcFetchAdd, 111, lv));
  v.push_back(resp(Opcode::RcAtomicAcknowledge, 111, lv));
  v.push_back(pkt(Opcode::RcSendOnlyWithImmediate, 112, lv));
  v.push_back(resp(Opcode::RcAcknowledge, 112, lv));  // coalesced: ACKs 105..112
  v.push_back(pkt(Opcode::UcSendFirst, 7, lv));
  v.push_back(pkt(Opcode::UcSendLastWithImmediate, 8, lv));
  v.push_back(pkt(Opcode::UdSendOnly, 1, lv));
  v.push_back(pkt(Opcode::UdSendOnlyWithImmediate, 2, lv));
  v.push_back(pkt(Opcode::Cnp, 0, lv));
  return v;
}

TEST(Lint, CleanCaptureExitsZero) {
  for (LinkVariant lv : {LinkVariant{LinkKind::RoceV2Ipv4, false}, LinkVariant{LinkKind::RoceV2Ipv6, true}}) {
    auto frames = clean_conversation(lv);
    frames.insert(frames.begin() + 3, pfc_pause());
    const auto r = lint_frames(frames);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(count(r.out, ": error:"), 0u) << r.out;
    EXPECT_EQ(count(r.out, ": observation:"), 0u) << r.out;
    // The PFC frame is checked and counted, not skipped.
    EXPECT_NE(r.out.find("skipped (other): 0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("PFC frames: 1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("requests [RC]: 11 packets"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("0 PSN gaps"), std::string::npos) << r.out;
  }
}

TEST(Lint, CleanInfinibandCaptureExitsZero) {
  for (LinkVariant lv : {LinkVariant{LinkKind::IbLocal, false}, LinkVariant{LinkKind::IbGlobal, false}}) {
    for (int dlt : {247, DLT_ERF}) {
      const auto r = lint_frames(clean_conversation(lv), dlt);
      EXPECT_EQ(r.rc, 0) << r.out << r.err;
      EXPECT_NE(r.out.find("(InfiniBand)"), std::string::npos);
      EXPECT_EQ(count(r.out, ": error:"), 0u) << r.out;
      EXPECT_NE(r.out.find("requests [RC]: 11 packets"), std::string::npos) << dlt << r.out;
    }
  }
}

// An ERF capture's packets are checked as the same packets without the ERF
// header: a flipped bit is found on its frame, a record of another ERF type
// is a finding of its own.
TEST(Lint, ErfRecordsAreCheckedAsTheirPackets) {
  auto frames = clean_conversation({LinkKind::IbLocal, false});
  frames[2][30] ^= std::byte{0x01};
  const auto native = lint_frames(frames, 247), erf = lint_frames(frames, DLT_ERF);
  EXPECT_EQ(native.rc, 1);
  EXPECT_EQ(erf.out.substr(erf.out.find('\n')), native.out.substr(native.out.find('\n')));
  EXPECT_NE(erf.out.find("frame 3: error"), std::string::npos) << erf.out;

  TempDir dir;
  write_pcap(dir.file("c.pcap"), {frames[0]}, DLT_ERF);
  {
    std::fstream f(dir.file("c.pcap"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(24 + 16 + 8);  // file header, record header, the ERF type
    f.put(2);              // Ethernet
  }
  const auto other = lint_file(dir.file("c.pcap"));
  EXPECT_NE(other.out.find("not an InfiniBand packet"), std::string::npos) << other.out;
}

/// Bits of `frame` whose flip a receiver cannot notice by CRC alone, or that
/// turn the frame into something that is not RoCEv2/IB transport at all.
enum class FlipClass { Covered, Ipv4Variant, UdpChecksum, NotCovered, Foreign, ErrorOrForeign };

FlipClass classify(const Frame& frame, LinkKind link, std::size_t byte, int bit) {
  const auto r = parse(frame, is_roce(link) ? LinkType::Ethernet : LinkType::Infiniband);
  const FrameLayout& l = r->layout;
  if (is_roce(link)) {
    if (byte < 12) return FlipClass::NotCovered;                  // MAC addresses (FCS territory)
    if (l.l3_offset == 18 && (byte == 14 || byte == 15)) return FlipClass::NotCovered;  // 802.1Q TCI
    if (byte < l.l3_offset) return FlipClass::Foreign;            // EtherType
    const std::size_t o = byte - l.l3_offset;
    // IPv4 IHL: the UDP header moves, and what is read as its port is not 4791
    // (a foreign UDP packet) or the IHL is invalid (an error).
    if (link == LinkKind::RoceV2Ipv4 && o == 0 && bit < 4) return FlipClass::ErrorOrForeign;
    const std::size_t udp = l.l3_header_length;
    if (link == LinkKind::RoceV2Ipv4) {
      if (o == 9) return FlipClass::Foreign;                                      // protocol
      if (o == 1 || o == 8 || o == 10 || o == 11) return FlipClass::Ipv4Variant;  // TOS, TTL, checksum
    } else {
      if (o == 6) return FlipClass::Foreign;  // next header
      // Traffic class, flow label, hop limit: masked in the ICRC, outside the UDP checksum.
      if ((o == 0 && bit < 4) || o == 1 || o == 2 || o == 3 || o == 7) return FlipClass::NotCovered;
    }
    if (o == udp + 2 || o == udp + 3) return FlipClass::Foreign;  // UDP destination port
    if (o == udp + 6 || o == udp + 7) return FlipClass::UdpChecksum;
    if (byte == l.bth_offset + 4u) return FlipClass::NotCovered;  // BTH FECN/BECN/resv
    if (byte >= l.icrc_offset + 4u) return FlipClass::NotCovered;  // Ethernet pad
    return FlipClass::Covered;
  }
  // IB: the VCRC covers every bit; only LNH 2 -> 0 (raw) makes it foreign.
  if (byte == 1 && bit == 1) return FlipClass::Foreign;
  return FlipClass::Covered;
}

void flip_every_bit(LinkVariant lv) {
  const Frame before = pkt(Opcode::RcSendOnly, 10, lv);
  const Frame target = pkt(Opcode::RcRdmaWriteOnlyWithImmediate, 11, lv);
  const Frame after = pkt(Opcode::RcSendOnly, 12, lv);
  int covered = 0, icrc_reported = 0, malformed_reported = 0;
  for (std::size_t byte = 0; byte < target.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      Frame bad = target;
      bad[byte] ^= static_cast<std::byte>(1u << bit);
      const FlipClass c = classify(target, lv.link, byte, bit);
      // A frame 2 that is dropped as foreign or unparsable leaves a PSN gap
      // (an observation) on frame 3, never an error there.
      Linter linter(is_roce(lv.link) ? LinkType::Ethernet : LinkType::Infiniband);
      linter.add_frame(1, before);
      linter.add_frame(2, bad);
      linter.add_frame(3, after);
      const Report& rep = linter.report();
      SCOPED_TRACE("byte " + std::to_string(byte) + " bit " + std::to_string(bit));
      std::vector<std::uint64_t> err;
      std::string messages;
      for (const Finding& f : rep.findings)
        if (f.severity == Severity::Error) {
          err.push_back(f.frame);
          messages += f.message + "\n";
        }
      switch (c) {
        case FlipClass::Covered: {
          ++covered;
          ASSERT_FALSE(err.empty());
          for (auto fr : err) EXPECT_EQ(fr, 2u) << messages;
          const auto parsed = parse(bad, is_roce(lv.link) ? LinkType::Ethernet : LinkType::Infiniband);
          if (parsed) {
            EXPECT_TRUE(messages.find("bad ICRC") != std::string::npos || messages.find("bad VCRC") != std::string::npos)
                << messages;
            ++icrc_reported;
          } else {
            EXPECT_NE(messages.find("malformed packet"), std::string::npos) << messages;
            ++malformed_reported;
          }
          break;
        }
        case FlipClass::Ipv4Variant:
          EXPECT_EQ(err, std::vector<std::uint64_t>{2}) << messages;
          EXPECT_NE(messages.find("IPv4 header checksum"), std::string::npos);
          break;
        case FlipClass::UdpChecksum:  // 0 over IPv4 (now nonzero and wrong), computed over IPv6
          EXPECT_TRUE(err.empty()) << messages;
          EXPECT_EQ(rep.warnings, 1u);
          break;
        case FlipClass::NotCovered:
          EXPECT_TRUE(err.empty()) << messages;
          break;
        case FlipClass::Foreign:
          EXPECT_TRUE(err.empty()) << messages;
          EXPECT_EQ(rep.skipped, 1u);
          break;
        case FlipClass::ErrorOrForeign:
          EXPECT_TRUE(err == std::vector<std::uint64_t>{2} || (err.empty() && rep.skipped == 1u)) << messages;
          break;
      }
    }
  }
  std::printf("%s: %d covered bit flips: %d reported as bad ICRC/VCRC, %d as malformed\n", lv.name().c_str(),
              covered, icrc_reported, malformed_reported);
  EXPECT_GT(icrc_reported, 8 * 40);
}

TEST(Lint, FlippedBitIsReportedOnThatFrameRoceV4) { flip_every_bit(kV4); }
TEST(Lint, FlippedBitIsReportedOnThatFrameRoceV6Vlan) { flip_every_bit({LinkKind::RoceV2Ipv6, true}); }
TEST(Lint, FlippedBitIsReportedOnThatFrameIbGlobal) { flip_every_bit({LinkKind::IbGlobal, false}); }

TEST(Lint, FlippedBitThroughPcapFile) {
  // The same through run_lint and a file: a payload bit of frame 3 of 4.
  auto frames = clean_conversation(kV4);
  frames.resize(4);
  frames[2][60] ^= std::byte{0x10};
  const auto r = lint_frames(frames);
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(error_frames(r.out), std::vector<int>{3}) << r.out;
  EXPECT_NE(r.out.find("frame 3: error: bad ICRC"), std::string::npos) << r.out;
}

struct SeqCase {
  const char* name;
  std::vector<Frame> frames;
  int bad_frame;
  const char* message;
};

TEST(Lint, BadOpcodeSequencesAreErrors) {
  const std::vector<SeqCase> cases = {
      {"middle without first", {pkt(Opcode::RcSendOnly, 1), pkt(Opcode::RcSendMiddle, 2)}, 2, "without a FIRST"},
      {"last without first", {pkt(Opcode::RcSendOnly, 1), pkt(Opcode::RcRdmaWriteLast, 2)}, 2, "without a FIRST"},
      {"first while open",
       {pkt(Opcode::RcSendFirst, 1), pkt(Opcode::RcSendMiddle, 2), pkt(Opcode::RcSendFirst, 3)}, 3, "is open"},
      {"only while open", {pkt(Opcode::RcRdmaWriteFirst, 1), pkt(Opcode::RcSendOnly, 2)}, 2, "is open"},
      {"operation changes",
       {pkt(Opcode::RcRdmaWriteFirst, 1), pkt(Opcode::RcRdmaWriteMiddle, 2), pkt(Opcode::RcSendLast, 3)}, 3,
       "inside a RDMA WRITE message"},
      {"read response middle without first",
       {pkt(Opcode::RcRdmaReadRequest, 1), resp(Opcode::RcRdmaReadResponseOnly, 1),
        resp(Opcode::RcRdmaReadResponseMiddle, 2)},
       3, "without a FIRST"},
      {"uc last without first", {pkt(Opcode::UcSendOnly, 1), pkt(Opcode::UcSendLast, 2)}, 2, "without a FIRST"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto r = lint_frames(c.frames);
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_EQ(error_frames(r.out), std::vector<int>{c.bad_frame}) << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << r.out;
  }
}

TEST(Lint, WriteOnlyWithAnotherDmaLengthIsAnError) {
  PacketFields f = sample_fields(Opcode::RcRdmaWriteOnly, kV4);
  f.psn = packet::Psn(5);
  f.reth->dma_length = f.payload_length + 4;
  const auto r = lint_frames({sample_frame(f)});
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("frame 1: error: RDMA WRITE ONLY whose RETH asks for " + std::to_string(f.payload_length + 4) +
                       " bytes carries " + std::to_string(f.payload_length) + " (an invalid request)"),
            std::string::npos)
      << r.out;
}

TEST(Lint, ReadResponseWhoseFirstWasLostIsAGap) {
  // The responder's ACK for PSN 1, then a READ response for PSNs 2..4 whose FIRST
  // (PSN 2) never reached the capture point.
  const auto r = lint_frames({pkt(Opcode::RcRdmaWriteOnly, 1), pkt(Opcode::RcRdmaReadRequest, 2),
                              resp(Opcode::RcAcknowledge, 1), resp(Opcode::RcRdmaReadResponseMiddle, 3),
                              resp(Opcode::RcRdmaReadResponseLast, 4)});
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("frame 4: observation: PSN gap: RC_RDMA_READ_RESPONSE_MIDDLE 0x000003 after 0x000001, its FIRST "
                       "not seen"),
            std::string::npos)
      << r.out;
}

TEST(Lint, PsnGapIsAnObservation) {
  const auto r = lint_frames({pkt(Opcode::RcSendFirst, 10), pkt(Opcode::RcSendMiddle, 11),
                              /* 12, 13 lost */ pkt(Opcode::RcSendMiddle, 14), pkt(Opcode::RcSendLast, 15)});
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("frame 3: observation: PSN gap: expected 0x00000c, got 0x00000e (2 missing)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1 PSN gaps (2 PSNs missing)"), std::string::npos) << r.out;
  // A gap that swallows a LAST and a FIRST: not a sequence error either.
  const auto r2 = lint_frames({pkt(Opcode::RcSendFirst, 10), pkt(Opcode::RcSendMiddle, 13), pkt(Opcode::RcSendLast, 14)});
  EXPECT_EQ(r2.rc, 0) << r2.out;
}

TEST(Lint, GoBackNRetransmissionIsAnObservation) {
  // 10 FIRST, 11 MIDDLE, (12 lost), 13 MIDDLE: NAK; the requester goes back to 12.
  const auto r = lint_frames({pkt(Opcode::RcSendFirst, 10), pkt(Opcode::RcSendMiddle, 11), pkt(Opcode::RcSendMiddle, 13),
                              pkt(Opcode::RcSendLast, 14), pkt(Opcode::RcSendMiddle, 12), pkt(Opcode::RcSendMiddle, 13),
                              pkt(Opcode::RcSendLast, 14),
                              // ... and a whole-message restart from its FIRST.
                              pkt(Opcode::RcSendFirst, 10), pkt(Opcode::RcSendMiddle, 11), pkt(Opcode::RcSendMiddle, 12),
                              pkt(Opcode::RcSendMiddle, 13), pkt(Opcode::RcSendLast, 14), pkt(Opcode::RcSendLast, 14)});
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("frame 5: observation: retransmission: PSN back from 0x00000f to 0x00000c"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("frame 8: observation: retransmission"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("frame 13: observation: duplicate PSN 0x00000e"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 retransmissions, 1 duplicates"), std::string::npos) << r.out;
}

TEST(Lint, NakAndCoalescedAcksAreNotGaps) {
  PacketFields nak = sample_fields(Opcode::RcAcknowledge, kV4);
  std::swap(nak.ip_src, nak.ip_dst);
  nak.dest_qp = packet::Qpn(0x456);
  nak.psn = packet::Psn(12);
  nak.aeth = AethFields{packet::Syndrome::nak(packet::NakCode::PsnSequenceError), 3};
  const auto r = lint_frames({pkt(Opcode::RcSendOnly, 10), pkt(Opcode::RcSendOnly, 11), pkt(Opcode::RcSendOnly, 13),
                              resp(Opcode::RcAcknowledge, 11), sample_frame(nak), resp(Opcode::RcAcknowledge, 20)});
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("frame 5: observation: NAK (PSN sequence error)"), std::string::npos) << r.out;
  EXPECT_EQ(count(r.out, "observation: PSN gap"), 1u) << r.out;  // the lost request 12 only
}

TEST(Lint, MalformedPacketIsAnError) {
  Frame f = pkt(Opcode::RcSendOnly, 1);
  f[14 + 20 + 8] = std::byte{0x1F};  // reserved opcode
  const auto r = lint_frames({pkt(Opcode::RcSendOnly, 0), f});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("frame 2: error: malformed packet: reserved or unsupported BTH opcode"), std::string::npos)
      << r.out;
}

TEST(Lint, UnreadableFileExitsTwo) {
  TempDir dir;
  auto r = lint_file(dir.file("does_not_exist.pcap"));
  EXPECT_EQ(r.rc, 2);
  EXPECT_FALSE(r.err.empty());
  std::ofstream(dir.file("text.pcap")) << "this is not a capture file\n";
  r = lint_file(dir.file("text.pcap"));
  EXPECT_EQ(r.rc, 2);
  std::ofstream(dir.file("empty.pcap")).flush();
  EXPECT_EQ(lint_file(dir.file("empty.pcap")).rc, 2);
  write_pcap(dir.file("raw_ip.pcap"), {pkt(Opcode::RcSendOnly, 1)}, DLT_RAW);
  r = lint_file(dir.file("raw_ip.pcap"));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("unsupported link type"), std::string::npos);
}

TEST(Lint, TruncatedPcapFileNeverCrashes) {
  TempDir dir;
  write_pcap(dir.file("full.pcap"), clean_conversation(kV4));
  std::ifstream in(dir.file("full.pcap"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  // Where each record ends: a 16-byte header (caplen at offset 8), then caplen bytes.
  std::set<std::size_t> ends = {24};
  for (std::size_t at = 24; at + 16 <= bytes.size();) {
    std::uint32_t caplen = 0;
    std::memcpy(&caplen, bytes.data() + at + 8, 4);
    at += 16 + caplen;
    ends.insert(at);
  }
  int cut_records = 0;
  for (std::size_t len = 0; len < bytes.size(); ++len) {
    std::ofstream(dir.file("cut.pcap"), std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(len));
    const auto r = lint_file(dir.file("cut.pcap"));
    if (len < 24) {
      EXPECT_EQ(r.rc, 2) << len;
    } else if (ends.count(len)) {
      EXPECT_EQ(r.rc, 0) << len << "\n" << r.out;  // whole records only: clean
    } else {
      EXPECT_EQ(r.rc, 1) << len << "\n" << r.out;  // a record cut: an error of the capture
      EXPECT_NE(r.out.find("error: capture file damaged or truncated"), std::string::npos) << len << "\n" << r.out;
      ++cut_records;
    }
  }
  EXPECT_GT(cut_records, 0);
  std::printf("%zu cuts: %zu between records (clean), %d inside one (an error)\n", bytes.size() - 24,
              ends.size() - 1, cut_records);
}

// A capture cut inside its last record: every frame before it is checked and its
// findings reported, and the cut is an error on the frame it cut.
TEST(Lint, RecordCutShortIsAnErrorAfterTheFramesBefore) {
  TempDir dir;
  auto frames = clean_conversation(kV4);
  frames.resize(4);
  frames[1][60] ^= std::byte{0x10};
  write_pcap(dir.file("full.pcap"), frames);
  std::ifstream in(dir.file("full.pcap"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(dir.file("cut.pcap"), std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 5));
  const auto r = lint_file(dir.file("cut.pcap"));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_EQ(error_frames(r.out), (std::vector<int>{2, 4})) << r.out;
  EXPECT_NE(r.out.find("frame 2: error: bad ICRC"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("frame 4: error: capture file damaged or truncated"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("frames: 3,"), std::string::npos) << r.out;
}

// lint --json: the report as one object, every finding in it with its kind and,
// when it is about a parsed packet, that packet's QP and PSN.
TEST(Lint, JsonReportHasEveryFindingAsAnObject) {
  TempDir dir;
  std::vector<Frame> frames = {pkt(Opcode::RcSendFirst, 10), pkt(Opcode::RcSendMiddle, 11),
                               pkt(Opcode::RcSendMiddle, 14), pkt(Opcode::RcSendLast, 15)};
  frames[1][60] ^= std::byte{0x10};  // bad ICRC: a receiver drops it, so 14 comes after a gap
  write_pcap(dir.file("full.pcap"), frames);
  std::ifstream in(dir.file("full.pcap"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(dir.file("cut.pcap"), std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 5));
  std::ostringstream out, err;
  EXPECT_EQ(run_lint(dir.file("cut.pcap"), out, err, ReportFormat::Json), 1) << err.str();
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema"], "rnicsim.lint");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["link_type"], "Ethernet");
  EXPECT_EQ(j["frames"], 3);
  ASSERT_EQ(j["findings"].size(), 3u) << j.dump(2);
  EXPECT_EQ(j["errors"], 2);
  EXPECT_EQ(j["observations"], 1);
  const auto& icrc = j["findings"][0];
  EXPECT_EQ(icrc["frame"], 2);
  EXPECT_EQ(icrc["severity"], "error");
  EXPECT_EQ(icrc["kind"], "bad_icrc");
  EXPECT_EQ(icrc["qp"], 0x123);
  EXPECT_EQ(icrc["psn"], 11);
  EXPECT_EQ(icrc["message"].get<std::string>().rfind("bad ICRC", 0), 0u);
  const auto& gap = j["findings"][1];
  EXPECT_EQ(gap["kind"], "psn_gap");
  EXPECT_EQ(gap["severity"], "observation");
  EXPECT_EQ(gap["frame"], 3);
  EXPECT_EQ(gap["psn"], 14);
  const auto& cut = j["findings"][2];
  EXPECT_EQ(cut["kind"], "capture");
  EXPECT_TRUE(cut["qp"].is_null() && cut["psn"].is_null()) << cut.dump();
  ASSERT_EQ(j["streams"].size(), 1u);
  EXPECT_EQ(j["streams"][0]["dest_qp"], 0x123);
  EXPECT_EQ(j["streams"][0]["kind"], "requests");
  EXPECT_EQ(j["streams"][0]["psn_gaps"], 1);
}

TEST(Lint, EveryFindingKindHasItsOwnName) {
  std::set<std::string_view> names;
  for (const FindingKindInfo& k : kFindingKinds) EXPECT_TRUE(names.insert(k.name).second) << k.name;
}

// A record longer than the file's snaplen: libpcap hands over the first snaplen
// bytes; lint says the record is broken, on its frame, and goes on.
TEST(Lint, RecordLongerThanTheSnaplenIsAnError) {
  TempDir dir;
  auto frames = clean_conversation(kV4);
  frames.resize(3);
  const std::size_t snaplen = frames[0].size();
  frames[1].resize(snaplen + 100);  // a frame 100 bytes longer than the snaplen
  pcap_t* dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, static_cast<int>(snaplen), PCAP_TSTAMP_PRECISION_NANO);
  pcap_dumper_t* d = pcap_dump_open(dead, dir.file("long.pcap").c_str());
  ASSERT_NE(d, nullptr);
  for (const Frame& f : frames) {
    pcap_pkthdr h{};
    h.caplen = h.len = static_cast<bpf_u_int32>(f.size());  // pcap_dump writes what it is told
    pcap_dump(reinterpret_cast<u_char*>(d), &h, reinterpret_cast<const u_char*>(f.data()));
  }
  pcap_dump_close(d);
  pcap_close(dead);
  const auto r = lint_file(dir.file("long.pcap"));
  EXPECT_EQ(r.rc, 1) << r.out;
  const std::string want = "frame 2: error: the record holds " + std::to_string(snaplen + 100) +
                           " bytes, more than the capture's snaplen of " + std::to_string(snaplen);
  EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
  std::printf("%s\n", want.c_str());
  EXPECT_NE(r.out.find("frames: 3,"), std::string::npos) << r.out;  // the frame after it was read too
}

TEST(Lint, GarbageFramesNeverCrash) {
  std::mt19937 rng(42);
  Linter eth(LinkType::Ethernet), ib(LinkType::Infiniband);
  const Frame base = pkt(Opcode::RcRdmaWriteFirst, 5);
  for (std::uint64_t n = 1; n <= 20000; ++n) {
    Frame f;
    if (n % 2) {
      f.resize(rng() % 200);
      for (auto& b : f) b = static_cast<std::byte>(rng());
    } else {  // a valid frame with a few random bytes and a random length
      f = base;
      for (int k = 0; k < 3; ++k) f[rng() % f.size()] = static_cast<std::byte>(rng());
      f.resize(rng() % (f.size() + 8));
    }
    eth.add_frame(n, f);
    ib.add_frame(n, f);
  }
  EXPECT_EQ(eth.report().frames, 20000u);
  EXPECT_EQ(ib.report().frames, 20000u);
}

TEST(Lint, FramesCutAfterTheirHeadersAreCheckedWithoutTheirCrcs) {
  Linter l(LinkType::Ethernet);
  const Frame f = pkt(Opcode::RcSendFirst, 1);
  l.add_frame(1, std::span(f).first(64), f.size());
  EXPECT_EQ(l.report().errors, 0u);
  EXPECT_EQ(l.report().warnings, 0u);
  EXPECT_EQ(l.report().checked, 1u);
  EXPECT_EQ(l.report().headers_only, 1u);
  ASSERT_EQ(l.report().streams.size(), 1u);
  EXPECT_EQ(l.report().streams.begin()->second.packets, 1u);
  // The headers are still checked: a bad IPv4 header checksum is an error.
  Frame bad = f;
  bad[24] ^= std::byte{0x01};
  Linter l2(LinkType::Ethernet);
  l2.add_frame(1, std::span(bad).first(64), bad.size());
  EXPECT_EQ(l2.report().errors, 1u);
}

TEST(Lint, FramesCutInsideTheirHeadersAreWarnings) {
  Linter l(LinkType::Ethernet);
  const Frame f = pkt(Opcode::RcSendFirst, 1);
  l.add_frame(1, std::span(f).first(40), f.size());
  EXPECT_EQ(l.report().errors, 0u);
  EXPECT_EQ(l.report().warnings, 1u);
  EXPECT_EQ(l.report().headers_only, 0u);
}

}  // namespace
}  // namespace rnicsim::lint

namespace rnicsim::lint {
namespace {

std::vector<std::byte> pfc_frame(std::uint8_t enable, std::uint16_t quanta3) {
  packet::PfcFields f;
  f.src = {2, 0, 0, 0, 0, 1};
  f.enable = enable;
  f.quanta[3] = quanta3;
  std::vector<std::byte> b(packet::kPfcFrameBytes);
  packet::write_pfc(f, b);
  return b;
}

TEST(Lint, PfcFramesAreCountedNotFlagged) {
  Linter l(packet::LinkType::Ethernet);
  l.add_frame(1, pfc_frame(0x08, 0xFFFF));
  l.add_frame(2, pfc_frame(0x08, 100));
  l.add_frame(3, pfc_frame(0x08, 0));
  const Report& r = l.report();
  EXPECT_EQ(r.errors + r.warnings, 0u);
  EXPECT_EQ(r.pfc.frames, 3u);
  EXPECT_EQ(r.pfc.pauses[3], 2u);
  EXPECT_EQ(r.pfc.quanta[3], 0xFFFFu + 100);
  EXPECT_EQ(r.pfc.xons[3], 1u);
  EXPECT_EQ(r.skipped, 0u);
  std::ostringstream out;
  print_report(r, out);
  EXPECT_NE(out.str().find("PFC frames: 3; priority 3: 2 pauses (65635 quanta), 1 XON"), std::string::npos) << out.str();
}

TEST(Lint, MalformedPfcFramesAreErrors) {
  Linter l(packet::LinkType::Ethernet);
  auto wrong_dst = pfc_frame(0x08, 1);
  wrong_dst[5] = std::byte{0x02};
  l.add_frame(1, wrong_dst);
  auto reserved = pfc_frame(0x08, 1);
  reserved[16] = std::byte{0x01};  // high byte of the enable vector
  l.add_frame(2, reserved);
  const auto cut = pfc_frame(0x08, 1);
  l.add_frame(3, std::span(cut).first(20));
  EXPECT_EQ(l.report().errors, 3u);
}

}  // namespace
}  // namespace rnicsim::lint
