// rsockets (rsocket.h): stream sockets over RC connections of the CM. An
// rsocket is an id with an event channel of its own (its number is the
// channel's descriptor, unique in the process, as upstream's are), a QP, and
// registered rings of send and receive slots. Data goes as SENDs of up to a
// slot; the immediate says what a message is (data, end of stream, or an
// iomap's description); a receiver with no slot posted makes the sender's NIC
// retry (RNR, without limit), which is the flow control. riomap'ed memory is
// written with RDMA WRITE. This is the project's own protocol: both ends must
// be this library (upstream's rsockets speak another). A thread that waits
// spins briefly, then sleeps on the CQ's completion channel (Waiter, below).
#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace {

constexpr uint32_t kSlots = 32;              // send and receive slots per socket
constexpr uint32_t kSlotBytes = 64 * 1024;   // the largest message
enum Kind : uint32_t { kData = 0, kFin = 1, kIomap = 2 };

struct Iomap {
  uint64_t offset, addr, length;
  uint32_t rkey;
};

struct Rs {
  int fd = -1;  // the channel's descriptor: the socket's number
  rdma_event_channel* channel = nullptr;
  rdma_cm_id* id = nullptr;
  int domain = AF_INET;
  bool nonblocking = false, listening = false, connected = false, eof = false, shut_wr = false;
  int error = 0;  // SO_ERROR
  std::vector<std::byte> mem;  // send slots, then receive slots
  ibv_mr* mr = nullptr;
  ibv_cq* cq = nullptr;
  ibv_comp_channel* comp = nullptr;  // the CQ's: non-blocking, read by Waiter
  bool armed = false;                // the CQ is armed and its event not yet taken
  bool idle = false;                 // the last non-blocking call found nothing,
  std::chrono::steady_clock::time_point idle_since;  // nor any since this
  uint32_t send_free = kSlots;
  uint64_t send_next = 0;
  struct Received {
    uint32_t slot, length, offset;
  };
  std::deque<Received> received;  // data not yet read, in order
  std::vector<Iomap> remote_maps;  // what the peer riomap'ed
  std::vector<ibv_mr*> local_maps;
  std::deque<rdma_cm_id*> requests;  // listening: connection requests not yet accepted
  std::byte* send_slot(uint64_t i) { return mem.data() + (i % kSlots) * kSlotBytes; }
  std::byte* recv_slot(uint32_t i) { return mem.data() + (kSlots + i) * size_t{kSlotBytes}; }
};

std::mutex g_mutex;
std::map<int, std::unique_ptr<Rs>> g_sockets;

Rs* find(int s) {
  std::lock_guard lock(g_mutex);
  auto it = g_sockets.find(s);
  return it == g_sockets.end() ? nullptr : it->second.get();
}

int fail(int e) {
  errno = e;
  return -1;
}

Rs* make(rdma_event_channel* ch, rdma_cm_id* id, int domain) {
  auto rs = std::make_unique<Rs>();
  rs->fd = ch->fd;
  rs->channel = ch;
  rs->id = id;
  rs->domain = domain;
  Rs* raw = rs.get();
  std::lock_guard lock(g_mutex);
  g_sockets[raw->fd] = std::move(rs);
  return raw;
}

