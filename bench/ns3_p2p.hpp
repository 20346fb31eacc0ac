// Peer run for bench/sim_speed: the same stream in ns-3, behind an interface
// that exposes no ns-3 types, so that ns-3's headers stay in one translation
// unit (they do not build cleanly under the project's warning flags).
#pragma once

#include <cstdint>
#include <string>

namespace rnicsim::bench {

struct Ns3Result {
  std::string version;                 // e.g. "3.37"
  std::uint64_t packets_sent = 0;      // UdpClient packets handed to the stack
  std::uint64_t packets_received = 0;  // packets counted by the UdpServer
  std::uint64_t packets_lost = 0;      // UdpServer's sequence-gap count
  std::uint32_t wire_bytes = 0;        // one packet on the link: payload + UDP + IPv4 + PPP
  double interval_seconds = 0;         // client inter-packet gap
  double sim_seconds = 0;              // simulated time of the last reception
  double setup_seconds = 0;            // wall: build topology and applications
  double run_seconds = 0;              // wall: Simulator::Run
  double wall_seconds = 0;             // wall: setup + run + destroy
};

// Two nodes joined by a 100 Gb/s point-to-point link with 1 us delay;
// UdpClient on node 0 sends `packets` datagrams of `payload_bytes` UDP payload
// to a UdpServer on node 1, spaced by the serialization time of one packet so
// that the link stays busy. Runs to completion and tears the simulator down.
Ns3Result run_ns3_p2p(std::uint64_t packets, std::uint32_t payload_bytes);

}  // namespace rnicsim::bench
