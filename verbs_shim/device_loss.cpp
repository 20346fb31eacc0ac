// What a program sees when the daemon, its device, goes away: what a hardware
// provider gives when the device dies. A thread waits for the daemon's end of
// the session socket to close; then every context gets IBV_EVENT_DEVICE_FATAL
// on its async fd, the work each QP had outstanding completes with
// IBV_WC_WR_FLUSH_ERR in its CQs, every completion channel is woken, and new
// posts fail with EIO. The segment stays mapped (the program holds the memfd),
// so the shim writes those CQEs itself.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "verbs_shim/shim.hpp"

namespace rnicsim::shim {
namespace {

std::atomic<bool> g_lost{false};
// Held while the loss is handled: an object the program lets go of is not
// freed while the handling still visits it.
std::mutex g_handling;

bool signaled(const Qp& q, uint64_t index) {
  return q.sq_sig_all || (q.sq.send_flags(index) & nic::kSendSignaled) != 0;
}

// Appends a flush CQE to `cq` (its poll_mutex held); false when the ring is full.
bool append_flush(Cq& cq, uint64_t wr_id, uint32_t qpn, ibv_wc_opcode opcode) {
  const uint64_t at = cq.visible_end();
  if (at - cq.consumer >= cq.entries) return false;
  nic::Cqe& slot = cq.ring[at % cq.entries];
  nic::Cqe c{};
  c.wr_id = wr_id;
  c.status = nic::WcStatus::WrFlushErr;
  c.opcode = static_cast<nic::WcOpcode>(opcode);
  c.qp_num = packet::Qpn(qpn);
  c.owner = slot.owner;  // still the old pass's: invalid until the store below
  slot = c;
  std::atomic_ref<uint8_t>(slot.owner).store(nic::cqe_owner_for(at, cq.entries), std::memory_order_release);
  return true;
}

// The work of `q` that has no CQE yet, polled or in its CQs, flushed into them.
void flush_qp(Qp& q) {
  auto* send_cq = reinterpret_cast<Cq*>(q.qp.send_cq);
  auto* recv_cq = reinterpret_cast<Cq*>(q.qp.recv_cq);
  std::unique_lock send_lock(send_cq->poll_mutex, std::defer_lock);
  std::unique_lock recv_lock(recv_cq->poll_mutex, std::defer_lock);
  if (recv_cq == send_cq)
    send_lock.lock();
  else
    std::lock(send_lock, recv_lock);
  std::scoped_lock queue_locks(q.sq_mutex, q.rq_mutex);
  uint64_t sq_done = q.sq_done.load(std::memory_order_relaxed);
  uint64_t rq_done = q.rq_completed.load(std::memory_order_relaxed);
  for (Cq* cq : {send_cq, recv_cq}) {
    for (uint64_t i = cq->consumer, end = cq->visible_end(); i < end; ++i) {
      const nic::Cqe& c = cq->ring[i % cq->entries];
      if (c.qp_num != packet::Qpn(q.qp.qp_num)) continue;
      if (static_cast<uint8_t>(c.opcode) & IBV_WC_RECV)
        rq_done += cq == recv_cq ? 1 : 0;
      else if (cq == send_cq)
        sq_done = send_completed(q, sq_done, c);
    }
    if (recv_cq == send_cq) break;
  }
  for (uint64_t i = sq_done; i < q.sq_producer; ++i)
    if (!append_flush(*send_cq, q.sq.wr_id(i), q.qp.qp_num, IBV_WC_SEND)) break;
  if (q.qp.srq == nullptr)
    for (uint64_t i = rq_done; i < q.rq_producer; ++i)
      if (!append_flush(*recv_cq, q.rq.wr_id(i), q.qp.qp_num, IBV_WC_RECV)) break;
}

void on_device_lost() {
  std::lock_guard<std::mutex> lock(g_handling);
  g_lost.store(true, std::memory_order_release);
  for_each_qp([](Qp& q) { flush_qp(q); });
  for_each_cq([](Cq& cq) {
    if (cq.cq.channel == nullptr) return;
    const int fd = reinterpret_cast<CompChannel*>(cq.cq.channel)->write_fd;
    [[maybe_unused]] const ssize_t n = ::write(fd, &cq.cookie, sizeof cq.cookie);
  });
  for_each_context([](Context& c) {
    const uint32_t record[2] = {IBV_EVENT_DEVICE_FATAL, 1};
    [[maybe_unused]] const ssize_t n = ::write(c.async_write_fd, record, sizeof record);
  });
}

}  // namespace

bool device_lost() { return g_lost.load(std::memory_order_acquire); }

void forget_device_loss() { g_lost.store(false, std::memory_order_release); }

void loss_handled() { std::lock_guard<std::mutex> lock(g_handling); }

uint64_t send_completed(const Qp& q, uint64_t done, const nic::Cqe& c) {
  const uint64_t producer = q.db->sq_producer.load(std::memory_order_acquire);
  if (c.status != nic::WcStatus::Success) {
    // Error completions come for every WQE from the failed one on, signaled
    // or not: the failed one is the first with this wr_id.
    for (uint64_t i = done; i < producer; ++i)
      if (q.sq.wr_id(i) == c.wr_id) return i + 1;
    return std::min(done + 1, producer);
  }
  for (uint64_t i = done; i < producer; ++i)
    if (signaled(q, i)) return i + 1;
  return done;
}

void watch_daemon(int fd) {
  std::thread([fd] {
    pollfd p{fd, POLLRDHUP, 0};
    for (;;) {
      const int n = ::poll(&p, 1, -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 || (p.revents & POLLNVAL)) return;  // the session was closed here
      if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) break;
    }
    on_device_lost();
  }).detach();
}

}  // namespace rnicsim::shim