void post_recv(Rs& rs, uint32_t slot) {
  ibv_sge sge{reinterpret_cast<uint64_t>(rs.recv_slot(slot)), kSlotBytes, rs.mr->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  ibv_post_recv(rs.id->qp, &wr, &bad);
}

// The QP, its CQ and the slots; receives posted (before the connection is up,
// so nothing the peer sends finds none).
int make_qp(Rs& rs) {
  rs.mem.resize(size_t{2} * kSlots * kSlotBytes);
  ibv_pd* pd = ibv_alloc_pd(rs.id->verbs);
  if (pd == nullptr) return -1;
  rs.mr = ibv_reg_mr(pd, rs.mem.data(), rs.mem.size(), IBV_ACCESS_LOCAL_WRITE);
  rs.comp = ibv_create_comp_channel(rs.id->verbs);
  if (rs.comp == nullptr) return -1;
  fcntl(rs.comp->fd, F_SETFL, fcntl(rs.comp->fd, F_GETFL) | O_NONBLOCK);
  rs.cq = ibv_create_cq(rs.id->verbs, 2 * kSlots, nullptr, rs.comp, 0);
  if (rs.mr == nullptr || rs.cq == nullptr) return -1;
  ibv_qp_init_attr a{};
  a.send_cq = a.recv_cq = rs.cq;
  a.qp_type = IBV_QPT_RC;
  a.cap.max_send_wr = a.cap.max_recv_wr = kSlots;
  a.cap.max_send_sge = a.cap.max_recv_sge = 1;
  if (rdma_create_qp(rs.id, pd, &a) != 0) return -1;
  for (uint32_t s = 0; s < kSlots; ++s) post_recv(rs, s);
  return 0;
}

rdma_conn_param conn_param() {
  rdma_conn_param p{};
  p.responder_resources = p.initiator_depth = 1;
  p.retry_count = 7;
  p.rnr_retry_count = 7;  // a receiver with no slot posted: retry for ever
  return p;
}

// The next event on the socket's channel: waits unless `wait` is false (then
// nullptr and EAGAIN when there is none).
rdma_cm_event* next_event(Rs& rs, bool wait) {
  if (!wait) {
    pollfd p{rs.fd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) return errno = EAGAIN, nullptr;
  }
  rdma_cm_event* e = nullptr;
  return rdma_get_cm_event(rs.channel, &e) == 0 ? e : nullptr;
}

void note_event(Rs& rs, rdma_cm_event* e) {
  if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST) rs.requests.push_back(e->id);
  if (e->event == RDMA_CM_EVENT_DISCONNECTED) rs.eof = true, rs.connected = false;
  rdma_ack_cm_event(e);
}

// Whether the peer has disconnected (a DISCONNECTED event on the socket's
// channel): what it has not acknowledged it never will, as its QP is going.
bool peer_left(Rs& rs) {
  while (rdma_cm_event* e = next_event(rs, false)) note_event(rs, e);
  return !rs.connected;
}

// Takes what the CQ holds: frees send slots, queues received data, learns
// the peer's iomaps and the end of its stream. Returns false on an error
// completion (the connection is broken).
bool reap(Rs& rs) {
  ibv_wc wc[16];
  int n;
  while ((n = ibv_poll_cq(rs.cq, 16, wc)) > 0) {
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) {
        // Work flushed once the connection is down is no error of the stream.
        if (wc[i].status == IBV_WC_WR_FLUSH_ERR && rs.eof) continue;
        rs.error = ECONNRESET;
        rs.eof = true;
        continue;
      }
      if ((wc[i].opcode & IBV_WC_RECV) == 0) {
        ++rs.send_free;
        continue;
      }
      const auto slot = static_cast<uint32_t>(wc[i].wr_id);
      const uint32_t kind = ntohl(wc[i].imm_data);
      if (kind == kData) {
        rs.received.push_back({slot, wc[i].byte_len, 0});
        continue;
      }
      if (kind == kFin) rs.eof = true;
      if (kind == kIomap && wc[i].byte_len == sizeof(Iomap)) {
        Iomap m;
        std::memcpy(&m, rs.recv_slot(slot), sizeof m);
        rs.remote_maps.push_back(m);
      }
      post_recv(rs, slot);
    }
  }
  return rs.error == 0;
}

// How a thread waits for sockets: it spins for kSpin (a completion that is
// microseconds away comes without a sleep), then arms the CQs and sleeps in
// poll(2) on their completion channels, the CM channels and any other
// descriptors. A thread that spun for ever took whole scheduler slices from the
// daemon and the peer on a loaded machine (rstream's default run beside two
// busy loops on two CPUs did not finish in 150 s; 9 s quiet).
// The caller checks its condition, calls idle() when it does not hold, and
// checks again: idle() spins, arms or sleeps, one step per call.
class Waiter {
 public:
  static constexpr auto kSpin = std::chrono::microseconds(50);

