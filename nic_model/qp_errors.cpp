#include "nic_model/qp_errors.hpp"

namespace rnicsim::nic {

void QpErrors::qp_fatal(QpContext& qp, WcStatus status) {
  if (qp.state == QpState::Err && status != WcStatus::WrFlushErr) return;
  enter_error(qp, status, qp.state != QpState::Err);
}

void QpErrors::enter_error(QpContext& qp, WcStatus status, bool entering) {
  qp.state = QpState::Err;
  ctx_.scheduler().cancel(*qp.retransmit_timer);
  if (qp.nak_timer) ctx_.scheduler().cancel(*qp.nak_timer);
  bool first = true;
  while (!qp.send_entries.empty()) {
    const SendEntry e = qp.send_entries.pop_front();
    completions_->complete_send(qp, e, first ? status : WcStatus::WrFlushErr);
    first = false;
  }
  qp.next_entry = 0;
  qp.next_packet = 0;
  qp.rd_atomic_inflight = 0;
  qp.responses_queued = 0;
  while (!qp.recv_wqes.empty()) flush_recv(qp, qp.recv_wqes.pop_front());
  // A QP on an SRQ will take no more of its WQEs: IBTA's Last WQE Reached event.
  if (entering && qp.uses_srq()) async_event(AsyncEvent::QpLastWqeReached, qp.qpn);
  ctx_.sim.log().log(sim::LogLevel::Info, ctx_.config.name, [&](std::ostream& os) {
    os << "QP " << qp.qpn.value() << " -> ERR (" << to_string(status) << ')';
  });
}

void QpErrors::flush_recv(QpContext& qp, const RecvWqe& w) {
  Cqe c{};
  c.wr_id = w.wr_id;
  c.status = WcStatus::WrFlushErr;
  c.opcode = WcOpcode::Recv;
  c.qp_num = qp.qpn;
  completions_->post(qp, qp.recv_cq, c, false);
}

void QpErrors::async_event(AsyncEvent event, AsyncObject about) {
  ctx_.sim.log().log(sim::LogLevel::Debug, ctx_.config.name, [&](std::ostream& os) {
    os << "async event " << static_cast<int>(event) << " on " << number_of(about);
  });
  if (listener_ != nullptr) listener_->on_async_event(event, about);
}

}  // namespace rnicsim::nic
