// Writes one pcap per link with one packet per valid opcode (and link
// variant), for cross-checking with scapy and tshark:
//   DIR/roce_ipv4.pcap  Ethernet, RoCEv2 over IPv4, untagged and 802.1Q tagged
//   DIR/roce_ipv6.pcap  Ethernet, RoCEv2 over IPv6, untagged and 802.1Q tagged
//   DIR/ib.pcap         LINKTYPE_INFINIBAND (247), LRH only and LRH+GRH
//   DIR/ib_erf.pcap     the same packets as ERF records of type InfiniBand
//                       (LINKTYPE_ERF), which tshark 4.0 decodes; it does
//                       not map link type 247
#include <pcap/pcap.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "packet/erf.hpp"
#include "packet/packet.hpp"
#include "tests/packet/sample_packets.hpp"

using namespace rnicsim::packet;
using namespace rnicsim::packet::testing;

static int write(const std::string& path, int dlt, const std::vector<LinkVariant>& variants) {
  pcap_t* dead = pcap_open_dead_with_tstamp_precision(dlt, 65535, PCAP_TSTAMP_PRECISION_NANO);
  if (!dead) return 1;
  pcap_dumper_t* d = pcap_dump_open(dead, path.c_str());
  if (!d) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), pcap_geterr(dead));
    pcap_close(dead);
    return 1;
  }
  int n = 0;
  for (const auto& lv : variants) {
    for (Opcode op : all_valid_opcodes()) {
      const auto frame = sample_frame(sample_fields(op, lv), static_cast<std::uint8_t>(op));
      if (frame.empty()) return 1;
      pcap_pkthdr h{};
      h.ts.tv_sec = 1;
      h.ts.tv_usec = n * 1000;  // nanoseconds with PCAP_TSTAMP_PRECISION_NANO
      std::vector<std::byte> record;
      if (dlt == DLT_ERF) {
        const auto erf = erf_header(1, static_cast<std::uint32_t>(h.ts.tv_usec), frame.size(), frame.size());
        record.assign(erf.begin(), erf.end());
      }
      record.insert(record.end(), frame.begin(), frame.end());
      h.caplen = h.len = static_cast<bpf_u_int32>(record.size());
      pcap_dump(reinterpret_cast<u_char*>(d), &h, reinterpret_cast<const u_char*>(record.data()));
      ++n;
    }
  }
  pcap_dump_close(d);
  pcap_close(dead);
  std::printf("%s: %d packets\n", path.c_str(), n);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  int rc = 0;
  rc |= write(dir + "/roce_ipv4.pcap", DLT_EN10MB, {{LinkKind::RoceV2Ipv4, false}, {LinkKind::RoceV2Ipv4, true}});
  rc |= write(dir + "/roce_ipv6.pcap", DLT_EN10MB, {{LinkKind::RoceV2Ipv6, false}, {LinkKind::RoceV2Ipv6, true}});
  rc |= write(dir + "/ib.pcap", 247, {{LinkKind::IbLocal, false}, {LinkKind::IbGlobal, false}});
  rc |= write(dir + "/ib_erf.pcap", DLT_ERF, {{LinkKind::IbLocal, false}, {LinkKind::IbGlobal, false}});
  return rc;
}