  void idle(std::span<Rs* const> socks, std::span<const pollfd> others, int timeout_ms) {
    if (std::chrono::steady_clock::now() - start_ < kSpin) return;
    if (!armed_) {  // armed now: the caller's next check sees what came before
      arm(socks);
      armed_ = true;
      return;
    }
    sleep(socks, others, timeout_ms);
    armed_ = false;
  }
  void idle(Rs& rs, int timeout_ms = -1) {
    Rs* one[] = {&rs};
    idle(one, {}, timeout_ms);
  }

  static void arm(std::span<Rs* const> socks) {
    for (Rs* rs : socks)
      if (rs->cq != nullptr && !rs->armed) rs->armed = ibv_req_notify_cq(rs->cq, 0) == 0;
  }
  static void sleep(std::span<Rs* const> socks, std::span<const pollfd> others, int timeout_ms) {
    std::vector<pollfd> fds(others.begin(), others.end());
    for (Rs* rs : socks) {
      fds.push_back({rs->fd, POLLIN, 0});  // CM events: a disconnect, a request
      if (rs->comp != nullptr) fds.push_back({rs->comp->fd, POLLIN, 0});
    }
    poll(fds.data(), fds.size(), timeout_ms);
    for (Rs* rs : socks) take_comp_events(*rs);
  }

 private:
  static void take_comp_events(Rs& rs) {
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    while (rs.comp != nullptr && ibv_get_cq_event(rs.comp, &cq, &context) == 0) {
      ibv_ack_cq_events(cq, 1);
      rs.armed = false;
    }
  }
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  bool armed_ = false;
};

// A non-blocking call that found nothing, before it says EAGAIN. A program
// that calls again and again (rstream's default run does) spins as on
// hardware for kSpin; after that each such call sleeps up to 1 ms on the CQ's
// channel, so that the program leaves the CPU to the daemon and its peer, and
// a completion wakes it at once. Any call that finds something ends the run.
void pause_if_idle(Rs& rs) {
  const auto now = std::chrono::steady_clock::now();
  if (!rs.idle) {
    rs.idle = true;
    rs.idle_since = now;
    return;
  }
  if (now - rs.idle_since < Waiter::kSpin) return;
  Rs* one[] = {&rs};
  Waiter::arm(one);
  const uint32_t free_before = rs.send_free;
  if (!reap(rs) || !rs.received.empty() || rs.send_free != free_before || rs.eof) return;
  Waiter::sleep(one, {}, 1);
}

// Waits for a send slot (or, with `nonblocking`, says EAGAIN).
bool take_send_slot(Rs& rs, bool nonblocking) {
  Waiter w;
  while (rs.send_free == 0) {
    if (!reap(rs)) return errno = rs.error, false;
    if (rs.send_free > 0) break;
    if (nonblocking) return pause_if_idle(rs), errno = EAGAIN, false;
    w.idle(rs);
  }
  rs.idle = false;
  --rs.send_free;
  return true;
}

int post(Rs& rs, ibv_wr_opcode op, uint32_t kind, const void* data, uint32_t length, uint64_t remote = 0,
         uint32_t rkey = 0) {
  std::byte* slot = rs.send_slot(rs.send_next++);
  if (length > 0) std::memcpy(slot, data, length);
  ibv_sge sge{reinterpret_cast<uint64_t>(slot), length, rs.mr->lkey};
  ibv_send_wr wr{};
  wr.opcode = op;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.imm_data = htonl(kind);
  wr.wr.rdma.remote_addr = remote;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(rs.id->qp, &wr, &bad) == 0 ? 0 : fail(EIO);
}

// A receiver out of slots answers RNR: the CM's RTR leaves the RNR timer at
// its IBTA code 0 (655 ms); the stream's own is the shortest (0.01 ms).
void short_rnr_timer(Rs& rs) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;
  a.min_rnr_timer = 1;
  ibv_modify_qp(rs.id->qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER);
}

bool nonblocking(const Rs& rs, int flags) { return rs.nonblocking || (flags & MSG_DONTWAIT) != 0; }

}  // namespace

