// QP error handling: a QP that fails, or is moved to ERR, has its outstanding
// work completed (the oldest WQE with the error, the rest flushed); the host
// hears of affiliated and unaffiliated events.
#pragma once

#include "nic_model/nic_context.hpp"
#include "nic_model/ports.hpp"

namespace rnicsim::nic {

class AsyncEventListener {
public:
  virtual ~AsyncEventListener() = default;
  // `id` is a QPN, CQN or SRQ number, as the event says.
  virtual void on_async_event(AsyncEvent event, AsyncObject about) = 0;
};

class QpErrors final : public QpErrorPort {
public:
  explicit QpErrors(NicContext& ctx) : ctx_(ctx) {}
  void connect(CompletionPort& completions) { completions_ = &completions; }
  void set_listener(AsyncEventListener* l) { listener_ = l; }
  void qp_fatal(QpContext& qp, WcStatus status) override;
  void flush_recv(QpContext& qp, const RecvWqe& w) override;
  void async_event(AsyncEvent event, AsyncObject about) override;
  // The QP's outstanding WQEs complete (the oldest with `status`, the rest with
  // WR_FLUSH_ERR) and it is in ERR; `entering`: it was not before, which an SRQ's
  // consumer hears of (Last WQE Reached).
  void enter_error(QpContext& qp, WcStatus status, bool entering);

private:
  NicContext& ctx_;
  CompletionPort* completions_ = nullptr;
  AsyncEventListener* listener_ = nullptr;
};

}  // namespace rnicsim::nic
