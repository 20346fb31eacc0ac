#include "cm/mad_agent.hpp"

#include <cstring>
#include <stdexcept>

namespace rnicsim::cm {

namespace {
constexpr uint64_t kSendTag = uint64_t{1} << 63;  // wr_id of a send; receives carry their slot
}

MadAgent::MadAgent(nic::Nic& nic, AgentMemory mem, MadSink& sink)
    : nic_(nic),
      mem_(mem),
      sink_(sink),
      sq_off_(0),
      rq_off_(sq_off_ + kSendSlots * nic::kMinWqeStride),
      cq_off_(rq_off_ + kRecvSlots * nic::kMinWqeStride),
      send_buf_off_(cq_off_ + (kSendSlots + kRecvSlots) * sizeof(nic::Cqe)),
      recv_buf_off_(send_buf_off_ + kSendSlots * kMadBytes),
      sq_(at(sq_off_, kSendSlots * nic::kMinWqeStride), kSendSlots),
      rq_(at(rq_off_, kRecvSlots * nic::kMinWqeStride), kRecvSlots),
      cq_(at(cq_off_, (kSendSlots + kRecvSlots) * sizeof(nic::Cqe)), kSendSlots + kRecvSlots) {
  if (mem.bytes.size() < kMemoryBytes) throw std::invalid_argument("MadAgent: memory too small");
  pd_ = nic.alloc_pd();
  cqn_ = nic.create_cq(mem.addr + cq_off_, kSendSlots + kRecvSlots, this);
  lkey_ = nic.reg_mr(pd_, mem.addr + send_buf_off_, kSendSlots * kMadBytes + kRecvSlots * kRecvSlotBytes,
                     nic::kAccessLocalWrite)
              .lkey;
  nic::QpInit init;
  init.type = nic::QpType::Ud;
  init.pd = pd_;
  init.send_cq = init.recv_cq = cqn_;
  init.sq = nic::WorkRing{mem.addr + sq_off_, kSendSlots};
  init.rq = nic::WorkRing{mem.addr + rq_off_, kRecvSlots};
  init.special_qpn = kGsiQpn;
  qpn_ = nic.create_qp(init);
  if (qpn_ != kGsiQpn) throw std::logic_error("MadAgent: the port already has a GSI QP");
  nic::QpAttr a;
  a.qkey = kGsiQkey;
  a.state = nic::QpState::Init;
  int rc = nic.modify_qp(qpn_, a, nic::kQpState | nic::kQpPkeyIndex | nic::kQpPort | nic::kQpQkey);
  a.state = nic::QpState::Rtr;
  if (rc == 0) rc = nic.modify_qp(qpn_, a, nic::kQpState);
  a.state = nic::QpState::Rts;
  if (rc == 0) rc = nic.modify_qp(qpn_, a, nic::kQpState | nic::kQpSqPsn);
  if (rc != 0) throw std::logic_error("MadAgent: QP1 would not come up");
  for (uint32_t s = 0; s < kRecvSlots; ++s) post_recv(s);
}

void MadAgent::send(const Mad& mad, const nic::AddressVector& to) {
  const auto bytes = encode(mad);
  if (in_flight_ == kSendSlots) {
    backlog_.emplace_back(bytes, to);
    return;
  }
  post_send(static_cast<uint32_t>(sq_.producer() % kSendSlots), bytes, to);
}

void MadAgent::post_send(uint32_t slot, const std::array<std::byte, kMadBytes>& bytes, const nic::AddressVector& to) {
  const uint64_t buf = send_buf_off_ + uint64_t{slot} * kMadBytes;
  std::memcpy(at(buf, kMadBytes).data(), bytes.data(), kMadBytes);
  nic::SendWqe w{};
  w.wr_id = kSendTag | slot;
  w.opcode = nic::WrOpcode::Send;
  w.send_flags = nic::kSendSignaled;
  w.num_sge = 1;
  w.sge[0] = nic::Sge{mem_.addr + buf, static_cast<uint32_t>(kMadBytes), lkey_};
  w.ud_remote_qpn = kGsiQpn;
  w.ud_remote_qkey = kGsiQkey;
  w.ud_ah = address_handle(to);
  ++in_flight_;
  ++sent_;
  nic_.ring_doorbell(nic::WorkQueue::send(qpn_), sq_.post(w));
}

void MadAgent::post_recv(uint32_t slot) {
  nic::RecvWqe r{};
  r.wr_id = slot;
  r.num_sge = 1;
  r.sge[0] = nic::Sge{mem_.addr + recv_buf_off_ + uint64_t{slot} * kRecvSlotBytes, kRecvSlotBytes, lkey_};
  nic_.ring_doorbell(nic::WorkQueue::recv(qpn_), rq_.post(r));
}

uint32_t MadAgent::address_handle(const nic::AddressVector& to) {
  std::array<uint8_t, 16> key = to.ip;
  if (key == std::array<uint8_t, 16>{}) {  // IB without GRH: the LID tells ports apart
    key[14] = static_cast<uint8_t>(to.lid >> 8);
    key[15] = static_cast<uint8_t>(to.lid);
  }
  auto it = ahs_.find(key);
  if (it == ahs_.end()) it = ahs_.emplace(key, nic_.create_ah(to)).first;
  return it->second;
}

void MadAgent::on_completion(nic::Cqn) {
  while (auto c = cq_.poll()) {
    if ((c->wr_id & kSendTag) != 0) {
      --in_flight_;
      if (c->status != nic::WcStatus::Success) ++send_errors_;
      if (!backlog_.empty()) {
        auto [bytes, to] = backlog_.front();
        backlog_.pop_front();
        post_send(static_cast<uint32_t>(sq_.producer() % kSendSlots), bytes, to);
      }
      continue;
    }
    received(*c);
  }
}

// A receive: the GRH area (for IPv4, the IPv4 header in its last 20 bytes),
// then the MAD. The slot goes back to the NIC once the MAD is decoded.
void MadAgent::received(const nic::Cqe& c) {
  const uint32_t slot = static_cast<uint32_t>(c.wr_id);
  const auto buf = at(recv_buf_off_ + uint64_t{slot} * kRecvSlotBytes, kRecvSlotBytes);
  std::optional<Mad> mad;
  MadSource from;
  from.lid = c.slid;
  if (c.status == nic::WcStatus::Success && c.byte_len >= 40 + kMadBytes) {
    mad = decode(buf.subspan(40, kMadBytes));
    const std::byte* grh = buf.data();
    // A GRH or IPv6 header starts with version 6; an IPv4 header sits in the
    // last 20 bytes, version 4 (as rdma-core tells them apart).
    if ((c.wc_flags & nic::kWcGrh) != 0 && (std::to_integer<uint8_t>(grh[0]) >> 4) == 6) {
      std::memcpy(from.gid.data(), grh + 8, 16);
    } else if ((c.wc_flags & nic::kWcGrh) != 0 && (std::to_integer<uint8_t>(grh[20]) >> 4) == 4) {
      from.gid[10] = from.gid[11] = 0xFF;
      std::memcpy(from.gid.data() + 12, grh + 20 + 12, 4);
    }
  }
  post_recv(slot);
  if (!mad) {
    ++malformed_;
    return;
  }
  ++received_;
  sink_.on_mad(*mad, from);
}

}  // namespace rnicsim::cm