extern "C" {

// --- sockets ---

int rsocket(int domain, int type, int) {
  if (domain != AF_INET && domain != AF_INET6) return fail(EAFNOSUPPORT);
  if ((type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) != SOCK_STREAM) return fail(EPROTONOSUPPORT);  // datagrams: not yet
  rdma_event_channel* ch = rdma_create_event_channel();
  if (ch == nullptr) return -1;
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(ch, &id, nullptr, RDMA_PS_TCP) != 0) {
    const int err = errno;
    rdma_destroy_event_channel(ch);
    return fail(err);
  }
  Rs* rs = make(ch, id, domain);
  rs->nonblocking = (type & SOCK_NONBLOCK) != 0;
  return rs->fd;
}

int rbind(int socket, const struct sockaddr* addr, socklen_t) {
  Rs* rs = find(socket);
  if (rs == nullptr) return fail(EBADF);
  return rdma_bind_addr(rs->id, const_cast<sockaddr*>(addr));
}

int rlisten(int socket, int backlog) {
  Rs* rs = find(socket);
  if (rs == nullptr) return fail(EBADF);
  if (rdma_listen(rs->id, backlog) != 0) return -1;
  rs->listening = true;
  return 0;
}

int raccept(int socket, struct sockaddr* addr, socklen_t* addrlen) {
  Rs* l = find(socket);
  if (l == nullptr) return fail(EBADF);
  if (!l->listening) return fail(EINVAL);
  while (l->requests.empty()) {
    rdma_cm_event* e = next_event(*l, !l->nonblocking);
    if (e == nullptr) return -1;
    note_event(*l, e);
  }
  rdma_cm_id* id = l->requests.front();
  l->requests.pop_front();
  // The connection gets a channel of its own: its number is the new socket's.
  rdma_event_channel* ch = rdma_create_event_channel();
  if (ch == nullptr || rdma_migrate_id(id, ch) != 0) return -1;
  Rs* rs = make(ch, id, l->domain);
  rdma_conn_param p = conn_param();
  if (make_qp(*rs) != 0 || rdma_accept(id, &p) != 0) {
    rclose(rs->fd);
    return fail(ECONNABORTED);
  }
  for (;;) {
    rdma_cm_event* e = next_event(*rs, true);
    if (e == nullptr) return -1;
    const bool up = e->event == RDMA_CM_EVENT_ESTABLISHED;
    note_event(*rs, e);
    if (up) break;
    if (rs->eof) return fail(ECONNABORTED);
  }
  rs->connected = true;
  short_rnr_timer(*rs);
  if (addr != nullptr && addrlen != nullptr) rgetpeername(rs->fd, addr, addrlen);
  return rs->fd;
}

int rconnect(int socket, const struct sockaddr* addr, socklen_t) {
  Rs* rs = find(socket);
  if (rs == nullptr) return fail(EBADF);
  // The connection is made whole here even on a non-blocking socket, as a
  // connect that completes at once may be.
  auto wait_for = [&](rdma_cm_event_type want) {
    for (;;) {
      rdma_cm_event* e = next_event(*rs, true);
      if (e == nullptr) return false;
      const rdma_cm_event_type got = e->event;
      const int status = e->status;
      rdma_ack_cm_event(e);
      if (got == want) return true;
      errno = got == RDMA_CM_EVENT_REJECTED ? ECONNREFUSED : status < 0 ? -status : ETIMEDOUT;
      rs->error = errno;
      return false;
    }
  };
  if (rdma_resolve_addr(rs->id, nullptr, const_cast<sockaddr*>(addr), 2000) != 0 ||
      !wait_for(RDMA_CM_EVENT_ADDR_RESOLVED) || rdma_resolve_route(rs->id, 2000) != 0 ||
      !wait_for(RDMA_CM_EVENT_ROUTE_RESOLVED))
    return -1;
  if (make_qp(*rs) != 0) return -1;
  rdma_conn_param p = conn_param();
  if (rdma_connect(rs->id, &p) != 0 || !wait_for(RDMA_CM_EVENT_ESTABLISHED)) return -1;
  rs->connected = true;
  short_rnr_timer(*rs);
  return 0;
}

