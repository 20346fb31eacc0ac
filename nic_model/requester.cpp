#include "nic_model/requester.hpp"

#include <algorithm>
#include <cstring>

#include "nic_model/nic.hpp"

namespace rnicsim::nic {
namespace {

using packet::Opcode;
using packet::Position;

// Packet opcode for a work request at a position in its message, RC numbering
// (UC adds 0x20). 0xFF: the position does not exist for that request.
struct OpcodeRow {
  WrOpcode wr;
  uint8_t first, middle, last, only;
};
constexpr OpcodeRow kOpcodes[] = {
    {WrOpcode::Send, 0x00, 0x01, 0x02, 0x04},
    {WrOpcode::SendWithImm, 0x00, 0x01, 0x03, 0x05},
    {WrOpcode::SendWithInv, 0x00, 0x01, 0x16, 0x17},
    {WrOpcode::RdmaWrite, 0x06, 0x07, 0x08, 0x0A},
    {WrOpcode::RdmaWriteWithImm, 0x06, 0x07, 0x09, 0x0B},
};

Opcode packet_opcode(QpType type, WrOpcode wr, Position pos) {
  if (type == QpType::Ud) return wr == WrOpcode::SendWithImm ? Opcode::UdSendOnlyWithImmediate : Opcode::UdSendOnly;
  for (const OpcodeRow& r : kOpcodes) {
    if (r.wr != wr) continue;
    const uint8_t v = pos == Position::First ? r.first : pos == Position::Middle ? r.middle
                    : pos == Position::Last ? r.last : r.only;
    return static_cast<Opcode>(type == QpType::Uc ? v + 0x20 : v);
  }
  return Opcode::RcSendOnly;
}

bool is_supported(QpType type, WrOpcode wr) {
  if (type == QpType::Ud) return wr == WrOpcode::Send || wr == WrOpcode::SendWithImm;
  if (type == QpType::Uc && wr == WrOpcode::SendWithInv) return false;
  return std::any_of(std::begin(kOpcodes), std::end(kOpcodes), [wr](const OpcodeRow& r) { return r.wr == wr; });
}

uint32_t message_length(const SendWqe& w) {
  if (w.send_flags & kSendInline) return w.inline_len;
  uint32_t n = 0;
  for (uint32_t i = 0; i < std::min<uint32_t>(w.num_sge, kMaxSge); ++i) n += w.sge[i].length;
  return n;
}

}  // namespace

Requester::Requester(Nic& nic) : nic_(nic), step_([this] { step(); }, "requester.step") {}

void Requester::accept_wqe(QpContext& qp, const SendWqe& wqe) {
  SendEntry e;
  e.wqe = wqe;
  e.length = message_length(wqe);
  e.signaled = qp.sq_sig_all || (wqe.send_flags & kSendSignaled);
  const bool bad = !is_supported(qp.type, wqe.opcode) || wqe.num_sge > kMaxSge ||
                   ((wqe.send_flags & kSendInline) && wqe.inline_len > kMaxInline) ||
                   (qp.type == QpType::Ud && e.length > qp.path_mtu);
  const uint32_t mtu = qp.path_mtu;
  e.packets = qp.type == QpType::Ud ? 1 : std::max<uint32_t>(1, (e.length + mtu - 1) / mtu);
  e.first_psn = qp.assign_psn;
  qp.assign_psn = qp.assign_psn + e.packets;
  if (qp.state == QpState::Err) {  // posted to (or fetched for) a broken QP
    nic_.cqe_writer().complete_send(qp, e, WcStatus::WrFlushErr);
    return;
  }
  if (bad) {
    // The WQE cannot be executed: it completes in error and the QP breaks.
    nic_.cqe_writer().complete_send(qp, e, WcStatus::LocQpOpErr);
    nic_.qp_fatal(qp, WcStatus::WrFlushErr);
    return;
  }
  qp.send_entries.push_back(e);
  kick(qp);
}

bool Requester::can_send(const QpContext& qp) const {
  if (qp.state != QpState::Rts || qp.rnr_waiting) return false;
  if (qp.next_entry >= qp.send_entries.size()) return false;
  if (qp.type == QpType::Rc && Psn::distance(qp.una, qp.next_psn) >= static_cast<int32_t>(nic_.params().max_inflight_psns))
    return false;
  return true;
}

void Requester::kick(QpContext& qp) {
  if (!qp.in_requester_list && can_send(qp)) {
    qp.in_requester_list = true;
    ready_.push_back(qp.qpn.value());
  }
  if (!ready_.empty() && !step_.scheduled()) nic_.scheduler().schedule(step_, std::max(nic_.now(), next_free_));
}

void Requester::port_ready() {
  if (!ready_.empty() && !step_.scheduled()) nic_.scheduler().schedule(step_, std::max(nic_.now(), next_free_));
}

void Requester::rewind(QpContext& qp, Psn psn) {
  for (size_t i = 0; i < qp.send_entries.size(); ++i) {
    const SendEntry& e = qp.send_entries[i];
    if (Psn::distance(e.first_psn, psn) >= 0 && Psn::distance(psn, e.last_psn()) >= 0) {
      const uint32_t resent = static_cast<uint32_t>(Psn::distance(psn, qp.next_psn));
      qp.retransmitted_packets += resent;
      nic_.stats().retransmitted_packets += resent;
      qp.next_entry = i;
      qp.next_packet = static_cast<uint32_t>(Psn::distance(e.first_psn, psn));
      qp.next_psn = psn;
      kick(qp);
      return;
    }
  }
}

void Requester::step() {
  while (!ready_.empty()) {
    if (pending_.size() >= nic_.params().tx_pipeline_packets) return;  // resumed by dma_done
    QpContext* qp = nic_.qp(ready_.front());
    if (qp == nullptr || !can_send(*qp)) {
      if (qp != nullptr) qp->in_requester_list = false;
      ready_.pop_front();
      continue;
    }
    if (!nic_.tx_has_room(pipeline_bytes_ + qp->path_mtu + 128)) return;  // resumed by port_ready
    ready_.pop_front();
    qp->in_requester_list = false;
    build_packet(*qp);
    kick(*qp);
    next_free_ = nic_.now() + nic_.cycles(nic_.params().requester_cycles_per_packet);
    if (!ready_.empty() && !step_.scheduled()) nic_.scheduler().schedule(step_, next_free_);
    return;
  }
}

void Requester::build_packet(QpContext& qp) {
  const SendEntry& e = qp.send_entries[qp.next_entry];
  const uint32_t index = qp.next_packet;
  const uint32_t offset = index * qp.path_mtu;
  const uint32_t len = std::min(qp.path_mtu, e.length - std::min(e.length, offset));
  const Position pos = e.packets == 1 ? Position::Only
                       : index == 0 ? Position::First
                       : index + 1 == e.packets ? Position::Last : Position::Middle;

  packet::PacketFields f = nic_.packet_template(qp);
  f.opcode = packet_opcode(qp.type, e.wqe.opcode, pos);
  f.psn = qp.next_psn.value();
  f.payload_length = len;
  f.solicited = (e.wqe.send_flags & kSendSolicited) && (pos == Position::Last || pos == Position::Only);
  const auto& info = packet::opcode_info(f.opcode);
  if (info.has(packet::Hdr::Reth)) f.reth = packet::RethFields{e.wqe.remote_addr, e.wqe.rkey, e.length};
  if (info.has(packet::Hdr::ImmDt)) f.imm = __builtin_bswap32(e.wqe.imm_data);  // WQE keeps network order
  if (info.has(packet::Hdr::Ieth)) f.ieth = packet::IethFields{e.wqe.imm_data};
  if (info.has(packet::Hdr::Deth)) f.deth = packet::DethFields{e.wqe.ud_remote_qkey, qp.qpn.value()};
  if (qp.type == QpType::Ud) f.dest_qp = e.wqe.ud_remote_qpn;
  // Ask for an ACK at the end of each message, and at least every N packets.
  f.ack_req = qp.type == QpType::Rc &&
              (pos == Position::Last || pos == Position::Only || (index + 1) % nic_.params().ack_coalesce_packets == 0);
  packet::derive_fields(f);

  PendingTx tx;
  tx.qpn = qp.qpn.value();
  tx.frame = nic_.frame_pool().acquire(packet::frame_length(f));
  auto layout = packet::write_headers(f, tx.frame.bytes());
  tx.layout = *layout;
  tx.frame.meta().priority = qp.remote.sl;
  tx.frame.meta().flow_id = qp.qpn.value();
  tx.frame.meta().created = nic_.now();
  std::span<std::byte> payload = tx.frame.bytes().subspan(tx.layout.payload_offset, len);

  if (e.wqe.send_flags & kSendInline) {
    std::memcpy(payload.data(), e.wqe.inline_data.data() + offset, len);
  } else {
    // Gather [offset, offset+len) of the message from the SGEs, checking each key.
    uint32_t skip = offset, placed = 0;
    for (uint32_t i = 0; i < e.wqe.num_sge && placed < len; ++i) {
      const Sge& s = e.wqe.sge[i];
      if (skip >= s.length) {
        skip -= s.length;
        continue;
      }
      const uint32_t n = std::min(s.length - skip, len - placed);
      uint64_t host = 0;
      if (nic_.translation().check_local(s.lkey, qp.pd, s.addr + skip, n, 0, host) != AccessCheck::Ok) {
        tx.failed = true;
        break;
      }
      nic_.dma().read(host, payload.subspan(placed, n), this, 0);
      ++tx.reads_left;
      placed += n;
      skip = 0;
    }
  }
  ++qp.tx_packets;
  ++packets_;
  ++qp.next_psn;
  if (++qp.next_packet == e.packets) {
    qp.next_packet = 0;
    ++qp.next_entry;
    tx.completes_entry = qp.type != QpType::Rc;
  }
  if (qp.type == QpType::Rc) nic_.completer().arm_timer(qp);
  pipeline_bytes_ += tx.frame.size();
  pending_.push_back(std::move(tx));
  drain();
}

void Requester::dma_done(uint64_t, bool ok) {
  // Completions come back in issue order: the oldest packet still reading owns it.
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (pending_[i].reads_left > 0) {
      --pending_[i].reads_left;
      if (!ok) pending_[i].failed = true;
      break;
    }
  }
  drain();
  port_ready();
}

void Requester::drain() {
  while (!pending_.empty() && pending_.front().reads_left == 0) {
    PendingTx tx = pending_.pop_front();
    pipeline_bytes_ -= tx.frame.size();
    QpContext* qp = nic_.qp(tx.qpn);
    if (qp == nullptr || qp->state == QpState::Err) continue;
    if (tx.failed) {
      nic_.qp_fatal(*qp, WcStatus::LocProtErr);
      continue;
    }
    packet::seal(tx.frame.bytes(), tx.layout);
    nic_.transmit(std::move(tx.frame));
    if (tx.completes_entry && !qp->send_entries.empty()) {
      const SendEntry done = qp->send_entries.pop_front();
      if (qp->next_entry > 0) --qp->next_entry;
      nic_.cqe_writer().complete_send(*qp, done, WcStatus::Success);
    }
  }
}

}  // namespace rnicsim::nic
