// ns-3 half of bench/sim_speed. Compiled with relaxed warnings (see
// bench/CMakeLists.txt); nothing from ns-3 leaks through ns3_p2p.hpp.
#include "ns3_p2p.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

#include <ns3/applications-module.h>
#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>
#if __has_include(<ns3/version-defines.h>)
#include <ns3/version-defines.h>
#endif

namespace rnicsim::bench {
namespace {

constexpr double kLinkBitsPerSecond = 100e9;
constexpr std::uint32_t kUdpHeaderBytes = 8;
constexpr std::uint32_t kIpv4HeaderBytes = 20;
constexpr std::uint32_t kPppHeaderBytes = 2;

struct Counter {
  std::uint64_t packets = 0;
  ns3::Time last;
};

void count_packet(Counter* counter, ns3::Ptr<const ns3::Packet>) {
  ++counter->packets;
  counter->last = ns3::Simulator::Now();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The ns-3 version and the stream's packet size and interval.
Ns3Result describe_stream(std::uint32_t payload_bytes) {
  Ns3Result result;
#if defined(NS3_VERSION_MAJOR) && defined(NS3_VERSION_MINOR)
  result.version = std::to_string(NS3_VERSION_MAJOR) + "." + std::to_string(NS3_VERSION_MINOR);
#else
  result.version = "3.x";
#endif
  result.wire_bytes = payload_bytes + kUdpHeaderBytes + kIpv4HeaderBytes + kPppHeaderBytes;
  // ns-3's default time resolution is 1 ns. Rounding the serialization time
  // down keeps the link saturated; the device queue then grows by one packet
  // every (serialization time / rounding error) packets, about 1 in 4000 here.
  const double tx_ns = result.wire_bytes * 8.0 / kLinkBitsPerSecond * 1e9;
  result.interval_seconds = std::floor(tx_ns) * 1e-9;
  return result;
}

// The 100 Gb/s, 1 us point-to-point link between the two nodes.
ns3::NetDeviceContainer install_link(ns3::NodeContainer& nodes, std::uint32_t wire_bytes, std::uint64_t packets) {
  using namespace ns3;
  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", StringValue("100Gbps"));
  // The device MTU (an IP MTU) must fit one datagram, or IPv4 fragments it
  // (the default is 1500) and the link carries three frames per packet.
  p2p.SetDeviceAttribute("Mtu", UintegerValue(wire_bytes - kPppHeaderBytes));
  p2p.SetChannelAttribute("Delay", StringValue("1us"));
  // A queue that can hold the whole stream never drops, whatever the backlog.
  p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue(std::to_string(packets + 1) + "p"));
  return p2p.Install(nodes);
}

}  // namespace

Ns3Result run_ns3_p2p(std::uint64_t packets, std::uint32_t payload_bytes) {
  using namespace ns3;
  const auto t0 = std::chrono::steady_clock::now();
  Ns3Result result = describe_stream(payload_bytes);
  const auto interval_ns = static_cast<std::int64_t>(std::llround(result.interval_seconds * 1e9));
  ns3::NodeContainer nodes;
  nodes.Create(2);
  NetDeviceContainer devices = install_link(nodes, result.wire_bytes, packets);
  InternetStackHelper stack;
  stack.Install(nodes);
  Ipv4AddressHelper address;
  address.SetBase("10.1.1.0", "255.255.255.0");
  Ipv4InterfaceContainer interfaces = address.Assign(devices);

  constexpr std::uint16_t kPort = 4791;  // RoCEv2's port, for symmetry only
  UdpServerHelper server(kPort);
  ApplicationContainer server_apps = server.Install(nodes.Get(1));
  server_apps.Start(Seconds(0.0));

  UdpClientHelper client(interfaces.GetAddress(1), kPort);
  // UdpClient's PacketSize is the whole UDP payload (its 12-byte SeqTs header included).
  client.SetAttribute("MaxPackets", UintegerValue(static_cast<std::uint32_t>(packets)));
  client.SetAttribute("Interval", TimeValue(NanoSeconds(interval_ns)));
  client.SetAttribute("PacketSize", UintegerValue(payload_bytes));
  ApplicationContainer client_apps = client.Install(nodes.Get(0));
  client_apps.Start(Seconds(0.0));

  // Sent = packets the sender's device accepted for transmission;
  // received = packets the UdpServer application got.
  Counter tx;
  Counter rx;
  devices.Get(0)->TraceConnectWithoutContext("MacTx", MakeBoundCallback(&count_packet, &tx));
  Ptr<UdpServer> udp_server = DynamicCast<UdpServer>(server_apps.Get(0));
  udp_server->TraceConnectWithoutContext("Rx", MakeBoundCallback(&count_packet, &rx));

  // No Stop(): once the client has sent MaxPackets and the link has drained,
  // the event list is empty and Run() returns.
  result.setup_seconds = seconds_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  Simulator::Run();
  result.run_seconds = seconds_since(t1);

  result.packets_sent = tx.packets;
  result.packets_received = udp_server->GetReceived();
  result.packets_lost = udp_server->GetLost();
  result.sim_seconds = rx.last.GetSeconds();

  Simulator::Destroy();
  result.wall_seconds = seconds_since(t0);
  return result;
}

}  // namespace rnicsim::bench