int rshutdown(int socket, int how) {
  Rs* rs = find(socket);
  if (rs == nullptr) return fail(EBADF);
  if ((how == SHUT_WR || how == SHUT_RDWR) && rs->connected && !rs->shut_wr) {
    if (!take_send_slot(*rs, false) || post(*rs, IBV_WR_SEND_WITH_IMM, kFin, nullptr, 0) != 0) return -1;
    rs->shut_wr = true;
  }
  return 0;
}

int rclose(int socket) {
  std::unique_ptr<Rs> rs;
  {
    std::lock_guard lock(g_mutex);
    auto it = g_sockets.find(socket);
    if (it == g_sockets.end()) return fail(EBADF);
    rs = std::move(it->second);
    g_sockets.erase(it);
  }
  if (rs->connected) {
    // What was sent is in the peer's memory before the disconnect (which
    // takes both QPs to ERR): every send acknowledged, the end of the stream
    // included, unless the peer has disconnected first (it had all it waited
    // for). A peer that stops reading holds this up for at most 10 s.
    if (!rs->shut_wr && take_send_slot(*rs, false)) post(*rs, IBV_WR_SEND_WITH_IMM, kFin, nullptr, 0);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    Waiter w;
    while (rs->send_free < kSlots && reap(*rs) && !peer_left(*rs) && std::chrono::steady_clock::now() < give_up)
      w.idle(*rs, 100);
    rdma_disconnect(rs->id);
  }
  for (rdma_cm_id* r : rs->requests) rdma_reject(r, nullptr, 0), rdma_destroy_id(r);
  for (ibv_mr* m : rs->local_maps) ibv_dereg_mr(m);
  ibv_pd* pd = rs->id->qp != nullptr ? rs->id->qp->pd : nullptr;
  rdma_destroy_qp(rs->id);
  if (rs->mr != nullptr) ibv_dereg_mr(rs->mr);
  if (rs->cq != nullptr) ibv_destroy_cq(rs->cq);
  if (rs->comp != nullptr) ibv_destroy_comp_channel(rs->comp);
  if (pd != nullptr) ibv_dealloc_pd(pd);
  rdma_destroy_id(rs->id);
  rdma_destroy_event_channel(rs->channel);
  return 0;
}

// --- data ---

ssize_t rsend(int socket, const void* buf, size_t len, int flags) {
  Rs* rs = find(socket);
  if (rs == nullptr) return fail(EBADF);
  if (!rs->connected || rs->shut_wr) return fail(rs->error != 0 ? rs->error : EPIPE);
  size_t done = 0;
  while (done < len) {
    if (!take_send_slot(*rs, nonblocking(*rs, flags) || done > 0)) break;
    const auto n = static_cast<uint32_t>(std::min<size_t>(len - done, kSlotBytes));
    if (post(*rs, IBV_WR_SEND_WITH_IMM, kData, static_cast<const std::byte*>(buf) + done, n) != 0) return -1;
    done += n;
  }
  return done > 0 ? static_cast<ssize_t>(done) : -1;
}

ssize_t rrecv(int socket, void* buf, size_t len, int flags) {
  Rs* rs = find(socket);
  if (rs == nullptr) return fail(EBADF);
  const bool nb = nonblocking(*rs, flags);
  const bool all = (flags & MSG_WAITALL) != 0;
  size_t done = 0;
  Waiter w;
  for (;;) {
    while (done < len && !rs->received.empty()) {
      Rs::Received& r = rs->received.front();
      const size_t n = std::min<size_t>(len - done, r.length - r.offset);
      std::memcpy(static_cast<std::byte*>(buf) + done, rs->recv_slot(r.slot) + r.offset, n);
      done += n;
      r.offset += static_cast<uint32_t>(n);
      if (r.offset == r.length) {
        post_recv(*rs, r.slot);
        rs->received.pop_front();
      }
    }
    if (done == len || (done > 0 && !all)) return rs->idle = false, static_cast<ssize_t>(done);
    if (!reap(*rs) && rs->received.empty()) return done > 0 ? static_cast<ssize_t>(done) : fail(rs->error);
    if (!rs->received.empty()) continue;
    if (rs->eof) return static_cast<ssize_t>(done);  // 0: the end of the stream
    if (nb && done == 0) return pause_if_idle(*rs), fail(EAGAIN);
    // A disconnect shows as an event on the channel.
    if (rdma_cm_event* e = next_event(*rs, false)) note_event(*rs, e);
    if (!rs->eof) w.idle(*rs);
  }
}

