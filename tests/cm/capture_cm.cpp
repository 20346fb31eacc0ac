// A capture of connection management on the wire: two ports' CM agents set up
// a connection (REQ, REP, RTU), tear it down (DREQ, DREP), and one REQ for a
// service nobody listens on is rejected (REJ), every MAD a UD SEND between the
// ports' QP1s, captured at port a. usage: capture_cm OUT.pcap
#include <cstdio>

#include "cm/connection_manager.hpp"
#include "fabric/pcap_tap.hpp"
#include "nic_fixture.hpp"

using namespace rnicsim;

namespace {

struct Auto : cm::CmUser {
  cm::ConnectionManager* cm = nullptr;
  bool up = false, down = false, rejected = false;
  void on_request(cm::CommId id, const cm::Req&, const cm::MadSource&) override {
    cm::Rep r;
    r.local_qpn = packet::Qpn(0x22);
    r.starting_psn = packet::Psn(0x777);
    cm->accept(id, r);
  }
  void on_reply(cm::CommId id, const cm::Rep&) override { up = cm->ready_to_use(id); }
  void on_disconnected(cm::CommId) override { down = true; }
  void on_rejected(cm::CommId, const cm::Rej&) override { rejected = true; }
};

cm::AgentMemory memory_of(nictest::TestHost& h) {
  const uint64_t addr = h.memory.allocate(cm::MadAgent::kMemoryBytes, 4096);
  return {addr, h.memory.span(addr, cm::MadAgent::kMemoryBytes)};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: capture_cm OUT.pcap\n");
    return 2;
  }
  nictest::TestBed bed;
  fabric::PcapTap tap(argv[1], fabric::CaptureLinkType::Ethernet);
  bed.a().port->add_tap(&tap);
  auto resolve = [&](const cm::MadSource& s) -> std::optional<nic::AddressVector> {
    for (nictest::TestHost* h : {&bed.a(), &bed.b()})
      if (h->address.ip == s.gid) return h->address;
    return std::nullopt;
  };
  cm::ConnectionManager a(bed.sim, *bed.a().nic, memory_of(bed.a()), resolve);
  cm::ConnectionManager b(bed.sim, *bed.b().nic, memory_of(bed.b()), resolve);
  Auto client, server;
  client.cm = &a;
  server.cm = &b;
  const uint64_t service = cm::service_id(0x0106, 7174);
  b.listen(service, server);
  cm::PathTo path;
  path.av = bed.b().address;
  path.local_gid = bed.a().address.ip;
  path.remote_gid = bed.b().address.ip;
  cm::Req req;
  req.service_id = service;
  req.local_qpn = packet::Qpn(0x11);
  req.starting_psn = packet::Psn(0x123);
  req.responder_resources = req.initiator_depth = 1;
  req.remote_cm_response_timeout = req.local_cm_response_timeout = 20;
  req.max_cm_retries = 15;
  req.path_mtu = 3;
  req.retry_count = req.rnr_retry_count = 7;
  cm::IpHeader ip;
  ip.src_port = 0xC000;
  ip.src_addr = bed.a().address.ip;
  ip.dst_addr = bed.b().address.ip;
  cm::encode_ip_header(ip, std::span<uint8_t, cm::kIpHeaderBytes>(req.private_data.data(), cm::kIpHeaderBytes));
  const cm::CommId id = a.connect(req, path, client);
  bed.run();
  a.disconnect(id);
  bed.run();
  req.service_id = cm::service_id(0x0106, 9999);
  a.connect(req, path, client);
  bed.run();
  tap.flush();
  std::printf("%llu frames; connected %d, disconnected %d, rejected %d\n",
              static_cast<unsigned long long>(tap.frames()), client.up, client.down, client.rejected);
  return client.up && client.down && client.rejected && tap.frames() == 7 ? 0 : 1;
}
