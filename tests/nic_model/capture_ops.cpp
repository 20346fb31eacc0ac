// Writes a capture of every operation the NIC model carries (RC SEND, SEND with
// immediate and with invalidate, WRITE, WRITE with immediate, READ, both atomics;
// UC SEND and WRITE; UD SEND with and without immediate), once over a clean link
// and once over a lossy one, so that lint and tshark can check what the model
// puts on the wire. usage: capture_ops CLEAN.pcap LOSSY.pcap
#include <cstdio>
#include <cstring>

#include "fabric/pcap_tap.hpp"
#include "nic_fixture.hpp"

using namespace rnicsim;
using namespace rnicsim::nictest;

namespace {

int run(const char* clean_path, const char* lossy_path) {
  int failures = 0;
  for (double loss : {0.0, 0.02}) {
    fabric::PcapTap tap(loss == 0.0 ? clean_path : lossy_path, fabric::CaptureLinkType::Ethernet);
    TestBed bed(loss, loss, 5);
    bed.a().port->add_tap(&tap);
    QpOptions rc;
    rc.path_mtu = 1024;
    rc.timeout = 8;
    auto [x, y] = bed.pair(rc);
    fill_random(x->bytes(0, 1 << 20), 1);
    fill_random(y->bytes(1 << 20, 65536), 2);
    for (uint64_t i = 0; i < 8; ++i) y->post_recv(y->recv_wqe(i, 512 * 1024 + i * 8192, 8192));
    SendWqe w = x->write_wqe(1, 0, 5000, *y, 0);
    x->post_send(w);
    w.wr_id = 2;
    w.opcode = WrOpcode::RdmaWriteWithImm;
    w.imm_data = 0x01020304;
    x->post_send(w);
    SendWqe s = x->send_wqe(3, 0, 3000);
    x->post_send(s);
    s.wr_id = 4;
    s.opcode = WrOpcode::SendWithImm;
    s.imm_data = 0x0A0B0C0D;
    x->post_send(s);
    const MemoryRegion extra = y->nic().reg_mr(y->pd, y->buffer, 4096, kAccessLocalWrite | kAccessRemoteWrite);
    s.wr_id = 5;
    s.opcode = WrOpcode::SendWithInv;
    s.imm_data = extra.rkey.value();
    x->post_send(s);
    SendWqe r = x->write_wqe(6, 256 * 1024, 10000, *y, 1 << 20);
    r.opcode = WrOpcode::RdmaRead;
    x->post_send(r);
    SendWqe a = x->write_wqe(7, 300 * 1024, 8, *y, 2 << 20);
    a.opcode = WrOpcode::AtomicFetchAdd;
    a.remote_addr = y->buffer + 8;
    a.compare_add = 3;
    x->post_send(a);
    a.wr_id = 8;
    a.opcode = WrOpcode::AtomicCmpSwap;
    a.compare_add = 3;
    a.swap = 9;
    x->post_send(a);

    QpOptions uc;
    uc.type = QpType::Uc;
    auto [ux, uy] = bed.pair(uc);
    uy->post_recv(uy->recv_wqe(1, 0, 8192));
    ux->post_send(ux->write_wqe(1, 0, 6000, *uy, 65536));
    ux->post_send(ux->send_wqe(2, 0, 2000));

    QpOptions ud;
    ud.type = QpType::Ud;
    auto [dx, dy] = bed.pair(ud);
    for (uint64_t i = 0; i < 2; ++i) dy->post_recv(dy->recv_wqe(i, i * 4096, 4096));
    SendWqe d = dx->send_wqe(1, 0, 1500);
    d.ud_ah = dx->nic().create_ah(bed.b().address);
    d.ud_remote_qpn = dy->qpn;
    d.ud_remote_qkey = packet::Qkey(ud.qkey);
    dx->post_send(d);
    d.wr_id = 2;
    d.opcode = WrOpcode::SendWithImm;
    d.imm_data = 7;
    dx->post_send(d);
    bed.run();
    if (loss == 0.0) {
      for (auto* ep : {x.get(), ux.get(), dx.get()})
        for (const auto& c : ep->cqes)
          if (c.cqe.status != WcStatus::Success) ++failures;
      if (x->cqes.size() != 8 || y->cqes.size() != 4 || ux->cqes.size() != 2 || dy->cqes.size() != 2) ++failures;
    } else {
      // RC recovers everything despite loss; UC/UD may lose messages.
      if (x->cqes.size() != 8) ++failures;
      for (const auto& c : x->cqes)
        if (c.cqe.status != WcStatus::Success) ++failures;
    }
    tap.flush();
    std::printf("loss %.2f: %llu frames captured, RC retransmitted %llu packets\n", loss,
                static_cast<unsigned long long>(tap.frames()),
                static_cast<unsigned long long>(x->nic().stats().retransmitted_packets));
  }
  if (failures != 0) std::printf("FAIL: %d unexpected completions\n", failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: capture_ops CLEAN.pcap LOSSY.pcap\n");
    return 2;
  }
  return run(argv[1], argv[2]);
}