ssize_t rrecvfrom(int socket, void* buf, size_t len, int flags, struct sockaddr* src_addr, socklen_t* addrlen) {
  const ssize_t n = rrecv(socket, buf, len, flags);
  if (n >= 0 && src_addr != nullptr && addrlen != nullptr) rgetpeername(socket, src_addr, addrlen);
  return n;
}

ssize_t rsendto(int socket, const void* buf, size_t len, int flags, const struct sockaddr*, socklen_t) {
  return rsend(socket, buf, len, flags);  // a stream: the address is the peer's
}

ssize_t rread(int socket, void* buf, size_t count) { return rrecv(socket, buf, count, 0); }
ssize_t rwrite(int socket, const void* buf, size_t count) { return rsend(socket, buf, count, 0); }

ssize_t rreadv(int socket, const struct iovec* iov, int iovcnt) {
  ssize_t total = 0;
  for (int i = 0; i < iovcnt; ++i) {
    const ssize_t n = rrecv(socket, iov[i].iov_base, iov[i].iov_len, total > 0 ? MSG_DONTWAIT : 0);
    if (n < 0) return total > 0 ? total : n;
    total += n;
    if (static_cast<size_t>(n) < iov[i].iov_len) break;
  }
  return total;
}

ssize_t rwritev(int socket, const struct iovec* iov, int iovcnt) {
  ssize_t total = 0;
  for (int i = 0; i < iovcnt; ++i) {
    const ssize_t n = rsend(socket, iov[i].iov_base, iov[i].iov_len, 0);
    if (n < 0) return total > 0 ? total : n;
    total += n;
  }
  return total;
}

ssize_t rrecvmsg(int socket, struct msghdr* msg, int flags) {
  if (msg == nullptr) return fail(EINVAL);
  (void)flags;
  return rreadv(socket, msg->msg_iov, static_cast<int>(msg->msg_iovlen));
}

ssize_t rsendmsg(int socket, const struct msghdr* msg, int flags) {
  if (msg == nullptr) return fail(EINVAL);
  (void)flags;
  return rwritev(socket, msg->msg_iov, static_cast<int>(msg->msg_iovlen));
}

// --- readiness ---

namespace {

short ready(Rs& rs, short events) {
  short r = 0;
  if (rs.listening) {
    while (rdma_cm_event* e = next_event(rs, false)) note_event(rs, e);
    return !rs.requests.empty() && (events & POLLIN) ? POLLIN : 0;
  }
  reap(rs);
  if (rdma_cm_event* e = next_event(rs, false)) note_event(rs, e);
  if ((events & POLLIN) && (!rs.received.empty() || rs.eof)) r |= POLLIN;
  if ((events & POLLOUT) && rs.connected && rs.send_free > 0) r |= POLLOUT;
  if (rs.error != 0) r |= POLLERR;
  // Hung up: the peer is gone and nothing is left to read (until then the
  // data reads as POLLIN, as on a TCP socket).
  if (rs.eof && !rs.connected && rs.received.empty()) r |= POLLHUP;
  return r;
}

}  // namespace

