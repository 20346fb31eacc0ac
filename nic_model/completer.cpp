#include "nic_model/completer.hpp"

#include <array>
#include <cstring>


namespace rnicsim::nic {

sim::Duration rnr_timer_duration(uint8_t field) {
  // IBTA Vol. 1 table 45, in microseconds x 100 (0 means 655.36 ms).
  static constexpr std::array<int64_t, 32> kCentiUs = {
      65536, 1,   2,   3,   4,   6,    8,    12,   16,   24,   32,   48,   64,    96,    128,   192,
      256,   384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};
  return sim::Duration::ns(kCentiUs[field & 0x1F] * 10'000);
}

void Completer::arm_timer(QpContext& qp) {
  if (!qp.retransmit_timer || qp.timeout == 0) return;
  if (qp.una == qp.next_psn) {
    ctx_.scheduler().cancel(*qp.retransmit_timer);
    return;
  }
  if (!qp.retransmit_timer->scheduled())
    ctx_.scheduler().schedule(*qp.retransmit_timer, ctx_.now() + qp.ack_timeout);
}

bool Completer::retire_through(QpContext& qp, Psn psn) {
  // Every WQE whose last packet is at or before `psn` and has been sent is done,
  // up to a READ or atomic still missing its answer.
  bool moved = false;
  while (!qp.send_entries.empty() && qp.next_entry > 0) {
    const SendEntry& e = qp.send_entries.front();
    if (Psn::distance(e.last_psn(), psn) < 0) break;
    if (!e.responses_complete()) {
      // Acknowledged past a READ/atomic whose answer never came: the answer was
      // lost (IBTA 9.7.5.1.3, implicit NAK); ask again.
      if (!qp.response_gap_rewound) {
        qp.response_gap_rewound = true;
        ports_.send_queue->rewind(qp, e.first_psn + e.responses_placed);
      }
      return moved;
    }
    const SendEntry done = qp.send_entries.pop_front();
    --qp.next_entry;
    moved = true;
    ports_.completions->complete_send(qp, done, WcStatus::Success);
  }
  if (Psn::distance(qp.una, psn + 1) <= 0) return moved;
  qp.una = psn + 1;
  return true;
}

void Completer::progress(QpContext& qp) {
  qp.retries_left = qp.retry_cnt;
  qp.rnr_retries_left = qp.rnr_retry;
  qp.response_gap_rewound = false;
  ctx_.scheduler().cancel(*qp.retransmit_timer);
  arm_timer(qp);
  ports_.send_queue->kick(qp);
}

void Completer::place_response(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame) {
  const Psn psn(p.fields.psn);
  const auto& info = packet::opcode_info(p.fields.opcode);
  // Everything before this response is acknowledged by it.
  if (info.position == packet::Position::First || info.position == packet::Position::Only ||
      info.operation == packet::Operation::AtomicAcknowledge)
    retire_through(qp, psn - 1);
  if (qp.send_entries.empty() || qp.next_entry == 0) return;
  SendEntry& e = qp.send_entries.front();
  if (!e.reads_remote || psn != e.first_psn + e.responses_placed) {
    // Not the answer expected next (lost or reordered response): go back once.
    ++stale_responses_;
    if (!qp.response_gap_rewound && !e.responses_complete() && Psn::distance(e.first_psn + e.responses_placed, psn) > 0) {
      qp.response_gap_rewound = true;
      ports_.send_queue->rewind(qp, e.first_psn + e.responses_placed);
    }
    return;
  }
  const bool atomic = info.operation == packet::Operation::AtomicAcknowledge;
  if (atomic != (e.wqe.opcode != WrOpcode::RdmaRead)) {
    ports_.errors->qp_fatal(qp, WcStatus::BadRespErr);
    return;
  }
  // Where the returned bytes go in the WQE's local buffers.
  const uint64_t offset = atomic ? 0 : uint64_t{e.responses_placed} * qp.path_mtu;
  const uint64_t len = atomic ? 8 : p.fields.payload_length;
  if (!atomic && offset + len > e.length) {
    ports_.errors->qp_fatal(qp, WcStatus::BadRespErr);
    return;
  }
  SgeMap map;
  const AccessCheck c = ctx_.translation.map_sges(std::span(e.wqe.sge.data(), e.wqe.num_sge), qp.pd, offset, len,
                                                    kAccessLocalWrite, map);
  if (c != AccessCheck::Ok) {
    ports_.errors->qp_fatal(qp, c == AccessCheck::TooShort ? WcStatus::LocLenErr : WcStatus::LocProtErr);
    return;
  }
  if (atomic) {
    // The original value travels big-endian; host memory is little-endian.
    const uint64_t orig = p.fields.atomic_ack_eth->orig_remote_data;
    std::array<std::byte, 8> bytes;
    std::memcpy(bytes.data(), &orig, 8);
    ctx_.dma.scatter(std::span(map.pieces.data(), map.count), bytes, fabric::Frame(), qp.qpn);
  } else {
    ctx_.dma.scatter(std::span(map.pieces.data(), map.count), p.payload, std::move(frame), qp.qpn);
  }
  ++e.responses_placed;
  qp.accept_payload(len);
  qp.una = psn + 1;
  if (e.responses_complete()) {
    const SendEntry done = qp.send_entries.pop_front();
    --qp.next_entry;
    if (qp.rd_atomic_inflight > 0) --qp.rd_atomic_inflight;
    ports_.completions->complete_send(qp, done, WcStatus::Success);
  }
  progress(qp);
}

// An ACK of everything through `acked` (a NAK: of what came before the PSN
// it names). It measures the RTT if it covers the probe; a NAK that does not
// means the probe will be sent again, and its sample is dropped.
void Completer::tell_congestion(QpContext& qp, Psn acked, bool nak) {
  CongestionControl* cc = ctx_.congestion;
  if (cc == nullptr) return;
  CcAck a{acked, nak, {}};
  if (qp.rtt_probe && Psn::distance(qp.rtt_probe_psn, acked) >= 0) {
    a.rtt = ctx_.now() - qp.rtt_probe_sent;
    qp.rtt_probe = false;
  } else if (nak) {
    qp.rtt_probe = false;
  }
  cc->on_ack(*qp.cc, a, ctx_.now());
}

void Completer::receive(QpContext& qp, const packet::ParsedPacket& p, fabric::Frame& frame) {
  if (qp.type != QpType::Rc || qp.state == QpState::Err) return;
  const Psn psn = p.fields.psn;
  // Ignore responses for PSNs never sent or already acknowledged (stale or bogus).
  if (Psn::distance(psn, qp.next_psn) <= 0 || Psn::distance(qp.una, psn) < 0) {
    ++stale_responses_;
    return;
  }
  const auto op = packet::opcode_info(p.fields.opcode).operation;
  const bool nak = p.fields.aeth && p.fields.aeth->syndrome.is_nak();
  if (!nak && (op == packet::Operation::RdmaReadResponse || op == packet::Operation::AtomicAcknowledge)) {
    place_response(qp, p, frame);
    return;
  }
  if (!p.fields.aeth) return;
  const Syndrome syndrome = p.fields.aeth->syndrome;
  if (auto* t = ctx_.timeline)
    t->record({.kind = syndrome.kind() == AckKind::Ack ? TimelineKind::Ack : TimelineKind::Nak, .qpn = qp.qpn,
               .psn = psn, .code = syndrome.raw(), .start = ctx_.now()});
  (this->*kByKind[static_cast<size_t>(syndrome.kind())])(qp, psn, syndrome);
}

void Completer::on_ack(QpContext& qp, Psn psn, Syndrome) {
  ++acks_;
  tell_congestion(qp, psn, false);
  // Only an ACK that moves the QP on refills the retry counters: one that
  // stops at a READ still missing its answer must not rewind again.
  if (retire_through(qp, psn)) progress(qp);
}

// Stop sending, wait the responder's RNR time, then go back to the refused PSN.
void Completer::on_rnr_nak(QpContext& qp, Psn psn, Syndrome syndrome) {
  ++naks_;
  tell_congestion(qp, psn - 1, true);
  retire_through(qp, psn - 1);
  if (qp.rnr_retry != 7) {  // 7: retry for ever
    if (qp.rnr_retries_left == 0) {
      ports_.errors->qp_fatal(qp, WcStatus::RnrRetryExcErr);
      return;
    }
    --qp.rnr_retries_left;
  }
  qp.rnr_waiting = true;
  ctx_.scheduler().reschedule(*qp.retransmit_timer, ctx_.now() + rnr_timer_duration(syndrome.value()));
}

// A sequence error sends again from its PSN; any other NAK breaks the QP with
// the completion status its NAK code calls for.
void Completer::on_nak(QpContext& qp, Psn psn, Syndrome syndrome) {
  ++naks_;
  const NakCode code = syndrome.nak_code();
  tell_congestion(qp, psn - 1, true);
  retire_through(qp, psn - 1);
  if (code == NakCode::PsnSequenceError) {
    if (ctx_.params().loss_recovery == LossRecovery::SelectiveRepeat) {
      ports_.send_queue->resend(qp, psn);
    } else {
      ports_.send_queue->rewind(qp, psn);
    }
    ctx_.scheduler().cancel(*qp.retransmit_timer);
    arm_timer(qp);
    return;
  }
  static constexpr WcStatus kStatus[] = {WcStatus::BadRespErr, WcStatus::RemInvReqErr, WcStatus::RemAccessErr,
                                         WcStatus::RemOpErr, WcStatus::RemInvRdReqErr};
  const auto i = static_cast<size_t>(code);
  ports_.errors->qp_fatal(qp, i < std::size(kStatus) ? kStatus[i] : WcStatus::BadRespErr);
}

void Completer::on_timer(QpContext& qp) {
  if (qp.state != QpState::Rts) return;
  if (qp.rnr_waiting) {
    qp.rnr_waiting = false;
    ports_.send_queue->rewind(qp, qp.una);
    arm_timer(qp);
    return;
  }
  if (qp.una == qp.next_psn) return;
  ++timeouts_;
  if (auto* t = ctx_.timeline) t->record({.kind = TimelineKind::AckTimeout, .qpn = qp.qpn, .psn = qp.una,
                                            .start = ctx_.now()});
  if (qp.retries_left == 0) {
    ports_.errors->qp_fatal(qp, WcStatus::RetryExcErr);
    return;
  }
  --qp.retries_left;
  if (ctx_.params().loss_recovery == LossRecovery::SelectiveRepeat) {
    ports_.send_queue->resend(qp, qp.una);  // only the oldest: the responder keeps the rest
  } else {
    ports_.send_queue->rewind(qp, qp.una);
  }
  arm_timer(qp);
}

}  // namespace rnicsim::nic
