#include "nic_model/cqe_writer.hpp"

#include "nic_model/nic.hpp"

namespace rnicsim::nic {
namespace {
WcOpcode wc_opcode_of(WrOpcode op) {
  switch (op) {
    case WrOpcode::RdmaWrite:
    case WrOpcode::RdmaWriteWithImm: return WcOpcode::RdmaWrite;
    case WrOpcode::RdmaRead: return WcOpcode::RdmaRead;
    case WrOpcode::AtomicCmpSwap: return WcOpcode::CompSwap;
    case WrOpcode::AtomicFetchAdd: return WcOpcode::FetchAdd;
    case WrOpcode::LocalInv: return WcOpcode::LocalInv;
    case WrOpcode::BindMw: return WcOpcode::BindMw;
    default: return WcOpcode::Send;
  }
}
}  // namespace

void CqeWriter::complete_send(QpContext& qp, const SendEntry& e, WcStatus status) {
  if (status == WcStatus::Success && !e.signaled) return;
  Cqe c{};
  c.wr_id = e.wqe.wr_id;
  c.status = status;
  c.opcode = wc_opcode_of(e.wqe.opcode);
  c.byte_len = status == WcStatus::Success ? e.length : 0;
  c.qp_num = qp.qpn.value();
  post(qp.send_cq, c);
}

void CqeWriter::post(uint32_t cqn, Cqe c) {
  CqContext* cq = nic_.cq(cqn);
  if (cq == nullptr || cq->entries == 0) return;
  c.owner = cqe_owner_for(cq->producer, cq->entries);
  const uint64_t addr = cq->base + (cq->producer % cq->entries) * sizeof(Cqe);
  ++cq->producer;
  nic_.dma().write_small(addr, bytes_of(c), this, cqn);
}

void CqeWriter::dma_done(uint64_t tag, bool ok) {
  CqContext* cq = nic_.cq(static_cast<uint32_t>(tag));
  if (cq == nullptr) return;
  if (!ok) {
    ++overflows_;
    return;
  }
  ++written_;
  ++cq->written;
  if (cq->listener != nullptr) cq->listener->on_completion(cq->cqn);
}

}  // namespace rnicsim::nic