int rpoll(struct pollfd* fds, nfds_t nfds, int timeout) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout);
  std::vector<Rs*> rs_at(nfds);  // each descriptor's rsocket, or null
  std::vector<Rs*> socks;
  std::vector<pollfd> plain;  // the descriptors that are not rsockets
  std::vector<nfds_t> plain_at;
  for (nfds_t i = 0; i < nfds; ++i) {
    rs_at[i] = find(fds[i].fd);
    if (rs_at[i] != nullptr) {
      socks.push_back(rs_at[i]);
    } else {
      plain.push_back(fds[i]);
      plain_at.push_back(i);
    }
  }
  Waiter w;
  for (;;) {
    int n = 0;
    for (nfds_t i = 0; i < nfds; ++i) fds[i].revents = rs_at[i] != nullptr ? ready(*rs_at[i], fds[i].events) : 0;
    if (!plain.empty() && poll(plain.data(), plain.size(), 0) > 0)  // a look without waiting
      for (size_t j = 0; j < plain.size(); ++j) fds[plain_at[j]].revents = plain[j].revents;
    for (nfds_t i = 0; i < nfds; ++i) n += fds[i].revents != 0;
    const auto now = std::chrono::steady_clock::now();
    if (n > 0 || timeout == 0 || (timeout > 0 && now >= end)) return n;
    const int left = timeout < 0 ? -1
                                 : static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(end - now).count());
    w.idle(socks, plain, left);
  }
}

int rselect(int nfds, fd_set* readfds, fd_set* writefds, fd_set* exceptfds, struct timeval* timeout) {
  std::vector<pollfd> p;
  for (int fd = 0; fd < nfds; ++fd) {
    short ev = 0;
    if (readfds != nullptr && FD_ISSET(fd, readfds)) ev |= POLLIN;
    if (writefds != nullptr && FD_ISSET(fd, writefds)) ev |= POLLOUT;
    if (exceptfds != nullptr && FD_ISSET(fd, exceptfds)) ev |= POLLERR;
    if (ev != 0) p.push_back({fd, ev, 0});
  }
  const int ms = timeout == nullptr ? -1 : static_cast<int>(timeout->tv_sec * 1000 + timeout->tv_usec / 1000);
  const int n = rpoll(p.data(), p.size(), ms);
  if (n < 0) return n;
  if (readfds != nullptr) FD_ZERO(readfds);
  if (writefds != nullptr) FD_ZERO(writefds);
  if (exceptfds != nullptr) FD_ZERO(exceptfds);
  int count = 0;
  for (const pollfd& q : p) {
    if (readfds != nullptr && (q.revents & (POLLIN | POLLHUP))) FD_SET(q.fd, readfds), ++count;
    if (writefds != nullptr && (q.revents & POLLOUT)) FD_SET(q.fd, writefds), ++count;
    if (exceptfds != nullptr && (q.revents & POLLERR)) FD_SET(q.fd, exceptfds), ++count;
  }
  return count;
}

// --- names and options ---

namespace {

// getpeername/getsockname's copy: as much of `a` as fits, and its length.
int copy_address(const sockaddr* a, struct sockaddr* addr, socklen_t* addrlen) {
  if (addr == nullptr || addrlen == nullptr) return fail(EFAULT);
  const socklen_t len = a->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  std::memcpy(addr, a, std::min(len, *addrlen));
  *addrlen = len;
  return 0;
}

}  // namespace

int rgetpeername(int socket, struct sockaddr* addr, socklen_t* addrlen) {
  Rs* rs = find(socket);
  return rs == nullptr ? fail(EBADF) : copy_address(rdma_get_peer_addr(rs->id), addr, addrlen);
}

int rgetsockname(int socket, struct sockaddr* addr, socklen_t* addrlen) {
  Rs* rs = find(socket);
  return rs == nullptr ? fail(EBADF) : copy_address(rdma_get_local_addr(rs->id), addr, addrlen);
}

// The options programs set are taken (buffer sizes, keepalive, no-delay, the
// RDMA queue sizes and inline size, iomap count, a route); they change
// nothing here but are read back as set.
int rsetsockopt(int socket, int level, int optname, const void* optval, socklen_t optlen) {
  Rs* rs = find(socket);
  if (rs == nullptr) return fail(EBADF);
  if (optval == nullptr && optlen > 0) return fail(EFAULT);
  (void)optname;
  if (level == SOL_SOCKET || level == IPPROTO_TCP || level == SOL_RDMA || level == IPPROTO_IPV6) return 0;
  return fail(ENOPROTOOPT);
}

int rgetsockopt(int socket, int level, int optname, void* optval, socklen_t* optlen) {
  Rs* rs = find(socket);
  if (rs == nullptr) return fail(EBADF);
  if (optval == nullptr || optlen == nullptr || *optlen < sizeof(int)) return fail(EINVAL);
  int value = 0;
  if (level == SOL_SOCKET && optname == SO_ERROR) {
    value = rs->error;
    rs->error = 0;
  } else if (level == SOL_SOCKET && (optname == SO_SNDBUF || optname == SO_RCVBUF)) {
    value = static_cast<int>(kSlots * kSlotBytes);
  } else if (level != SOL_SOCKET && level != IPPROTO_TCP && level != SOL_RDMA) {
    return fail(ENOPROTOOPT);
  }
  std::memcpy(optval, &value, sizeof value);
  *optlen = sizeof value;
  return 0;
}

int rfcntl(int socket, int cmd, ...) {
  Rs* rs = find(socket);
  if (rs == nullptr) return fail(EBADF);
  va_list ap;
  va_start(ap, cmd);
  const long arg = cmd == F_SETFL ? va_arg(ap, long) : 0;
  va_end(ap);
  if (cmd == F_GETFL) return rs->nonblocking ? O_NONBLOCK | O_RDWR : O_RDWR;
  if (cmd == F_SETFL) {
    rs->nonblocking = (arg & O_NONBLOCK) != 0;
    return 0;
  }
  return fail(EINVAL);
}

// --- direct writes into the peer's memory ---

off_t riomap(int socket, void* buf, size_t len, int prot, int, off_t offset) {
  Rs* rs = find(socket);
  if (rs == nullptr) return fail(EBADF);
  if (!rs->connected || (prot & PROT_WRITE) == 0 || offset < 0) return fail(EINVAL);
  ibv_mr* mr = ibv_reg_mr(rs->id->qp->pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (mr == nullptr) return -1;
  rs->local_maps.push_back(mr);
  const Iomap m{static_cast<uint64_t>(offset), reinterpret_cast<uint64_t>(buf), len, mr->rkey};
  if (!take_send_slot(*rs, false) || post(*rs, IBV_WR_SEND_WITH_IMM, kIomap, &m, sizeof m) != 0) return -1;
  return offset;
}

int riounmap(int socket, void* buf, size_t len) {
  Rs* rs = find(socket);
  if (rs == nullptr) return fail(EBADF);
  for (auto it = rs->local_maps.begin(); it != rs->local_maps.end(); ++it) {
    if ((*it)->addr != buf || (*it)->length != len) continue;
    ibv_dereg_mr(*it);
    rs->local_maps.erase(it);
    return 0;
  }
  return fail(EINVAL);
}

size_t riowrite(int socket, const void* buf, size_t count, off_t offset, int flags) {
  Rs* rs = find(socket);
  if (rs == nullptr) return static_cast<size_t>(fail(EBADF));
  const auto at = static_cast<uint64_t>(offset);
  const Iomap* m = nullptr;
  Waiter w;
  for (;;) {  // the peer's riomap may still be on its way
    for (const Iomap& r : rs->remote_maps)
      if (at >= r.offset && at - r.offset < r.length) m = &r;
    if (m != nullptr) break;
    if (!reap(*rs)) return static_cast<size_t>(fail(rs->error));
    if (rs->eof) return static_cast<size_t>(fail(EPIPE));
    w.idle(*rs);
  }
  const size_t room = std::min<size_t>(count, m->length - (at - m->offset));
  size_t done = 0;
  while (done < room) {
    if (!take_send_slot(*rs, nonblocking(*rs, flags) || done > 0)) break;
    const auto n = static_cast<uint32_t>(std::min<size_t>(room - done, kSlotBytes));
    if (post(*rs, IBV_WR_RDMA_WRITE, kData, static_cast<const std::byte*>(buf) + done, n,
             m->addr + (at - m->offset) + done, m->rkey) != 0)
      return static_cast<size_t>(-1);
    done += n;
  }
  return done > 0 ? done : static_cast<size_t>(-1);
}

}  // extern "C"
